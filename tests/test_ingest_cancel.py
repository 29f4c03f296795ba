"""Cancelling an ingest between batches: the finished files stay, nothing is half-written, a rerun finishes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine
from engram.core.errors import IngestCancelled
from engram.core.events import EngineEvent, IngestFailed, IngestProgressed, IngestStarted
from engram.core.ingest.pipeline import _BATCH_FILES

from .conftest import wait_for, write_tree

FILES = _BATCH_FILES * 2 + 5  # three batches


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "notes", {f"f{i:03}.md": f"# File {i}\n\nThe number {i} is written here.\n"
                                           for i in range(FILES)})


def _status(engine: Engine) -> Any:
    return engine.call("status", {}).result


def test_a_cancelled_ingest_keeps_its_finished_files_and_a_rerun_finishes(engine: Engine, folder: Path) -> None:
    events: list[EngineEvent] = []
    engine.subscribe(events.append)
    engine.pause_indexing()  # the first batch is written, then the ingest waits at its checkpoint
    outcome: dict[str, BaseException | None] = {}

    def run() -> None:
        try:
            engine.call("ingest_path", {"path": str(folder)})
            outcome["error"] = None
        except BaseException as exc:  # the test inspects it
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    wait_for(lambda: any(isinstance(e, IngestProgressed) for e in events), 30, "the first batch")
    started = next(e for e in events if isinstance(e, IngestStarted))
    assert engine.running_ingests() == {started.ingest}
    assert engine.cancel_ingest(started.ingest)  # paused: the cancel wakes it at once
    worker.join(10)
    assert not worker.is_alive()
    error = outcome["error"]
    assert isinstance(error, IngestCancelled)
    assert "Ingest the same folder again" in error.message
    failed = [e for e in events if isinstance(e, IngestFailed)]
    assert [(e.ingest, e.title, e.cancelled) for e in failed] == [(started.ingest, "Ingest cancelled", True)]
    assert engine.running_ingests() == frozenset()
    assert not engine.cancel_ingest(started.ingest)  # ended: nothing to cancel
    assert _status(engine).sources == _BATCH_FILES  # exactly the finished batch, whole files only
    engine.resume_indexing()

    rerun = engine.call("ingest_path", {"path": str(folder)}).result
    assert (rerun.files_unchanged, rerun.files_indexed) == (_BATCH_FILES, FILES - _BATCH_FILES)
    status = _status(engine)
    assert status.sources == FILES
    chunks = dict((k.name, k.count) for k in status.by_kind)["chunk"]
    fresh = engine.call("ingest_path", {"path": str(folder), "project": "again"}).result
    assert chunks == fresh.chunks_written  # no file's passages were written twice


def test_cancel_of_an_unknown_ingest_changes_nothing(engine: Engine, folder: Path) -> None:
    assert not engine.cancel_ingest("no-such-ingest")
    result = engine.call("ingest_path", {"path": str(folder)}).result
    assert result.files_indexed == FILES
