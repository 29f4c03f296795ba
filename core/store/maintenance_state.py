"""What maintenance remembers of one workspace: the commits since its last pass and the versions it optimized.

Kept in the store's derived state (``store.derived.maintenance``), read and written on the writer thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class MaintenanceState:
    """One workspace's maintenance bookkeeping (writer thread only)."""

    #: Commits since the last maintenance; ``None`` until first counted.
    pending_commits: int | None = None
    #: Each table's version after its last optimize, and after its last one once writes went quiet.
    maintained_versions: dict[str, int] = field(default_factory=dict)
    settled_versions: dict[str, int] = field(default_factory=dict)
    #: Called after every commit once a maintenance schedule watches the workspace.
    on_commit: Callable[[], None] | None = None

    def committed(self, unmaintained: Callable[[], int]) -> None:
        """Count one commit (the first count starts from ``unmaintained()``, the commits earlier processes left)
        and tell the schedule."""
        if self.pending_commits is None:
            self.pending_commits = unmaintained()
        self.pending_commits += 1
        if self.on_commit is not None:
            self.on_commit()
