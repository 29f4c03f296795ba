"""The engine facade: the one object ``mcp/`` and ``app/`` talk to.

An ``Engine`` is opened on a data folder with ``Settings``. It owns the workspace stores (opened on
demand), the one writer, and the embedding model (loaded on first use, one copy for every
workspace). Tools run through ``call``: arguments validated from the row functions' signatures,
the row function run against one workspace, its result rendered as text.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from .budget import Allowance, Prepared, RunBudget
from .embedding import Embedder
from .errors import EngramError, InvalidArgument, ModelError, WorkspaceError
from .ingest.pipeline import IngestProgress
from .manifest import model_entry, resolve_model
from .models.backend import BuildChoice, choose_build
from .models.files import ModelFiles, total_memory_mb
from .models.gpu import Gpu, choose, detect
from .models.pool import ModelPool
from .models.providers import DEFAULT_URLS, AnthropicProvider, LocalProvider, OpenAICompatibleProvider, Provider, api_key
from .paths import Paths, owner_name
from .privacy import private_folder
from .settings import Settings, is_workspace_name
from .store import WorkspaceStore, Writer
from .store.maintenance import MaintenancePolicy, MaintenanceSchedule
from .recall.pack import ContextPack, PackRequest, Tokenizer, context_pack
from .tools.registry import TOOLS, describe_validation_error, validate_call
from .tools.scope import Scope

logger = logging.getLogger(__name__)

#: Answers of tools without a ``max_chars`` argument are short by nature; this only guards the edge.
MAX_CHARS_CEILING = 12000

EngineEvent = IngestProgress
Listener = Callable[[EngineEvent], None]


def _closed_error() -> EngramError:
    return EngramError("The engine is closed.", title="Engine closed")


@dataclass(frozen=True)
class ToolOutput:
    """A tool's result model and its rendered text."""

    tool: str
    workspace: str
    result: BaseModel
    text: str


class Engine:
    """Stores, models and tools of one data folder. Thread-safe; call ``close`` when done."""

    def __init__(self, paths: Paths, settings: Settings, *, embedder: Embedder | None = None,
                 generator: Provider | None = None, embedder_loader: Callable[[], Embedder] | None = None,
                 detect_gpus: Callable[[], list[Gpu]] | None = None) -> None:
        """Open the engine. Nothing is loaded or created until a tool needs it.

        ``embedder`` replaces the bundled model and ``generator`` the helper model (the seams tests use);
        without them the models named by settings are verified and loaded on first use.
        ``embedder_loader`` replaces how the embedding model is built and loaded on first use (the engine
        owns and closes what it returns); ``detect_gpus`` replaces the GPU detection. Both are seams too.
        """
        self.paths = paths
        self.settings = settings
        self.writer = Writer()
        self.maintenance = MaintenanceSchedule(self.writer, self._maintenance_policy)
        self._stores: dict[str, WorkspaceStore] = {}
        self._stores_lock = threading.Lock()
        self._embedder = embedder
        self._owns_embedder = embedder is None
        self._embed_error: str | None = None
        # One lock per resource, so that a slow GPU probe or a model load holds up only its own callers.
        self._embed_lock = threading.Lock()  # held while the embedding model loads
        self._gpu_lock = threading.Lock()  # held while the GPUs are detected
        self._pool_lock = threading.Lock()
        # Guards ``_closed`` and the hand-over of the embedder to ``close``; never held across a load.
        self._closing_lock = threading.Lock()
        self._listeners: list[Listener] = []
        self._indexing = threading.Event()
        self._indexing.set()
        self._closed = False
        self._gpus: list[Gpu] | None = None
        self._pool: ModelPool | None = None
        self._generator = generator
        self._budget = RunBudget(owner_name())
        self._embedder_loader = embedder_loader or self._load_embedder
        self._detect_gpus = detect_gpus or (lambda: detect(system_memory_mb=total_memory_mb()))

    # ------------------------------------------------------------------- events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every engine event (ingest progress); returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def ingest_progress(self, progress: IngestProgress) -> None:
        """Tell the listeners how far an ingest is; while indexing is paused, hold the ingest here."""
        for listener in list(self._listeners):
            listener(progress)
        # Between batches: what is written stays written, and the next batch waits for resume_indexing().
        self._indexing.wait()

    def pause_indexing(self) -> None:
        """Hold every ingest of this engine after its current batch until ``resume_indexing``."""
        self._indexing.clear()

    def resume_indexing(self) -> None:
        """Let paused ingests continue."""
        self._indexing.set()

    @property
    def indexing_paused(self) -> bool:
        return not self._indexing.is_set()

    def apply_settings(self, settings: Settings) -> None:
        """Use ``settings`` from the next call on. Loaded models and open workspaces keep what they were
        opened with (the embedding model, its threads, the GPU device, read consistency) until a restart."""
        self.settings = settings

    # ---------------------------------------------------------------- embedding

    def embedder(self) -> Embedder:
        """The embedding model, built and loaded on first use.

        A load that ends after ``close`` ran closes the model it loaded at once: nothing stays loaded.

        Raises:
            ModelError: it cannot be built, verified or loaded (the message says why and what to do).
            EngramError: the engine is closed (also when it was closed during the load).
        """
        with self._embed_lock:
            with self._closing_lock:
                if self._closed:
                    raise _closed_error()
                if self._embedder is not None:
                    return self._embedder
            if self._embed_error is not None:
                raise ModelError(self._embed_error)
            try:
                loaded = self._embedder_loader()
            except ModelError as exc:
                self._embed_error = exc.message
                raise
            with self._closing_lock:
                closed = self._closed
                if not closed:
                    self._embedder = loaded
            if closed:
                loaded.close()
                raise _closed_error()
            return loaded

    def _load_embedder(self) -> Embedder:
        from .embedding.bundled import ensure_bundled_model
        from .embedding.llama_embedder import LlamaEmbedder

        entry = model_entry(self.settings.embed.model)
        if "embed" not in entry.roles or not entry.embedding_dimensions:
            raise ModelError(f"Model '{entry.id}' is not an embedding model; set embed.model to one that is.")
        path = ensure_bundled_model(entry, self.paths.models_dir)
        return LlamaEmbedder(path, model_id=entry.id, dimensions=entry.embedding_dimensions,
                             max_tokens=entry.max_tokens or 256, threads=self.settings.embed.threads)

    def embedder_or_none(self) -> Embedder | None:
        """The embedding model, or ``None`` when it cannot be loaded (``embed_note`` says why).

        Raises:
            EngramError: the engine is closed.
        """
        try:
            return self.embedder()
        except ModelError:
            return None

    def embedder_loaded(self) -> bool:
        return self._embedder is not None

    def embed_note(self) -> str | None:
        """Why the embedding model is unavailable, if it is."""
        return self._embed_error

    def _dimensions(self) -> tuple[int, str]:
        if self._embedder is not None:
            return self._embedder.dimensions, self._embedder.model_id
        entry = model_entry(self.settings.embed.model)
        if not entry.embedding_dimensions:
            raise ModelError(f"Model '{entry.id}' is not an embedding model; set embed.model to one that is.")
        return entry.embedding_dimensions, entry.id

    # --------------------------------------------------------------- workspaces

    def workspace_names(self) -> list[str]:
        """Workspaces that exist in the data folder."""
        root = self.paths.workspaces_dir
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if (p / "workspace.json").is_file())

    def store(self, workspace: str = "", *, create: bool = False) -> WorkspaceStore:
        """The store of ``workspace`` (default: the configured one), opened once and kept.

        The default workspace is created on first use; others are created only when ``create``.

        Raises:
            InvalidArgument: the name is not a valid workspace name.
            WorkspaceError / SchemaTooNew: the workspace does not exist (and ``create`` is false), or
                cannot be opened.
        """
        name = workspace or self.settings.store.default_workspace
        if not is_workspace_name(name):
            raise InvalidArgument(f"'{name}' is not a workspace name: use 1–40 lowercase letters, digits and "
                                  "dashes, starting with a letter or digit.")
        with self._stores_lock:
            if self._closed:
                raise EngramError("The engine is closed.")
            if name in self._stores:
                return self._stores[name]
            dimensions, model_id = self._dimensions()
            try:
                private_folder(self.paths.data_dir)
                private_folder(self.paths.workspaces_dir)
            except OSError as exc:
                raise WorkspaceError(f"Cannot create Engram's data folder ({exc.strerror}); check that "
                                     "ENGRAM_DATA_DIR (or the default data folder) is yours and writable.") from exc
            try:
                store = self.writer.run(
                    lambda: WorkspaceStore.open(
                        name, self.paths.workspace_dir(name), dimensions=dimensions, embed_model=model_id,
                        read_consistency=timedelta(seconds=self.settings.store.read_consistency_sec),
                        create=create or name == self.settings.store.default_workspace))
            except WorkspaceError as exc:
                if exc.title == "Unknown workspace":
                    known = ", ".join(self.workspace_names()) or "none yet"
                    raise WorkspaceError(f"{exc.message} Existing workspaces: {known}.", title=exc.title) from None
                raise
            self.maintenance.watch(store)
            self._stores[name] = store
            return store

    def _maintenance_policy(self) -> MaintenancePolicy:
        cfg = self.settings.store
        # Old versions cost disk and slow every later cleanup, but a reader of another process may still be
        # on one: it moves to the latest within read_consistency_sec, so versions older than twice that (plus
        # time for a query in flight) are nobody's.
        keep = timedelta(seconds=2 * cfg.read_consistency_sec + 10.0)
        return MaintenancePolicy(every_commits=cfg.maintenance_writes, idle_sec=cfg.maintenance_idle_sec,
                                 keep_versions=keep, vector_index_min_rows=cfg.vector_index_min_rows)

    def scope(self, workspace: str = "", *, create: bool = False) -> Scope:
        store = self.store(workspace, create=create)
        return Scope(store.name, store, self)

    # ---------------------------------------------------------------- run budget

    def prepare_queries(self, scope: Scope, run: str | None, queries: list[str]) -> Prepared | None:
        """Semantic preparation of one batch of ``queries`` within ``run``'s allowance (``recall.run_budget``).

        ``None`` when the budget is off or no run is named: the caller embeds as usual. Never raises for
        a withheld preparation (``Prepared.withheld`` says why); the semantic channel then stays out.
        """
        cfg = self.settings.recall.run_budget
        if not cfg.enabled or not run or not queries:
            return None
        allowance = Allowance(cfg.max_queries, cfg.max_rounds, cfg.deadline_sec, cfg.max_tokens_per_query)
        return self._budget.prepare(self.paths.workspace_dir(scope.workspace), run, queries, self.embedder_or_none(),
                                    allowance)

    def run_budget(self) -> RunBudget:
        """The process's run ledgers and handles (status and tests read the ledger through it)."""
        return self._budget

    # ------------------------------------------------------------ generation models

    def model_files(self) -> ModelFiles:
        """The model files of this data folder (status, verify, download, remove)."""
        return ModelFiles(self.paths.models_dir, self.settings.model.hub_url)

    def gpus(self) -> list[Gpu]:
        """The GPUs this computer reports (detected once per engine)."""
        with self._gpu_lock:
            if self._gpus is None:
                self._gpus = self._detect_gpus()
            return self._gpus

    def device_plan(self) -> tuple[Gpu | None, BuildChoice, int, str]:
        """(the chosen GPU, the fitting llama.cpp build, GPU layers to offload, a note when they differ)."""
        import llama_cpp

        gpu = choose(self.gpus(), self.settings.model.gpu_device)
        build = choose_build(gpu)
        if gpu is None:
            return None, build, 0, ""
        if not llama_cpp.llama_supports_gpu_offload():
            return gpu, build, 0, (f"{gpu.name} found, but this llama.cpp build runs on the CPU only; "
                                   f"`engram bootstrap` installs the {build.backend} build")
        layers = self.settings.tagger.local.n_gpu_layers
        return gpu, build, (1000 if layers < 0 else layers), ""

    def model_pool(self) -> ModelPool:
        """The generation models of this engine (created on first use, closed by ``close``).

        Raises:
            EngramError: the engine is closed.
        """
        with self._pool_lock:
            if self._pool is None:
                if self._closed:  # close takes the pool under this lock after setting ``_closed``
                    raise _closed_error()
                self._pool = ModelPool(threads=self.settings.tagger.local.threads)
            return self._pool

    def provider(self, role: str = "helper") -> Provider:
        """Where the helper model runs for ``role``, per ``tagger.llm_provider``. Never downloads a model.

        Raises:
            ModelError: the local model is missing or unverified (the message says how to get it), it
                cannot be loaded, or a remote provider lacks its API key.
        """
        cfg = self.settings.tagger
        if self._generator is not None:
            return self._generator
        if cfg.llm_provider == "local":
            entry = resolve_model(self.settings.model.chat_large if role == "chat-large" else cfg.local.model)
            path = self.model_files().verify(entry)
            _, _, layers, _ = self.device_plan()
            return LocalProvider(self.model_pool().get(role, path, n_ctx=cfg.local.n_ctx, gpu_layers=layers))
        if cfg.llm_provider == "anthropic":
            return AnthropicProvider(cfg.remote_model or "claude-sonnet-4-5", api_key("anthropic"),
                                     base_url=cfg.base_url or DEFAULT_URLS["anthropic"])
        key = api_key(cfg.llm_provider) if cfg.llm_provider == "openai" else None
        return OpenAICompatibleProvider(cfg.llm_provider, cfg.base_url or DEFAULT_URLS[cfg.llm_provider],
                                        cfg.remote_model, key)

    # -------------------------------------------------------------------- tools

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> ToolOutput:
        """Validate ``arguments``, run ``tool`` in its workspace and render the result.

        ``arguments`` may include ``workspace`` (default: store.default_workspace) and ``max_chars``
        (default: search.max_chars).

        Raises:
            InvalidArgument: unknown tool or refused arguments (nothing ran, nothing was written).
            NotFound: an unknown id, source or workspace.
            EngramError: any other failure, already translated into a message for the user.
        """
        call = validate_call(tool, arguments or {})
        values = call.model_dump(exclude={"workspace", "max_chars"}, exclude_unset=True)
        spec = TOOLS[tool]
        scope = self.scope(getattr(call, "workspace"), create=spec.write)
        if "max_chars" in call.model_fields_set:
            max_chars = getattr(call, "max_chars")
        else:
            max_chars = self.settings.search.max_chars if spec.budgeted else MAX_CHARS_CEILING
        if "max_chars" in inspect.signature(spec.rows).parameters:
            values["max_chars"] = max_chars  # the row function sizes its own output (recall's answer)
        result = spec.rows(scope, **values)
        return ToolOutput(tool, scope.workspace, result, spec.render(result, max_chars))

    def context_pack(self, request: PackRequest | dict[str, Any], workspace: str = "",
                     tokenizer: Tokenizer | None = None) -> ContextPack:
        """Retrieve for a query and pack the results under a token budget (see core/recall/pack.py).

        ``tokenizer`` counts tokens (default: bytes/4).

        Raises:
            InvalidArgument: the request does not validate (the message names each field).
            WorkspaceError: the workspace does not exist.
        """
        if not isinstance(request, PackRequest):
            try:
                request = PackRequest.model_validate(request)
            except ValidationError as exc:
                raise InvalidArgument(describe_validation_error("context_pack", exc,
                                                                accepted=list(PackRequest.model_fields))) from None
        return context_pack(self.scope(workspace), request, tokenizer)

    # -------------------------------------------------------------------- close

    def close(self) -> None:
        """Finish queued writes, release the stores and the models. Idempotent.

        Does not wait for a model load in flight: that load closes its model when it ends.
        """
        with self._stores_lock:  # an opening store finishes first; none opens after this
            with self._closing_lock:
                if self._closed:
                    return
                self._closed = True
                embedder = self._embedder if self._owns_embedder else None
                if self._owns_embedder:
                    self._embedder = None
            self._stores.clear()
        with self._pool_lock:
            pool, self._pool = self._pool, None
        self._indexing.set()  # a paused ingest finishes its batch instead of holding the close
        self.maintenance.close()
        self.writer.close()
        self._budget.close()
        if embedder is not None:
            embedder.close()
        if pool is not None:
            pool.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
