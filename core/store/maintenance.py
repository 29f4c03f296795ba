"""Maintenance that follows writes: a workspace written one note at a time stays as fast as a compacted one.

Every LanceDB commit (one ``store``, one fact) leaves a small fragment and a version behind; reads and
id-matching writes slow down with each one (measured: 630 single stores made hybrid search 15× slower).
The schedule counts each workspace's commits and queues its maintenance on the writer

- after ``every_commits`` commits (a burst of writes never goes long without it), or
- once ``idle_sec`` have passed without a write after any commit (the tail of a burst, and the odd note of
  a quiet day); this pass also removes the versions the burst's own passes had to keep for a while.

Maintenance runs as short steps (see ``steps``), each its own writer task, so
writes queued meanwhile run between steps instead of waiting for all of them; readers never wait (LanceDB
reads a consistent version while a new one is written). Versions older than ``keep_versions`` are removed,
which bounds the disk a long run of single writes uses.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from .fts import create_fts
from .workspace import WorkspaceStore
from .writer import Writer, WriterClosed, require_writer

logger = logging.getLogger(__name__)

#: Scalar (BTREE) indexes on the keys lookups filter by, built once a table holds ``_SCALAR_INDEX_MIN_ROWS``.
_SCALAR_INDEXES = {"memories": ("id", "source"), "edges": ("src", "dst"), "sources": ("source",), "facts": ("id",)}
_SCALAR_INDEX_MIN_ROWS = 5_000


@dataclass(frozen=True)
class MaintenancePolicy:
    """When maintenance runs. ``every_commits`` 0 turns the schedule off (maintenance then follows ingests only)."""

    every_commits: int = 32
    idle_sec: float = 30.0
    keep_versions: timedelta = timedelta(seconds=10)
    vector_index_min_rows: int = 5_000


class Plan(Protocol):
    def __call__(self, store: WorkspaceStore, vector_index_min_rows: int, keep_versions: timedelta, *,
                 settle: bool = False) -> list[Callable[[], None]]: ...


class MaintenanceSchedule:
    """Queues each workspace's maintenance on the engine's writer when its writes call for it. ``close`` it."""

    def __init__(self, writer: Writer, policy: Callable[[], MaintenancePolicy], plan: Plan | None = None) -> None:
        """``policy`` is read at every decision, so changed settings apply from the next write on; ``plan``
        gives a run's steps (default ``steps``; tests replace it at this seam)."""
        self._writer = writer
        self._policy = policy
        self._plan: Plan = plan or steps
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._last_commit: dict[int, tuple[WorkspaceStore, float]] = {}  # id(store) → (store, monotonic time)
        self._running: set[int] = set()
        self._closing = False
        self._runs = 0
        self._longest_step = 0.0
        self._step_seconds = 0.0
        self._idle = threading.Thread(target=self._idle_loop, name="engram-maintenance", daemon=True)
        self._idle.start()

    @property
    def runs(self) -> int:
        """How many maintenance runs have finished (tests and the benchmark read it)."""
        with self._lock:
            return self._runs

    def watch(self, store: WorkspaceStore) -> None:
        """Follow ``store``'s commits from now on."""
        store.derived.maintenance.on_commit = functools.partial(self.committed, store)

    def committed(self, store: WorkspaceStore) -> None:
        """One commit landed in ``store`` (called on the writer thread, so it only queues work)."""
        policy = self._policy()
        if policy.every_commits <= 0:
            return
        with self._lock:
            if self._closing:
                return
            self._last_commit[id(store)] = (store, time.monotonic())
            due = (store.derived.maintenance.pending_commits or 0) >= policy.every_commits and id(store) not in self._running
            if due:
                self._running.add(id(store))
            self._wake.notify()
        if due:
            self._start(store, policy, settle=False)

    def _start(self, store: WorkspaceStore, policy: MaintenancePolicy, *, settle: bool) -> None:
        try:
            self._writer.submit(self._begin, store, policy, settle)
        except WriterClosed:
            self._finished(store, again=False)

    def _begin(self, store: WorkspaceStore, policy: MaintenancePolicy, settle: bool) -> None:
        self._step(store, self._plan(store, policy.vector_index_min_rows, policy.keep_versions, settle=settle))

    def _step(self, store: WorkspaceStore, todo: list[Callable[[], None]]) -> None:
        """Run the first step, then queue the rest behind whatever was written meanwhile."""
        started = time.perf_counter()
        try:
            todo[0]()
        except Exception:  # top level of a background task: log it, and never leave the workspace marked running
            logger.exception("maintenance of workspace '%s' stopped", store.name)
            self._finished(store)
            return
        finally:
            self._record_step(time.perf_counter() - started)
        rest = todo[1:]
        if not rest:
            self._finished(store)
            return
        with self._lock:
            closing = self._closing
        if not closing:
            try:
                self._writer.submit(self._step, store, rest)
                return
            except WriterClosed:
                pass
        # Closing: finish here (the writer waits for its running task), so a short-lived process that
        # triggered maintenance leaves the workspace maintained rather than half-way.
        try:
            for step in rest:
                started = time.perf_counter()
                step()
                self._record_step(time.perf_counter() - started)
        except Exception:  # top level of a background task
            logger.exception("maintenance of workspace '%s' stopped", store.name)
        self._finished(store)

    def _record_step(self, seconds: float) -> None:
        with self._lock:
            self._longest_step = max(self._longest_step, seconds)
            self._step_seconds += seconds

    @property
    def step_seconds(self) -> tuple[float, float]:
        """(the longest single step, all steps together) in seconds: how long a write can wait, and the cost."""
        with self._lock:
            return self._longest_step, self._step_seconds

    def _finished(self, store: WorkspaceStore, *, again: bool = True) -> None:
        policy = self._policy()
        with self._lock:
            self._running.discard(id(store))
            self._runs += 1
            # Writes that outpaced the run (a full round of them landed while it ran, so none of their commits
            # could start one) get the next run now, not on the next write, which may never come.
            again = (again and not self._closing and policy.every_commits > 0
                     and (store.derived.maintenance.pending_commits or 0) >= policy.every_commits)
            if again:
                self._running.add(id(store))
            self._wake.notify_all()
        logger.debug("maintained workspace '%s'%s", store.name, "; another run is due" if again else "")
        if again:
            self._start(store, policy, settle=False)

    def _idle_loop(self) -> None:
        with self._lock:
            while not self._closing:
                policy = self._policy()
                now = time.monotonic()
                wait = policy.idle_sec
                due: list[WorkspaceStore] = []
                for key, (store, at) in list(self._last_commit.items()):
                    if key in self._running:
                        continue
                    if now - at >= policy.idle_sec:
                        del self._last_commit[key]
                        self._running.add(key)
                        due.append(store)
                    else:
                        wait = min(wait, policy.idle_sec - (now - at))
                if due:
                    self._lock.release()
                    try:
                        for store in due:
                            self._start(store, policy, settle=True)
                    finally:
                        self._lock.acquire()
                    continue
                self._wake.wait(timeout=max(wait, 0.05) if self._last_commit else None)

    @property
    def idle_pending(self) -> int:
        """Workspaces written since their last maintenance whose pass after ``idle_sec`` of quiet has not started."""
        with self._lock:
            return len(self._last_commit)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no maintenance is running or queued; ``False`` on timeout (tests, the benchmark)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(timeout=left)
            return True

    def close(self) -> None:
        """Stop scheduling (a maintenance already queued finishes when the writer closes). Idempotent."""
        with self._lock:
            self._closing = True
            self._wake.notify_all()
        self._idle.join(timeout=5)


# --------------------------------------------------------------------------------------- what is done


def maintain(store: WorkspaceStore, vector_index_min_rows: int,
             keep_versions: timedelta = timedelta(minutes=10)) -> None:
    """Every maintenance step at once, on the writer thread (after an ingest): see ``steps``."""
    for step in steps(store, vector_index_min_rows, keep_versions, settle=True):
        step()


def steps(store: WorkspaceStore, vector_index_min_rows: int, keep_versions: timedelta, *,
          settle: bool = False) -> list[Callable[[], None]]:
    """The steps that keep ``store``'s reads fast, each a short writer-thread task.

    First the indexes a workspace lacks (full text on content, scalar indexes on keys once a table is
    large, a vector index once ``vector_index_min_rows`` memories exist); then, per table changed since
    its last maintenance, LanceDB's ``optimize``: small fragments compacted, new rows folded into the
    indexes, versions older than ``keep_versions`` removed. Run apart, so writes queued meanwhile go
    between the steps. A failing step is logged and skipped: indexes only speed reads up, and every
    query also scans unindexed rows, so nothing is lost.

    ``settle`` (once writes have gone quiet): also optimize each table changed since the last settling
    pass, even if a pass since has compacted it, so that the versions a burst of writes left behind
    (kept then for readers of other processes) are removed once they are old enough.
    """
    state = store.derived.maintenance
    state.pending_commits = 0
    tables = _tables(store)
    seen = state.settled_versions if settle else state.maintained_versions

    def unchanged_rows(what: str, fn: Callable[[], object]) -> None:
        # Indexing and compacting move the memories table to a new version and change no row in it: what was
        # derived from the version before (the duplicate lookup's index) still holds.
        before = tables["memories"].version
        _guarded(store, what, fn)
        store.derived.moved_on(("memories", before), ("memories", tables["memories"].version))

    def indexes() -> None:
        unchanged_rows("creating indexes", lambda: _create_indexes(store, vector_index_min_rows))

    def optimize(name: str) -> Callable[[], None]:
        def step() -> None:
            table = tables[name]
            if seen.get(name) == table.version:
                return
            unchanged_rows(f"optimizing {name}", lambda: table.optimize(cleanup_older_than=keep_versions))
            state.maintained_versions[name] = table.version
            if settle:
                state.settled_versions[name] = table.version
        return step

    return [indexes, *(optimize(name) for name in tables)]


def _tables(store: WorkspaceStore) -> dict[str, Any]:
    """The store's LanceDB tables by name (maintenance works on the tables themselves)."""
    return {"memories": store._memories, "edges": store._edges, "sources": store._sources, "facts": store._facts,
            "digests": store._digests}


def _guarded(store: WorkspaceStore, what: str, fn: Callable[[], object]) -> None:
    require_writer()
    try:
        fn()
    except (OSError, ValueError, RuntimeError) as exc:
        logger.warning("maintenance of workspace '%s' failed while %s: %s", store.name, what, exc)


def _create_indexes(store: WorkspaceStore, vector_index_min_rows: int) -> None:
    tables = _tables(store)
    memories = tables["memories"]
    if not store.has_fts():
        create_fts(memories)
    for name, columns in _SCALAR_INDEXES.items():
        table = tables[name]
        if table.count_rows() < _SCALAR_INDEX_MIN_ROWS:
            continue
        have = {c for idx in table.list_indices() for c in idx.columns}
        for column in columns:
            if column not in have:
                table.create_scalar_index(column, index_type="BTREE")
    has_vector_index = any("vector" in idx.columns for idx in memories.list_indices())
    if not has_vector_index and memories.count_rows() >= vector_index_min_rows:
        memories.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ")
