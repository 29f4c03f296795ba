"""The one writer: every store write of an engine runs on this single thread, in submission order."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ..errors import StoreError

T = TypeVar("T")

#: The name of the one writer thread (the store checks it before every write).
WRITER_THREAD = "engram-writer"


class NotOnWriter(AssertionError):
    """A programming error: a store write ran outside the engine's one writer thread."""


def require_writer() -> None:
    """Raise ``NotOnWriter`` unless called on the engine's writer thread."""
    if threading.current_thread().name != WRITER_THREAD:
        raise NotOnWriter("store writes must run on the writer thread (Engine.writer)")


class WriterClosed(StoreError):
    """A write was submitted after ``Writer.close`` (a programming error, or a race with shutdown)."""

    title = "Engram is shutting down"


class Writer:
    """Serialises writes. ``run`` blocks the caller until its write is done and returns its result."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=WRITER_THREAD)
        # ThreadPoolExecutor names threads "<prefix>_0"; give the single worker the exact name the
        # store checks for.
        self._executor.submit(self._name_thread).result()

    @staticmethod
    def _name_thread() -> None:
        threading.current_thread().name = WRITER_THREAD

    def run(self, fn: Callable[..., T], *args: object) -> T:
        """Run ``fn(*args)`` on the writer thread; exceptions propagate to the caller."""
        return self.submit(fn, *args).result()

    def submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        """Queue ``fn(*args)`` behind the writes already queued and return at once.

        Raises:
            WriterClosed: the writer is closed (or closing).
        """
        try:
            return self._executor.submit(fn, *args)
        except RuntimeError as exc:  # "cannot schedule new futures after shutdown"
            raise WriterClosed("Engram is shutting down, so this write was not made; nothing was changed. "
                               "Try again once Engram runs.") from exc

    def close(self) -> None:
        """Finish queued writes and stop the thread."""
        self._executor.shutdown(wait=True)
