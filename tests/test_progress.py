"""Ingest progress: a redrawn bar with counts and rate on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

from engram.app.progress import ProgressPrinter
from engram.core.ingest.pipeline import IngestProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_one_redrawn_line_with_counts_rate_and_eta() -> None:
    out = Terminal()
    printer = ProgressPrinter(out, width=10)
    printer(IngestProgress(files_done=5, files_total=10, chunks=100, elapsed=2.0))
    printer(IngestProgress(files_done=10, files_total=10, chunks=200, elapsed=4.0))
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n")
    assert "[█████·····] 5/10 files · 100 chunks · 50 chunks/s · 2.5 files/s · about 2 s left" in text
    assert "[██████████] 10/10 files · 200 chunks · 50 chunks/s" in text


def test_pipes_and_logs_get_plain_lines() -> None:
    out = io.StringIO()
    ProgressPrinter(out)(IngestProgress(files_done=3, files_total=4, chunks=30, elapsed=1.5))
    assert out.getvalue() == "ingest: 3/4 files · 30 chunks · 20 chunks/s · 2.0 files/s\n"
