"""What a tool's row function runs against: one workspace, and the engine's shared services."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..store import WorkspaceStore

if TYPE_CHECKING:
    from ..budget import Prepared
    from ..embedding import Embedder
    from ..engine import Engine
    from ..settings import Settings
    from ..store import Writer


@dataclass(frozen=True)
class Scope:
    """A workspace's store plus the engine it belongs to. Tools never see another workspace."""

    workspace: str
    store: WorkspaceStore
    engine: Engine
    #: Query vectors prepared for a batch under a run budget (recall prepares its plan's searches at once).
    prepared: Prepared | None = None

    @property
    def settings(self) -> Settings:
        return self.engine.settings

    @property
    def writer(self) -> Writer:
        return self.engine.writer

    def embedder(self) -> Embedder:
        """The loaded embedding model (loaded on first use).

        Raises:
            ModelError: it cannot be loaded.
        """
        return self.engine.embedder()

    def embedder_or_none(self) -> Embedder | None:
        return self.engine.embedder_or_none()
