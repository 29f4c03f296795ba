"""Maintenance follows writes: a workspace written one note at a time stays compacted and fully searchable."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.ingest.records import note_row
from engram.core.store import Writer, inspection
from engram.core.store.derived import Derived
from engram.core.store.maintenance import MaintenancePolicy, MaintenanceSchedule
from engram.core.store.opening import open_workspace

from .conftest import HashingEmbedder


def settings(**store: object) -> Settings:
    return Settings.model_validate({"store": store})


def fragments(engine: Engine, table: str = "memories") -> int:
    return inspection.table(engine.store(), table).stats()["fragment_stats"]["num_fragments"]


def store_notes(engine: Engine, n: int, start: int = 0) -> list[str]:
    return [engine.call("store", {"content": f"exchange number {i} about topic{i % 7} and retries",
                                  "kind": "exchange"}).result.id for i in range(start, start + n)]


@pytest.fixture
def make_engine(paths: Paths) -> Iterator[Callable[..., Engine]]:
    opened: list[Engine] = []

    def make(**store: object) -> Engine:
        engine = Engine(paths, settings(**store), embedder=HashingEmbedder())
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.mark.slow
def test_single_writes_are_compacted_as_they_accumulate(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(maintenance_writes=8, maintenance_idle_sec=3600)
    ids = store_notes(engine, 60)
    assert engine.internals().maintenance.wait_idle(30)
    # Without maintenance the table would hold 60 fragments (one per store).
    assert engine.internals().maintenance.runs >= 7
    # What is left: the compacted fragment and fewer than a round (8) of writes since the last run began (how
    # many depends on how long runs took beside the writes: 4 when each ran between two writes).
    assert fragments(engine) <= 8
    assert fragments(engine, "edges") <= 8
    assert inspection.count(engine.store(), "memories") == 60
    found = engine.call("search", {"query": "exchange number 59", "limit": 3}).result
    assert ids[59] in [h.id for h in found.hits]


def test_without_the_schedule_fragments_pile_up(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(maintenance_writes=0)
    store_notes(engine, 20)
    assert engine.internals().maintenance.runs == 0
    assert fragments(engine) == 20


def test_the_tail_of_a_burst_is_maintained_once_writes_go_quiet(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(maintenance_writes=1000, maintenance_idle_sec=1)
    store_notes(engine, 5)
    assert fragments(engine) == 5
    deadline = threading.Event()
    for _ in range(100):  # bounded: at most 10 s
        if engine.internals().maintenance.runs >= 1:
            break
        deadline.wait(0.1)
    assert engine.internals().maintenance.runs >= 1
    assert engine.internals().maintenance.wait_idle(30)
    assert fragments(engine) == 1


def test_commits_left_by_an_earlier_process_count(paths: Paths) -> None:
    with Engine(paths, settings(maintenance_writes=0), embedder=HashingEmbedder()) as first:
        store_notes(first, 12)
        assert fragments(first) == 12
    with Engine(paths, settings(maintenance_writes=10, maintenance_idle_sec=3600), embedder=HashingEmbedder()) as later:
        store_notes(later, 1, start=12)  # one more write finds 12 unmaintained fragments: maintenance is due
        assert later.internals().maintenance.wait_idle(30)
        assert later.internals().maintenance.runs == 1
        assert fragments(later) == 1
        assert inspection.count(later.store(), "memories") == 13


def test_closing_mid_maintenance_finishes_it_and_loses_nothing(paths: Paths) -> None:
    engine = Engine(paths, settings(maintenance_writes=2, maintenance_idle_sec=3600), embedder=HashingEmbedder())
    store_notes(engine, 2)  # two commits (these notes name no entities, so no edges): maintenance is queued last
    engine.close()
    with Engine(paths, settings(maintenance_writes=0), embedder=HashingEmbedder()) as again:
        assert inspection.count(again.store(), "memories") == 2
        assert fragments(again) == 1


class FakeStore:
    """A store at the seam: a maintenance plan whose steps record their order and the first blocks until released."""

    name = "fake"

    def __init__(self, log: list[str], gate: threading.Event, started: threading.Event) -> None:
        self.derived = Derived()
        self.derived.maintenance.pending_commits = 0
        self.log = log
        self.gate = gate
        self.started = started

    def plan(self, store: object, vector_index_min_rows: int, keep_versions: timedelta, *,
             settle: bool = False) -> list[Callable[[], None]]:
        self.derived.maintenance.pending_commits = 0

        def first() -> None:
            self.log.append("step 1")
            self.started.set()
            assert self.gate.wait(10)

        return [first, lambda: self.log.append("step 2"), lambda: self.log.append("step 3")]


@contextmanager
def held_run(every_commits: int) -> Iterator[tuple[Writer, MaintenanceSchedule, FakeStore]]:
    """A writer and a schedule over a ``FakeStore`` with ``every_commits`` commits pending and a run started and
    held at its first step (``store.gate`` releases it)."""
    writer = Writer()
    store = FakeStore([], threading.Event(), threading.Event())
    schedule = MaintenanceSchedule(writer, lambda: MaintenancePolicy(every_commits=every_commits, idle_sec=3600),
                                   plan=store.plan)
    try:
        store.derived.maintenance.pending_commits = every_commits
        writer.run(schedule.committed, store)
        assert store.started.wait(10)
        yield writer, schedule, store
    finally:
        store.gate.set()
        schedule.close()
        writer.close()


def test_a_write_waits_for_one_maintenance_step_not_for_all_of_them() -> None:
    with held_run(1) as (writer, schedule, store):
        write = writer.submit(lambda: store.log.append("write"))
        store.gate.set()
        write.result(timeout=10)
        assert schedule.wait_idle(10)
        assert store.log == ["step 1", "write", "step 2", "step 3"]


def test_writes_that_outpace_a_run_get_the_next_run_when_it_ends() -> None:
    with held_run(2) as (_writer, schedule, store):
        for _ in range(3):  # a full round of commits while the run is held at its first step: none can start one
            store.derived.maintenance.pending_commits += 1
            schedule.committed(store)
        store.started.clear()
        store.gate.set()
        assert store.started.wait(10), "the next run starts when this one ends, without waiting for another write"
        assert schedule.wait_idle(10)
        assert store.log == ["step 1", "step 2", "step 3"] * 2 and schedule.runs == 2


@pytest.mark.slow
def test_once_writes_go_quiet_the_versions_a_burst_kept_are_removed(tmp_path: Path) -> None:

    writer = Writer()
    store = writer.run(lambda: open_workspace("w", tmp_path / "w", dimensions=384, embed_model="m",
                                                   read_consistency=timedelta(0), create=True))
    schedule = MaintenanceSchedule(writer, lambda: MaintenancePolicy(every_commits=8, idle_sec=1.5,
                                                                     keep_versions=timedelta(seconds=1)))
    schedule.watch(store)
    embedder = HashingEmbedder()
    try:
        for i in range(40):  # a burst: its count-triggered passes must keep the last second's versions
            row = note_row(memory_id=f"{i:012d}", project="p", kind="note", type_="note", tags=[], title="",
                           content=f"note {i}", vector=embedder.embed([f"note {i}"])[0], now=datetime.now(UTC))
            writer.run(store.add_memories, [row], [])
        assert schedule.wait_idle(30)
        kept_by_the_burst = len(inspection.table(store, "memories").list_versions())
        runs = schedule.runs
        quiet = threading.Event()
        for _ in range(200):  # bounded: at most 20 s for the quiet pass
            if schedule.runs > runs:
                break
            quiet.wait(0.1)
        assert schedule.wait_idle(30) and schedule.runs == runs + 1
        assert kept_by_the_burst > 10 and len(inspection.table(store, "memories").list_versions()) <= 2
        assert inspection.count(store, "memories") == 40
    finally:
        schedule.close()
        writer.close()
