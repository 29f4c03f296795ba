"""Engine events: every ingest starts and ends (finished or failed) under one id, writes and deletions are
told, a failing listener breaks nothing, and subscribers come and go from any thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.errors import IngestError, ModelError
from engram.core.events import (
    EngineEvent,
    EventBus,
    IngestFailed,
    IngestFinished,
    IngestProgress,
    IngestProgressed,
    IngestStarted,
    MemoriesDeleted,
    MemoriesWritten,
)

from .conftest import HashingEmbedder, write_tree


def recorder(engine: Engine) -> list[tuple[EngineEvent, int]]:
    """Every event the engine emits, with the thread it was emitted on."""
    seen: list[tuple[EngineEvent, int]] = []
    engine.subscribe(lambda event: seen.append((event, threading.get_ident())))
    return seen


def kinds(seen: list[tuple[EngineEvent, int]]) -> list[str]:
    return [type(event).__name__ for event, _ in seen]


def test_an_ingest_starts_progresses_and_finishes_under_one_id(paths: Paths, home: Path) -> None:
    folder = write_tree(home / "notes", {f"n{i:02}.md": f"# Note {i}\n\nTopic {i}." for i in range(30)})
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        seen = recorder(engine)
        engine.call("ingest_path", {"path": str(folder), "project": "notes"})
    assert kinds(seen) == ["IngestStarted", "IngestProgressed", "IngestProgressed", "IngestFinished"]
    started, finished = seen[0][0], seen[-1][0]
    assert isinstance(started, IngestStarted) and isinstance(finished, IngestFinished)
    assert started.workspace == "default" and started.project == "notes" and started.root == str(folder)
    assert {event.ingest for event, _ in seen} == {started.ingest}
    assert finished.files_indexed == 30 and finished.chunks_written >= 30
    assert [e.progress.files_done for e, _ in seen if isinstance(e, IngestProgressed)] == [24, 30]
    assert {thread for _, thread in seen} == {threading.get_ident()}, "told on the thread that ingested"


def test_a_text_ingest_has_its_events_too(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        seen = recorder(engine)
        engine.call("ingest_content", {"content": "A transcript about rivers.", "title": "talk"})
    assert kinds(seen) == ["IngestStarted", "IngestFinished"]
    assert seen[0][0].root == "content:talk"  # type: ignore[union-attr]


class FailingEmbedder(HashingEmbedder):
    """Embeds the first ``good`` batches, then fails as a model that stopped answering would."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good

    def embed(self, texts: Any) -> Any:
        if len(self.calls) >= self.good:
            raise ModelError("The embedding model stopped answering; restart Engram.")
        return super().embed(texts)


def test_an_ingest_that_fails_midway_says_so_and_keeps_what_it_wrote(paths: Paths, home: Path) -> None:
    folder = write_tree(home / "notes", {f"n{i:02}.md": f"# Note {i}\n\nTopic {i}." for i in range(30)})
    with Engine(paths, Settings(), embedder=FailingEmbedder(good=1)) as engine:
        seen = recorder(engine)
        with pytest.raises(ModelError, match="stopped answering"):
            engine.call("ingest_path", {"path": str(folder)})
        assert engine.call("status").result.sources == 24, "the first batch stays written"
    assert kinds(seen)[0] == "IngestStarted" and kinds(seen)[-1] == "IngestFailed"
    failed = seen[-1][0]
    assert isinstance(failed, IngestFailed) and failed.ingest == seen[0][0].ingest  # type: ignore[union-attr]
    assert failed.title == "Model unavailable" and "stopped answering" in failed.message


def test_an_ingest_without_a_model_fails_with_the_models_reason(paths: Paths, home: Path) -> None:
    folder = write_tree(home / "notes", {"a.md": "# A\n\nText."})

    def no_model() -> Any:
        raise ModelError("The bundled embedding model is missing; reinstall Engram.")

    with Engine(paths, Settings(), embedder_loader=no_model) as engine:
        seen = recorder(engine)
        with pytest.raises(ModelError):
            engine.call("ingest_path", {"path": str(folder)})
    assert kinds(seen) == ["IngestStarted", "IngestFailed"]
    assert "missing" in seen[-1][0].message  # type: ignore[union-attr]


def test_a_refused_path_starts_no_ingest(paths: Paths, tmp_path: Path) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        seen = recorder(engine)
        with pytest.raises(IngestError):
            engine.call("ingest_path", {"path": "/"})
    assert seen == []


def test_writes_and_deletions_are_told(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        seen = recorder(engine)
        stored = engine.call("store", {"content": "We chose SQLite for the cache.", "workspace": "team"}).result
        engine.call("kg_edit", {"action": "add", "subject": "cache", "predicate": "uses", "object": "SQLite"})
        engine.call("delete", {"ids": [stored.id], "workspace": "team"})
        engine.call("ingest_content", {"content": "Rivers and lakes.", "title": "water"})
        engine.call("delete", {"source": "content:water"})
    events = [event for event, _ in seen if not isinstance(event, (IngestStarted, IngestFinished))]
    assert events == [MemoriesWritten("team", "store", 1), MemoriesWritten("default", "kg_edit", 1),
                      MemoriesDeleted("team", 1), MemoriesDeleted("default", 1, source="content:water")]


def test_a_failing_listener_breaks_neither_the_call_nor_the_other_listeners(paths: Paths,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        def broken(event: EngineEvent) -> None:
            raise RuntimeError("a listener's bug")

        engine.subscribe(broken)
        seen = recorder(engine)
        out = engine.call("store", {"content": "Still stored."})
    assert out.result.id and kinds(seen) == ["MemoriesWritten"]
    assert "an engine event listener failed on MemoriesWritten" in caplog.text


def test_subscribers_come_and_go_from_any_thread_while_events_flow() -> None:
    bus = EventBus()
    heard = [0]
    lock = threading.Lock()
    stop = threading.Event()
    event = IngestProgressed("i-1", "default", IngestProgress(1, 2, 3, 0.1))

    def count(_: EngineEvent) -> None:
        with lock:
            heard[0] += 1

    def churn() -> None:
        while not stop.is_set():
            unsubscribe = bus.subscribe(count)
            unsubscribe()
            unsubscribe()  # idempotent

    def emit() -> None:
        for _ in range(2000):
            bus.emit(event)

    steady = bus.subscribe(count)
    churners = [threading.Thread(target=churn) for _ in range(3)]
    emitters = [threading.Thread(target=emit) for _ in range(3)]
    for t in churners + emitters:
        t.start()
    for t in emitters:
        t.join()
    stop.set()
    for t in churners:
        t.join()
    steady()
    assert heard[0] >= 6000, "the steady subscriber heard every event"
    before = heard[0]
    bus.emit(event)
    assert heard[0] == before, "nobody listens after unsubscribing"
