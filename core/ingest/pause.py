"""Pausing ingests between batches: what is written stays written, the next batch waits."""

from __future__ import annotations

import threading


class IndexingGate:
    """Open by default; ``pause`` holds every ingest that passes ``wait`` until ``resume``. Thread-safe."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._open.set()

    def pause(self) -> None:
        """Hold ingests after their current batch."""
        self._open.clear()

    def resume(self) -> None:
        """Let held ingests continue."""
        self._open.set()

    @property
    def paused(self) -> bool:
        return not self._open.is_set()

    def wait(self) -> None:
        """Return at once when open; otherwise block until ``resume``."""
        self._open.wait()
