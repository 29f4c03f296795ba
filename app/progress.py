"""Showing ingest progress on a terminal: a redrawn bar on a TTY, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

from engram.core.events import IngestProgress


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


class DownloadPrinter:
    """Renders download ``Progress`` (bytes, rate, time left) to stderr: a bar on a TTY, lines otherwise."""

    def __init__(self, stream: TextIO | None = None, *, width: int = 28) -> None:
        self._stream = stream or sys.stderr
        self._tty = hasattr(self._stream, "isatty") and self._stream.isatty()
        self._width = width
        self._drawn = False
        self._last_line = -1

    def __call__(self, event: object) -> None:
        done, total = event.done, event.total  # type: ignore[attr-defined]
        rate = event.bytes_per_s / 2**20  # type: ignore[attr-defined]
        eta = event.eta_s  # type: ignore[attr-defined]
        size = f"{done / 2**20:,.1f} / {total / 2**20:,.1f} MB" if total else f"{done / 2**20:,.1f} MB"
        left = f" · {eta:.0f} s left" if eta is not None else ""
        text = f"{event.name}: {size} · {rate:.1f} MB/s{left}"  # type: ignore[attr-defined]
        if self._tty:
            filled = int(self._width * done / total) if total else 0
            self._stream.write(f"\r[{'█' * filled}{'·' * (self._width - filled)}] {text}\x1b[K")
            self._drawn = True
        else:
            tenth = int(10 * done / total) if total else -1
            if tenth == self._last_line:
                return
            self._last_line = tenth
            self._stream.write(text + "\n")
        self._stream.flush()

    def finish(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False
