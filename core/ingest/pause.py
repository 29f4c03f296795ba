"""Pausing and cancelling ingests between batches: what is written stays written, the next batch waits or
never starts.

Every ingest passes ``checkpoint`` after each batch it writes. A pause holds it there until ``resume``; a
cancel (of that ingest, by the id its ``IngestStarted`` event carried) makes ``checkpoint`` raise
``IngestCancelled`` at once, also while paused. Nothing is rolled back: the batches already written are
whole files, and running the same ingest again skips them as unchanged and finishes the rest.
"""

from __future__ import annotations

import threading

from ..errors import IngestCancelled


class IndexingGate:
    """Open by default; ``pause`` holds every ingest at its next checkpoint until ``resume``; ``cancel`` stops
    one. Thread-safe."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._paused = False
        self._running: set[str] = set()
        self._cancelled: set[str] = set()

    def pause(self) -> None:
        """Hold ingests after their current batch."""
        with self._changed:
            self._paused = True

    def resume(self) -> None:
        """Let held ingests continue."""
        with self._changed:
            self._paused = False
            self._changed.notify_all()

    @property
    def paused(self) -> bool:
        return self._paused

    def started(self, ingest: str) -> None:
        """Record that ``ingest`` runs (so it can be cancelled)."""
        with self._changed:
            self._running.add(ingest)

    def ended(self, ingest: str) -> None:
        """Forget ``ingest`` once it has stopped, however it stopped."""
        with self._changed:
            self._running.discard(ingest)
            self._cancelled.discard(ingest)

    def running(self) -> frozenset[str]:
        """The ids of the ingests running now."""
        with self._changed:
            return frozenset(self._running)

    def cancel(self, ingest: str) -> bool:
        """Stop ``ingest`` at its next checkpoint (at once if it is paused). Returns False when no ingest with
        that id runs (it has ended already, or never ran)."""
        with self._changed:
            if ingest not in self._running:
                return False
            self._cancelled.add(ingest)
            self._changed.notify_all()
            return True

    def checkpoint(self, ingest: str) -> None:
        """Between two batches of ``ingest``: return at once when open; block while paused.

        Raises:
            IngestCancelled: ``ingest`` was cancelled (before or while it waited here).
        """
        with self._changed:
            self._changed.wait_for(lambda: ingest in self._cancelled or not self._paused)
            if ingest in self._cancelled:
                raise IngestCancelled("The ingest was cancelled; the files it had finished stay remembered. "
                                      "Ingest the same folder again to finish it (finished files are skipped).")
