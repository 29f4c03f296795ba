"""What a tool's row function runs against: one workspace, the settings of the call, and the shared services.

Row functions see exactly this: the workspace's store, the one writer, the settings, the embedding model,
the helper-model providers, the run budget, the event sink and the indexing gate — never the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..budget import Allowance, Prepared
from ..budget.queries import QueryBudget
from ..embedding import Embedder
from ..embedding.slot import EmbeddingSlot
from ..events import EngineEvent, EventBus
from ..ingest.pause import IndexingGate
from ..models.inference import Inference
from ..models.providers import Provider
from ..paths import Paths
from ..settings import Settings
from ..store import WorkspaceStore, Writer


@dataclass(frozen=True)
class Services:
    """What every workspace of one engine shares."""

    paths: Paths
    writer: Writer
    embedding: EmbeddingSlot
    inference: Inference
    budget: QueryBudget
    events: EventBus
    indexing: IndexingGate
    #: The workspaces that exist in the data folder.
    workspace_names: Callable[[], list[str]]


@dataclass(frozen=True)
class Scope:
    """A workspace's store, the call's settings and the engine's shared services. Tools never see another
    workspace."""

    workspace: str
    store: WorkspaceStore
    settings: Settings
    services: Services
    #: Query vectors prepared for a batch under a run budget (recall prepares its plan's searches at once).
    prepared: Prepared | None = None

    @property
    def writer(self) -> Writer:
        return self.services.writer

    def embedder(self) -> Embedder:
        """The loaded embedding model (loaded on first use).

        Raises:
            ModelError: it cannot be loaded.
            EngineClosed: the engine is closed.
        """
        return self.services.embedding.get()

    def embedder_or_none(self) -> Embedder | None:
        """The embedding model, or ``None`` when it cannot be loaded (``embed_note`` says why)."""
        return self.services.embedding.get_or_none()

    def embed_note(self) -> str | None:
        """Why the embedding model is unavailable, if a load failed."""
        return self.services.embedding.note

    def provider(self, role: str = "helper") -> Provider:
        """Where the helper model runs for ``role``. Never downloads.

        Raises:
            ModelError: the model is missing, unverified or cannot be loaded, or a remote provider lacks its key.
        """
        return self.services.inference.provider(role)

    def emit(self, event: EngineEvent) -> None:
        """Tell the engine's subscribers (on this thread)."""
        self.services.events.emit(event)

    def prepare_queries(self, run: str | None, queries: list[str]) -> Prepared | None:
        """Semantic preparation of one batch of ``queries`` within ``run``'s allowance (``recall.run_budget``).

        ``None`` when the budget is off or no run is named: the caller embeds as usual. Never raises for
        a withheld preparation (``Prepared.withheld`` says why); the semantic channel then stays out.
        """
        cfg = self.settings.recall.run_budget
        if not cfg.enabled or not run or not queries:
            return None
        allowance = Allowance(cfg.max_queries, cfg.max_rounds, cfg.deadline_sec, cfg.max_tokens_per_query)
        return self.services.budget.prepare(self.workspace, run, queries, allowance)
