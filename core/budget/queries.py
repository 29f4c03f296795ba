"""Preparing a batch of search queries under a run's allowance, for one engine's workspaces."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..embedding.slot import EmbeddingSlot
from .ledger import Allowance
from .preparation import Prepared, RunBudget


class QueryBudget:
    """The run budget of one engine: its ledgers (one per workspace folder) and the embedding model."""

    def __init__(self, budget: RunBudget, workspace_dir: Callable[[str], Path], embedding: EmbeddingSlot) -> None:
        self.budget = budget
        self._workspace_dir = workspace_dir
        self._embedding = embedding

    def prepare(self, workspace: str, run: str, queries: list[str], allowance: Allowance) -> Prepared:
        """Vectors for ``queries`` of ``run`` in ``workspace``, within ``allowance`` (see ``RunBudget.prepare``).

        Never raises for a withheld preparation (``Prepared.withheld`` says why).

        Raises:
            EngineClosed: the engine is closed.
        """
        return self.budget.prepare(self._workspace_dir(workspace), run, queries, self._embedding.get_or_none(),
                                   allowance)

    def close(self) -> None:
        self.budget.close()
