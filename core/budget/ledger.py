"""The run ledger: durable counters of each run's semantic query preparation.

One SQLite file beside each workspace's LanceDB tables (``<workspace>/run-ledger.sqlite3``), not a
LanceDB table, because a reservation is a read-check-write that two processes can race on for the
same run: SQLite runs it as one transaction across processes (``BEGIN IMMEDIATE`` takes the write
lock before the read) and, with ``synchronous=FULL``, a reservation is on disk when ``reserve``
returns, so a crash or ``kill -9`` right after cannot give the allowance back. LanceDB commits table
versions optimistically without multi-row transactions; a counter there would need a lock of our own
and could still lose an update. A row costs microseconds to read and one fsync to write.

The ledger holds no query text: a run is a hash of its id, and rows are counters and timestamps.
Times are wall-clock seconds (``time.time``) because they must mean the same in another process or
after a restart.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import BudgetRefused, LedgerError

LEDGER_FILE = "run-ledger.sqlite3"
SCHEMA_VERSION = 1
Outcome = Literal["done", "failed", "cancelled"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    owner TEXT NOT NULL,
    run_key TEXT NOT NULL,
    queries INTEGER NOT NULL,
    rounds INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    started_at REAL NOT NULL,
    deadline_at REAL NOT NULL,
    PRIMARY KEY (owner, run_key)
);
CREATE TABLE IF NOT EXISTS reservations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    run_key TEXT NOT NULL,
    round INTEGER NOT NULL,
    queries INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('reserved', 'done', 'failed', 'cancelled')),
    tokens_used INTEGER,
    created_at REAL NOT NULL,
    finished_at REAL
);
"""


@dataclass(frozen=True)
class Allowance:
    """A run's limits (``recall.run_budget``)."""

    max_queries: int = 4
    max_rounds: int = 2
    deadline_sec: float = 10.0
    max_tokens_per_query: int = 256


@dataclass(frozen=True)
class RunState:
    """What a run has spent. A run that never reserved has zero counts and no deadline."""

    queries: int = 0
    rounds: int = 0
    tokens: int = 0
    started_at: float | None = None
    deadline_at: float | None = None


@dataclass(frozen=True)
class Reservation:
    """Allowance taken for one preparation round; counted whether the work then succeeds or not."""

    id: int
    run_key: str
    round: int
    queries: int
    tokens: int
    deadline_at: float


def run_key(run: str) -> str:
    """The ledger's name for a run id (a hash: the ledger keeps no caller text)."""
    return hashlib.sha256(run.encode("utf-8")).hexdigest()[:32]


def refusal(state: RunState, queries: int, allowance: Allowance, now: float) -> str | None:
    """Why ``queries`` more cannot be prepared in a run at ``state``, or ``None`` when they fit.

    Pure: reads only the run's own state, calls no model.
    """
    if state.deadline_at is not None and now >= state.deadline_at:
        return f"the run's {allowance.deadline_sec:g} s preparation deadline has passed"
    if state.rounds + 1 > allowance.max_rounds:
        return f"the run has used its {allowance.max_rounds} preparation rounds"
    if state.queries + queries > allowance.max_queries:
        left = max(allowance.max_queries - state.queries, 0)
        return (f"{queries} quer{'y' if queries == 1 else 'ies'} do not fit the run's remaining allowance of "
                f"{left} of {allowance.max_queries}")
    return None


class RunLedger:
    """The ledger of one workspace. Thread-safe; safe to share between processes (SQLite locking).

    ``owner`` separates OS users sharing a data folder: one owner never reads or spends another's runs.
    """

    def __init__(self, folder: Path, owner: str, *, clock: Callable[[], float] = time.time) -> None:
        self.path = folder / LEDGER_FILE
        self.owner = owner
        self._clock = clock
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    db.close()
                    raise LedgerError(f"The run ledger {self.path} was written by a newer Engram (schema {version}); "
                                      "update Engram to use run budgets in this workspace.")
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            except sqlite3.Error as exc:
                raise LedgerError(f"The run ledger {self.path} cannot be opened: {exc}.") from exc
            self._db = db
        return self._db

    def now(self) -> float:
        """The ledger's clock (wall-clock seconds)."""
        return self._clock()

    def state(self, run: str) -> RunState:
        """What ``run`` has spent so far.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        with self._lock:
            try:
                row = self._connect().execute(
                    "SELECT queries, rounds, tokens, started_at, deadline_at FROM runs WHERE owner = ? AND run_key = ?",
                    (self.owner, run_key(run))).fetchone()
            except sqlite3.Error as exc:
                raise LedgerError(f"The run ledger {self.path} cannot be read: {exc}.") from exc
        return RunState(*row) if row else RunState()

    def reserve(self, run: str, queries: int, allowance: Allowance) -> Reservation:
        """Take ``queries`` queries and one round of ``run``'s allowance, durably, before any work.

        The check repeats inside the write transaction, so two processes cannot both spend the last
        of a run. The first reservation of a run starts its deadline.

        Raises:
            BudgetRefused: the request does not fit (nothing was recorded).
            LedgerError: the reservation could not be recorded (no work may follow).
        """
        key = run_key(run)
        tokens = queries * allowance.max_tokens_per_query
        with self._lock:
            db = self._connect()
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    now = self._clock()
                    row = db.execute("SELECT queries, rounds, tokens, started_at, deadline_at FROM runs "
                                     "WHERE owner = ? AND run_key = ?", (self.owner, key)).fetchone()
                    state = RunState(*row) if row else RunState()
                    if (reason := refusal(state, queries, allowance, now)) is not None:
                        db.execute("ROLLBACK")
                        raise BudgetRefused(reason)
                    deadline = state.deadline_at if state.deadline_at is not None else now + allowance.deadline_sec
                    db.execute(
                        "INSERT INTO runs (owner, run_key, queries, rounds, tokens, started_at, deadline_at) "
                        "VALUES (?, ?, ?, 1, ?, ?, ?) ON CONFLICT (owner, run_key) DO UPDATE SET "
                        "queries = queries + excluded.queries, rounds = rounds + 1, tokens = tokens + excluded.tokens",
                        (self.owner, key, queries, tokens, now, deadline))
                    cursor = db.execute(
                        "INSERT INTO reservations (owner, run_key, round, queries, tokens, state, created_at) "
                        "VALUES (?, ?, ?, ?, ?, 'reserved', ?)", (self.owner, key, state.rounds + 1, queries, tokens, now))
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise LedgerError(f"The run ledger {self.path} could not record a reservation: {exc}.") from exc
        return Reservation(id=int(cursor.lastrowid or 0), run_key=key, round=state.rounds + 1, queries=queries,
                           tokens=tokens, deadline_at=deadline)

    def finish(self, reservation: Reservation, outcome: Outcome, tokens_used: int = 0) -> None:
        """Record how a reserved round ended. The allowance stays spent whatever the outcome.

        Raises:
            LedgerError: the outcome could not be written (the counters are already durable).
        """
        with self._lock:
            try:
                self._connect().execute(
                    "UPDATE reservations SET state = ?, tokens_used = ?, finished_at = ? WHERE id = ? AND owner = ?",
                    (outcome, tokens_used, self._clock(), reservation.id, self.owner))
            except sqlite3.Error as exc:
                raise LedgerError(f"The run ledger {self.path} could not record an outcome: {exc}.") from exc

    def reservations(self, run: str) -> list[dict[str, object]]:
        """Every reservation of ``run``, oldest first (for status and tests)."""
        with self._lock:
            try:
                db = self._connect()
                db.row_factory = sqlite3.Row
                rows = db.execute("SELECT round, queries, tokens, state, tokens_used, created_at, finished_at "
                                  "FROM reservations WHERE owner = ? AND run_key = ? ORDER BY id",
                                  (self.owner, run_key(run))).fetchall()
                db.row_factory = None
            except sqlite3.Error as exc:
                raise LedgerError(f"The run ledger {self.path} cannot be read: {exc}.") from exc
        return [dict(r) for r in rows]

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
