"""Showing ingest progress on a terminal: a redrawn bar on a TTY, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

from engram.core.ingest.pipeline import IngestProgress


class ProgressPrinter:
    """Renders ``IngestProgress`` events to ``stream`` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None, *, width: int = 28) -> None:
        self._stream = stream or sys.stderr
        self._tty = hasattr(self._stream, "isatty") and self._stream.isatty()
        self._width = width
        self._drawn = False

    def __call__(self, event: IngestProgress) -> None:
        rate = event.chunks / event.elapsed if event.elapsed > 0 else 0.0
        files_rate = event.files_done / event.elapsed if event.elapsed > 0 else 0.0
        remaining = (event.files_total - event.files_done) / files_rate if files_rate else 0.0
        counts = (f"{event.files_done}/{event.files_total} files · {event.chunks} chunks · "
                  f"{rate:.0f} chunks/s · {files_rate:.1f} files/s")
        if self._tty:
            done = int(self._width * event.files_done / max(event.files_total, 1))
            bar = "█" * done + "·" * (self._width - done)
            eta = f" · about {remaining:.0f} s left" if event.files_done < event.files_total else ""
            self._stream.write(f"\r[{bar}] {counts}{eta}\x1b[K")
            self._drawn = True
            if event.files_done >= event.files_total:
                self.finish()
        else:
            self._stream.write(f"ingest: {counts}\n")
        self._stream.flush()

    def finish(self) -> None:
        """End the redrawn line (call once after the last event)."""
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False
