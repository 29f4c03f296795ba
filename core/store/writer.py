"""The one writer: every store write of an engine runs on this single thread, in submission order."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from .workspace import WRITER_THREAD

T = TypeVar("T")


class Writer:
    """Serialises writes. ``run`` blocks the caller until its write is done and returns its result."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=WRITER_THREAD)
        # ThreadPoolExecutor names threads "<prefix>_0"; give the single worker the exact name the
        # store checks for.
        self._executor.submit(self._name_thread).result()

    @staticmethod
    def _name_thread() -> None:
        import threading

        threading.current_thread().name = WRITER_THREAD

    def run(self, fn: Callable[..., T], *args: object) -> T:
        """Run ``fn(*args)`` on the writer thread; exceptions propagate to the caller."""
        return self._executor.submit(fn, *args).result()

    def close(self) -> None:
        """Finish queued writes and stop the thread."""
        self._executor.shutdown(wait=True)
