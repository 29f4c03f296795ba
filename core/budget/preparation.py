"""Semantic query preparation under a run's allowance: plan, reserve durably, then tokenize and embed.

One call prepares one batch (a search's query, or every search query of one recall plan) as a single
round: it fits the run's remaining allowance in full, or none of it is prepared. The order is fixed:

1. plan from the run's own ledger row (no model call): which queries still need a vector;
2. reserve those queries and one round in the ledger, durably; a failed write means no model work;
3. tokenize (each query cut to the per-query token cap, or the model's own smaller limit) and embed;
4. record the outcome; failures and cancellations keep the allowance spent.

A prepared vector becomes a *handle* bound to the sha256 of its exact query text and to the run; it
expires at the run's deadline and is found only by that text, so no query borrows another's vector.
Handles live in this process's memory: the ledger stores no query text, and a vector is derived
from one. When preparation is withheld, search still answers from the lexical and graph channels.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..embedding import Embedder
from ..errors import BudgetRefused, EngramError, LedgerError
from .ledger import Allowance, Outcome, Reservation, RunLedger, refusal

logger = logging.getLogger(__name__)

_CANCELLED = (KeyboardInterrupt, asyncio.CancelledError, concurrent.futures.CancelledError)


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Handle:
    """A prepared query vector, valid for one exact query text of one run until ``expires_at``."""

    query_sha: str
    vector: np.ndarray
    tokens: int
    expires_at: float


@dataclass
class Prepared:
    """The outcome of preparing one batch: handles by query text, and why any were withheld."""

    handles: dict[str, Handle] = field(default_factory=dict)
    withheld: str | None = None  # one line; None when every query of the batch has a vector
    prepared_now: int = 0  # queries embedded by this call (0 when all were reused or withheld)
    clock: Callable[[], float] = time.time  # the ledger's clock, which handle expiry is measured on

    def vector_for(self, query: str) -> np.ndarray | None:
        """The vector prepared for exactly ``query``, unless it has expired."""
        handle = self.handles.get(query)
        if handle is None or handle.query_sha != text_sha(query) or self.clock() >= handle.expires_at:
            return None
        return handle.vector

    @property
    def note(self) -> str | None:
        """The one line a response carries when preparation was withheld."""
        if self.withheld is None:
            return None
        return f"semantic preparation withheld ({self.withheld}); answered from the lexical and graph channels"


def fit_tokens(embedder: Embedder, text: str, cap: int) -> tuple[str, int]:
    """``text`` cut on a word boundary to at most ``cap`` model tokens, and its token count.

    Uses the embedder's ``count_tokens`` (special tokens included); a model limit below ``cap``
    (``max_tokens``) wins. Embedders without a tokenizer count words plus two.
    """
    limit = min(cap, getattr(embedder, "max_tokens", cap) or cap)
    count = getattr(embedder, "count_tokens", None) or (lambda t: len(t.split()) + 2)
    n = count(text)
    if n <= limit:
        return text, n
    words = text.split(" ")
    lo, hi = 0, len(words)  # the longest prefix of words within the limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(" ".join(words[:mid])) <= limit:
            lo = mid
        else:
            hi = mid - 1
    cut = " ".join(words[:lo]) if lo else words[0][: max(limit * 2, 1)]
    return cut, min(count(cut), limit)


class RunBudget:
    """Per-process front of the run ledgers: handles in memory, counters on disk. Thread-safe."""

    def __init__(self, owner: str, *, clock: Callable[[], float] | None = None) -> None:
        self.owner = owner
        self._clock = clock
        self._ledgers: dict[Path, RunLedger] = {}
        self._handles: dict[tuple[Path, str], dict[str, Handle]] = {}
        self._lock = threading.Lock()

    def ledger(self, folder: Path) -> RunLedger:
        with self._lock:
            if folder not in self._ledgers:
                kwargs = {"clock": self._clock} if self._clock else {}
                self._ledgers[folder] = RunLedger(folder, self.owner, **kwargs)
            return self._ledgers[folder]

    def prepare(self, folder: Path, run: str, queries: list[str], embedder: Embedder | None,
                allowance: Allowance) -> Prepared:
        """Vectors for ``queries`` of ``run`` in the workspace at ``folder``, within the run's allowance.

        Never raises for a refused, unrecordable or failed preparation: ``Prepared.withheld`` says why
        and the caller searches without the semantic channel. Re-raises a cancellation after
        recording it (the allowance stays spent).
        """
        ledger = self.ledger(folder)
        now = ledger.now()
        batch = list(dict.fromkeys(queries))
        with self._lock:
            known = self._handles.setdefault((folder, ledger.owner + "\0" + run), {})
            for sha in [s for s, h in known.items() if now >= h.expires_at]:
                del known[sha]
            reused = {q: known[text_sha(q)] for q in batch if text_sha(q) in known}
        out = Prepared(handles=reused, clock=ledger.now)
        need = [q for q in batch if q not in reused]
        if not need:
            return out
        if embedder is None:
            out.withheld = "no embedding model is loaded"
            return out
        try:
            if (reason := refusal(ledger.state(run), len(need), allowance, now)) is not None:
                out.withheld = reason
                return out
            reservation = ledger.reserve(run, len(need), allowance)
        except BudgetRefused as exc:
            out.withheld = exc.message
            return out
        except LedgerError as exc:
            logger.warning("run budget: %s", exc.message)
            out.withheld = "the run's allowance could not be recorded, so nothing was prepared"
            return out

        try:
            fitted = [fit_tokens(embedder, q, allowance.max_tokens_per_query) for q in need]
            vectors = embedder.embed([text for text, _ in fitted])
        except _CANCELLED:
            self._finish(ledger, reservation, "cancelled")
            raise
        except Exception as exc:  # the provider failed: the reservation is spent
            self._finish(ledger, reservation, "failed")
            message = exc.message if isinstance(exc, EngramError) else f"{exc.__class__.__name__}: {exc}"
            out.withheld = f"semantic preparation failed: {message}"
            return out
        used = sum(n for _, n in fitted)
        self._finish(ledger, reservation, "done", used)
        if ledger.now() >= reservation.deadline_at:
            out.withheld = "the run's preparation deadline passed while its queries were embedded"
            return out
        fresh = {q: Handle(text_sha(q), np.asarray(vectors[i]), fitted[i][1], reservation.deadline_at)
                 for i, q in enumerate(need)}
        with self._lock:
            known.update({h.query_sha: h for h in fresh.values()})
        out.handles.update(fresh)
        out.prepared_now = len(fresh)
        return out

    @staticmethod
    def _finish(ledger: RunLedger, reservation: Reservation, outcome: Outcome, tokens: int = 0) -> None:
        try:
            ledger.finish(reservation, outcome, tokens)
        except LedgerError as exc:  # the counters are already durable; only the outcome row is missing
            logger.warning("run budget: %s", exc.message)

    def close(self) -> None:
        with self._lock:
            for ledger in self._ledgers.values():
                ledger.close()
            self._ledgers.clear()
            self._handles.clear()
