"""What one workspace's store derives from its tables and keeps while it lives, in one place.

Each value is kept with the table versions it was derived from and derived again once they move on; it goes
with its store, so a new store (of this workspace or another) never sees an old one's values. Nothing of the
kind is kept at module level.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from .maintenance_state import MaintenanceState

T = TypeVar("T")


class Derived:
    """One store's derived values (safe from any thread) and its maintenance bookkeeping."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, tuple[Hashable, Any]] = {}
        self._stamps: dict[str, Hashable] = {}
        self._last_exchange: dict[str, str] = {}
        self.maintenance = MaintenanceState()

    def cached(self, name: str, version: Hashable, derive: Callable[[], T]) -> T:
        """The value ``name`` derived at ``version``: kept from an earlier call at the same version, else
        ``derive()`` (then kept)."""
        with self._lock:
            hit = self._values.get(name)
            if hit is not None and hit[0] == version:
                return cast(T, hit[1])
        value = derive()
        with self._lock:
            self._values[name] = (version, value)
        return value

    def keep(self, name: str, make: Callable[[], T]) -> T:
        """The object ``name`` this store keeps while it lives (``make()`` on first use), for state its owner
        brings up to date itself and stamps with ``set_stamp``."""
        with self._lock:
            if name not in self._values:
                self._values[name] = (None, make())
            return cast(T, self._values[name][1])

    def moved_on(self, before: Hashable, after: Hashable) -> None:
        """The versions ``before`` became ``after`` without a row changing (maintenance compacted or indexed a
        table): what was stamped at ``before`` holds at ``after`` too."""
        with self._lock:
            for name, stamp in list(self._stamps.items()):
                if stamp == before:
                    self._stamps[name] = after

    def stamp(self, name: str) -> Hashable | None:
        """The versions recorded for ``name`` by ``set_stamp`` (``None``: never)."""
        with self._lock:
            return self._stamps.get(name)

    def set_stamp(self, name: str, versions: Hashable) -> None:
        """Record that ``name`` (e.g. the digests) was brought up to date at ``versions``."""
        with self._lock:
            self._stamps[name] = versions

    def last_exchange(self, project: str) -> str | None:
        """The content of the latest exchange known in ``project`` (``None``: not known yet)."""
        with self._lock:
            return self._last_exchange.get(project)

    def remember_exchange(self, project: str, content: str, *, if_unknown: bool = False) -> None:
        """``content`` is the latest exchange of ``project`` (kept only where none is known, with ``if_unknown``)."""
        with self._lock:
            if if_unknown:
                self._last_exchange.setdefault(project, content)
            else:
                self._last_exchange[project] = content
