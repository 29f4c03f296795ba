"""The engine facade: the one object ``mcp/`` and ``app/`` talk to.

An ``Engine`` is opened on a data folder with ``Settings``. It owns the workspace stores (opened on
demand), the one writer, and the embedding model (loaded on first use, one copy for every
workspace). Tools run through ``call``: arguments validated from the row functions' signatures,
the row function run against one workspace, its result rendered as text. ``tools`` offers each tool as a
typed method over ``call`` (``core/tool_calls.py``) for callers that name a fixed tool.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .budget import RunBudget
from .budget.queries import QueryBudget
from .capture.folder_watch import Batch, FolderWatch, Watched, include_patterns
from .capture.ledger import Ledger
from .capture.worker import CaptureReport, CaptureWorker, capture_file
from .catalog import TOOLS, validate_call
from .chat.conversation import ConversationStore
from .chat.events import ChatEvent, ChatNote, ChatTurn, ModelDownload
from .chat.model import ChatModel, LocalChatModel
from .chat.remote import RemoteChatModel
from .chat.runner import chat_turn
from .embedding import Embedder
from .embedding.slot import EmbeddingSlot
from .errors import EngramError, InvalidArgument, ModelError
from .events import EventBus, IngestFinished, Listener, ModelDownloaded, ModelDownloadFailed, ModelDownloadProgress
from .ingest.pause import IndexingGate
from .manifest import ModelEntry, model_entry, resolve_model
from .models.download import Downloaded, Progress, ProgressFn
from .models.files import ModelFiles
from .models.gpu import Gpu
from .models.inference import DevicePlan, Inference
from .models.pool import ModelPool
from .models.providers import Provider, api_key
from .models.runs_where import runs_where
from .paths import Paths, owner_name
from .recall.pack import ContextPack, PackRequest, Tokenizer, context_pack
from .settings import Settings
from .store import WorkspaceStore, Writer
from .store.bucket_access import BucketCredentials
from .store.location import BucketLocation
from .store.maintenance import MaintenancePolicy, MaintenanceSchedule
from .tool_calls import ToolCalls, ToolOutput
from .tools.scope import Scope, Services
from .tools.spec import describe_validation_error
from .transfer.export import Progress as ExportProgress
from .transfer.folder import Embedding
from .transfer.results import Exported, ExportRequest, Imported, ImportRequest
from .workspaces import WorkspacePlace, Workspaces

logger = logging.getLogger(__name__)

#: Answers of tools without a ``max_chars`` argument are short by nature; this only guards the edge.
MAX_CHARS_CEILING = 12000



@dataclass(frozen=True)
class EngineInternals:
    """An engine's parts below its tools, handed out by ``Engine.internals`` to benchmarks and tests only."""

    #: The one thread every store write of this engine runs on.
    writer: Writer
    #: When each workspace is compacted and its indexes brought up to date.
    maintenance: MaintenanceSchedule
    #: What the read tools run against in a workspace (raises as ``Engine.store``).
    scope: Callable[[str], Scope]

class Engine:
    """Stores, models and tools of one data folder. Thread-safe; call ``close`` when done."""

    def __init__(self, paths: Paths, settings: Settings, *, embedder: Embedder | None = None,
                 generator: Provider | None = None, embedder_loader: Callable[[], Embedder] | None = None,
                 detect_gpus: Callable[[], list[Gpu]] | None = None, environ: Mapping[str, str] | None = None) -> None:
        """Open the engine. Nothing is loaded or created until a tool needs it.

        ``embedder`` replaces the bundled model and ``generator`` the helper model (the seams tests use);
        without them the models named by settings are verified and loaded on first use.
        ``embedder_loader`` replaces how the embedding model is built and loaded on first use (the engine
        owns and closes what it returns); ``detect_gpus`` replaces the GPU detection. Both are seams too.
        ``environ`` (default: this process's environment, read once here) gives shared workspaces' access keys
        when the keyring holds none.
        """
        self.paths = paths
        self.settings = settings
        self._writer = Writer()
        self._maintenance = MaintenanceSchedule(self._writer, self._maintenance_policy)
        self._events = EventBus()
        self._indexing = IndexingGate()
        self._embedding = EmbeddingSlot(embedder_loader or self._load_embedder, given=embedder)
        self._inference = Inference(lambda: self.settings, self.model_files, generator=generator,
                                   detect_gpus=detect_gpus)
        self._budget = QueryBudget(RunBudget(owner_name()), paths.workspace_dir, self._embedding)
        self._services = Services(paths=paths, writer=self._writer, embedding=self._embedding, inference=self._inference,
                                  budget=self._budget, events=self._events, indexing=self._indexing,
                                  workspace_names=self.workspace_names)
        self._workspaces = Workspaces(paths, self._writer, lambda: self.settings, self._dimensions,
                                     self._maintenance.watch, os.environ if environ is None else environ)
        #: Every tool as a typed method (``engine.tools.status(workspace=...)``), through ``call``.
        self.tools = ToolCalls(self.call)
        self._close_lock = threading.Lock()
        self._closed = False
        self._capture: CaptureWorker | None = None
        self._watch: FolderWatch | None = None

    # ------------------------------------------------------------------- events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every engine event (``core/events.py``) from any thread; returns the function
        that unsubscribes it."""
        return self._events.subscribe(listener)

    def pause_indexing(self) -> None:
        """Hold every ingest of this engine after its current batch until ``resume_indexing``."""
        self._indexing.pause()

    def resume_indexing(self) -> None:
        """Let paused ingests continue."""
        self._indexing.resume()

    @property
    def indexing_paused(self) -> bool:
        return self._indexing.paused

    def cancel_ingest(self, ingest: str) -> bool:
        """Stop the ingest whose ``IngestStarted`` event carried ``ingest`` after its current batch (at once
        when paused); it then raises ``IngestCancelled`` to its caller and the files it finished stay written.
        Returns False when no such ingest runs."""
        return self._indexing.cancel(ingest)

    def running_ingests(self) -> frozenset[str]:
        """The ids of this engine's ingests running now."""
        return self._indexing.running()

    def apply_settings(self, settings: Settings) -> None:
        """Use ``settings`` from the next call on. Loaded models and open workspaces keep what they were
        opened with (the embedding model, its threads, the GPU device, read consistency) until a restart."""
        self.settings = settings

    # ---------------------------------------------------------------- embedding

    def embedder(self) -> Embedder:
        """The embedding model, built and loaded on first use.

        Raises:
            ModelError: it cannot be built, verified or loaded (the message says why and what to do).
            EngineClosed: the engine is closed (also when it was closed during the load).
        """
        return self._embedding.get()

    def _load_embedder(self) -> Embedder:
        from .embedding.bundled import ensure_bundled_model
        from .embedding.llama_embedder import LlamaEmbedder

        entry = model_entry(self.settings.embed.model)
        if "embed" not in entry.roles or not entry.embedding_dimensions:
            raise ModelError(f"Model '{entry.id}' is not an embedding model; set embed.model to one that is.")
        path = ensure_bundled_model(entry, self.paths.models_dir)
        return LlamaEmbedder(path, model_id=entry.id, dimensions=entry.embedding_dimensions,
                             max_tokens=entry.max_tokens or 256, threads=self.settings.embed.threads,
                             offload=self._inference.embedding_offload())

    def embedder_or_none(self) -> Embedder | None:
        """The embedding model, or ``None`` when it cannot be loaded (``embed_note`` says why).

        Raises:
            EngineClosed: the engine is closed.
        """
        return self._embedding.get_or_none()

    def embedder_loaded(self) -> bool:
        return self._embedding.loaded

    def embed_note(self) -> str | None:
        """Why the embedding model is unavailable, if it is."""
        return self._embedding.note

    def _dimensions(self) -> tuple[int, str]:
        loaded = self._embedding.peek()
        if loaded is not None:
            return loaded.dimensions, loaded.model_id
        entry = model_entry(self.settings.embed.model)
        if not entry.embedding_dimensions:
            raise ModelError(f"Model '{entry.id}' is not an embedding model; set embed.model to one that is.")
        return entry.embedding_dimensions, entry.id

    # --------------------------------------------------------------- workspaces

    def workspace_names(self) -> list[str]:
        """Workspaces of the data folder: local ones and the shared ones registered on this machine."""
        return self._workspaces.names()

    def store(self, workspace: str = "", *, create: bool = False) -> WorkspaceStore:
        """The store of ``workspace`` (default: the configured one), opened once and kept.

        The default workspace is created on first use; other local ones are created only when ``create``;
        shared ones by ``add_shared_workspace``.

        Raises:
            InvalidArgument: the name is not a valid workspace name.
            WorkspaceError / SchemaTooNew: the workspace does not exist (and ``create`` is false), or
                cannot be opened; for a shared one also the bucket's typed errors (credentials refused, bucket
                missing, access denied).
            BucketUnreachable: a shared workspace's storage cannot be reached.
        """
        name = workspace or self.settings.store.default_workspace
        return self._workspaces.store(name, create=create or name == self.settings.store.default_workspace)

    def open_workspace(self, workspace: str = "") -> str:
        """Open ``workspace`` (default: the configured one, created on first use) and return its name.

        Raises:
            InvalidArgument, WorkspaceError, SchemaTooNew, BucketUnreachable: as ``store``.
        """
        return self.store(workspace).name

    def add_shared_workspace(self, name: str, location: BucketLocation,
                             credentials: BucketCredentials | None = None) -> WorkspacePlace:
        """Register (creating or joining) shared workspace ``name`` in a bucket; see ``Workspaces.add_shared``."""
        store = self._workspaces.add_shared(name, location, credentials)
        return WorkspacePlace(name, location, location.describe(), True, store.count_memories())

    def remove_shared_workspace(self, name: str) -> BucketLocation:
        """Forget shared workspace ``name`` on this machine; its bucket keeps every memory. Raises ``WorkspaceNotFound``."""
        return self._workspaces.remove_shared(name)

    def workspace_places(self, *, check: bool = True) -> list[WorkspacePlace]:
        """Every workspace, where it lives and (with ``check``) whether it answers; never raises for one that fails."""
        return self._workspaces.places(check=check)

    def _maintenance_policy(self) -> MaintenancePolicy:
        cfg = self.settings.store
        # Old versions cost disk and slow every later cleanup, but a reader of another process may still be
        # on one: it moves to the latest within read_consistency_sec, so versions older than twice that (plus
        # time for a query in flight) are nobody's.
        keep = timedelta(seconds=2 * max(cfg.read_consistency_sec, cfg.shared_read_consistency_sec) + 10.0)
        return MaintenancePolicy(every_commits=cfg.maintenance_writes, idle_sec=cfg.maintenance_idle_sec,
                                 keep_versions=keep, vector_index_min_rows=cfg.vector_index_min_rows)

    def internals(self) -> EngineInternals:
        """What lies below the tools (the writer, the maintenance schedule, a workspace's scope), for benchmarks and
        tests that stage or time it. The app and the MCP server never use it (``tests/test_layers.py``)."""
        return EngineInternals(self._writer, self._maintenance, self._scope)

    def _scope(self, workspace: str = "", *, create: bool = False) -> Scope:
        # What a row function runs against in ``workspace`` (raises as ``store``).
        store = self.store(workspace, create=create)
        return Scope(store.name, store, self.settings, self._services)

    # ------------------------------------------------------------ generation models

    def model_files(self) -> ModelFiles:
        """The model files of this data folder (status, verify, download, remove)."""
        return ModelFiles(self.paths.models_dir, self.settings.model.hub_url)

    def download_model(self, entry: ModelEntry, progress: ProgressFn | None = None) -> Downloaded:
        """Download and verify ``entry`` into this data folder, telling subscribers how it goes
        (``ModelDownloadProgress``, then ``ModelDownloaded`` or ``ModelDownloadFailed``).

        Raises:
            DownloadError (and its kinds), ChecksumMismatch, ModelError: the download failed; a model that
                was there before is untouched.
        """
        def report(p: Progress) -> None:
            self._events.emit(ModelDownloadProgress(entry.id, p.done, p.total))
            if progress is not None:
                progress(p)

        try:
            got = self.model_files().download(entry, progress=report)
        except EngramError as exc:
            self._events.emit(ModelDownloadFailed(entry.id, exc.title, exc.message))
            raise
        except BaseException:
            # An interrupt or an unforeseen failure: subscribers still hear the outcome (the .part stays for a
            # resume; a model that was there before is untouched).
            self._events.emit(ModelDownloadFailed(entry.id, "Download stopped",
                                                 "The download stopped unexpectedly; start it again to resume."))
            raise
        self._events.emit(ModelDownloaded(entry.id, got.size))
        return got

    def gpus(self) -> list[Gpu]:
        """The GPUs this computer reports (detected once per engine)."""
        return self._inference.gpus()

    def device_plan(self) -> DevicePlan:
        """(the chosen GPU, the fitting llama.cpp build, GPU layers to offload, a note when they differ)."""
        return self._inference.device_plan()

    def model_pool(self) -> ModelPool:
        """The generation models of this engine (created on first use, closed by ``close``).

        Raises:
            EngineClosed: the engine is closed.
        """
        return self._inference.model_pool()

    def provider(self, role: str = "helper") -> Provider:
        """Where the helper model runs for ``role``, per ``helper.provider``. Never downloads a model.

        Raises:
            ModelError: the local model is missing or unverified (the message says how to get it), it
                cannot be loaded, or a remote provider lacks its API key.
        """
        return self._inference.provider(role)

    # --------------------------------------------------------------------- chat

    def chat(self, question: str, *, conversation: str | None = None, workspace: str = "",
             on_event: Callable[[ChatEvent], None] | None = None, stop: Callable[[], bool] | None = None,
             model: ChatModel | None = None, download: bool = True) -> ChatTurn:
        """One chat turn in ``workspace``: the chat model researches with the read tools, then answers citing
        what it read; the conversation (``conversation``, or a new one) is kept in the workspace. ``on_event``
        gets the streamed text, each tool call and notes as they happen (from this thread); ``stop`` is asked
        between steps and tokens. ``model`` is a seam for tests (default: ``chat_model``); ``download`` False
        refuses to fetch a missing local model (the window offers the download as a choice of its own).

        Raises:
            InvalidArgument: an empty or too long question, a bad conversation name.
            WorkspaceNotFound: no such workspace.
            ModelError: the chat model cannot be had (see ``chat_model``).
            StoreError: the conversation cannot be read or saved.
        """
        scope = self._scope(workspace)
        name = scope.workspace

        def run(tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
            out = self.call(tool, {**arguments, "workspace": name})
            return out.text, out.result

        return chat_turn(question, chats=self.paths.workspace_dir(name) / "chats", settings=self.settings,
                         runner=run, model=(lambda: model) if model is not None
                         else (lambda: self.chat_model(on_event, download=download)),
                         conversation=conversation, on_event=on_event, stop=stop)

    def conversations(self, workspace: str = "") -> ConversationStore:
        """The conversations kept in ``workspace`` (list, load, rename, delete). Raises ``WorkspaceNotFound``."""
        return ConversationStore(self.paths.workspace_dir(self._scope(workspace).workspace) / "chats")

    def chat_model(self, on_event: Callable[[ChatEvent], None] | None = None, *,
                   download: bool = True) -> ChatModel:
        """The chat model: with chat.provider local, ``chat.local_model`` downloaded first if it is missing and
        ``download`` allows (its size and progress go to ``on_event``), loaded once and shared with the helper when
        file, context and GPU layers match; otherwise the remote provider's model through its function calling.

        Raises:
            ModelError: the model is missing and ``download`` is False, the download failed, the file does not
                verify, llama.cpp cannot load it, or a remote provider has no model named or no API key.
        """
        chat, where = self.settings.chat, runs_where(self.settings, "chat")
        if not where.in_process:
            if not where.model:
                raise ModelError(f"chat.provider is {where.provider}: set chat.remote_model to the model's name there "
                                 "(engram config set chat.remote_model NAME).", title="Chat model not named")
            key = api_key(where.provider) if where.provider in ("openai", "anthropic") else None
            return RemoteChatModel("anthropic" if where.provider == "anthropic" else "openai", where.provider,
                                   where.url, where.model, key, chat.n_ctx)
        entry = resolve_model(where.model)
        files = self.model_files()
        status = files.status(entry)
        if not status.available:
            raise ModelError(f"{entry.id} {status.note}; choose a smaller chat model (engram config set "
                             "chat.local_model qwen3.5-4b).", title="Not enough memory for the chat model")
        if not entry.local_path and not status.present:
            size = f"{entry.size / 1e9:.1f} GB" if entry.size else "size unknown"
            if not download:
                raise ModelError(f"{entry.id} ({size}) is not on this computer yet: download it from the Ask page "
                                 f"or with `engram models download {entry.id}`.", title="Chat model not downloaded")
            emit = on_event or (lambda _e: None)
            emit(ChatNote(f"Downloading {entry.id} ({size}) for chat, once; it stays on this computer…"))
            self.download_model(entry, progress=lambda p: emit(ModelDownload(entry.id, p.done, p.total)))
        path = files.verify(entry)
        loaded = self._inference.model_pool().get(
            "chat", path, n_ctx=chat.n_ctx, offload=self._inference.offload(chat.n_gpu_layers),
            threads=self.settings.helper.local.threads, batch=self.settings.helper.local.batch)
        return LocalChatModel.open(loaded, entry.id, chat.tool_format)

    # -------------------------------------------------------------------- tools

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> ToolOutput[BaseModel]:
        """Validate ``arguments``, run ``tool`` in its workspace and render the result.

        ``arguments`` may include ``workspace`` (default: store.default_workspace) and ``max_chars``
        (default: recall.max_chars for recall, search.max_chars for the other tools).

        Raises:
            InvalidArgument: unknown tool or refused arguments (nothing ran, nothing was written).
            NotFound: an unknown id, source or workspace.
            EngramError: any other failure, already translated into a message for the user.
        """
        call = validate_call(tool, arguments or {})
        given = call.model_dump(exclude_unset=True)
        values = {k: v for k, v in given.items() if k not in ("workspace", "max_chars")}
        spec = TOOLS[tool]
        scope = self._scope(str(given.get("workspace", "")), create=spec.write)
        max_chars: int
        if "max_chars" in given:
            max_chars = int(given["max_chars"])
        else:
            sized_by = self.settings.recall if spec.sized_by == "recall" else self.settings.search
            max_chars = sized_by.max_chars if spec.budgeted else MAX_CHARS_CEILING
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
        return context_pack(self._scope(workspace), request, tokenizer)

    # ------------------------------------------------------------ export and import

    def export_workspace(self, folder: os.PathLike[str] | str, *, workspace: str = "", project: str | None = None,
                         progress: ExportProgress | None = None) -> Exported:
        """Write ``workspace`` (or its ``project``) to the new folder ``folder`` (``core/transfer/folder.py`` says
        what it holds); ``progress`` is told each file's name once it is written.

        Raises:
            TransferRefused: ``folder`` exists already.
            TransferFailed: the disk refused a write (nothing that looks like a whole export is left).
            WorkspaceNotFound, StoreError: the workspace does not exist or cannot be read.
        """
        from .transfer.export import export_workspace

        store = self.store(workspace)
        dimensions, model = self._dimensions()
        embedding = Embedding(model=model, sha256=self._model_sha256(model), dimensions=dimensions)
        return export_workspace(store, Path(folder).expanduser().absolute(), project=project, embedding=embedding,
                                progress=progress)

    def import_path(self, path: os.PathLike[str] | str, *, workspace: str = "", project: str | None = None,
                    dry_run: bool = False) -> Imported:
        """Import what ``path`` holds into ``workspace``: an Engram export row for row (rows already there left as
        they are), or a peer's notes (Claude Code, basic-memory, mem0) each through ``store``. ``project`` names the
        project of a peer's notes. ``dry_run`` counts what would be imported and writes nothing.

        Raises:
            TransferRefused: the path is missing, unreadable or of no known format, or an export that cannot be
                imported (the message says why and what is read); nothing was written.
            InvalidArgument: a bad workspace name, or a peer's note that ``store`` refuses.
            ModelError, StoreError, WorkspaceError: embedding, reading or writing the workspace failed.
        """
        from .transfer.importing import ImportTarget, import_path

        name = workspace or self.settings.store.default_workspace
        dimensions, model = self._dimensions()
        target = ImportTarget(
            workspace=name, scope=lambda: self._scope(name, create=True),
            existing=lambda: self.store(name) if name in self.workspace_names() else None,
            dimensions=dimensions, model=model, sha256=self._model_sha256(model), embedder=self.embedder_or_none,
            embed_note=self.embed_note, vector_index_min_rows=self.settings.store.vector_index_min_rows,
            emit=self._events.emit)
        return import_path(Path(path).expanduser().absolute(), target, project=project, dry_run=dry_run)

    def transfer(self, action: str, arguments: dict[str, Any]) -> Exported | Imported:
        """``export_workspace`` (``action`` "export") or ``import_path`` ("import") from JSON arguments: how the
        command line asks a running service for them.

        Raises:
            InvalidArgument: an unknown action, or arguments that do not validate; else as the method called.
        """
        try:
            if action == "export":
                asked = ExportRequest.model_validate(arguments)
                return self.export_workspace(asked.folder, workspace=asked.workspace, project=asked.project)
            if action == "import":
                given = ImportRequest.model_validate(arguments)
                return self.import_path(given.path, workspace=given.workspace, project=given.project,
                                        dry_run=given.dry_run)
        except ValidationError as exc:
            model = ExportRequest if action == "export" else ImportRequest
            raise InvalidArgument(describe_validation_error(action, exc, accepted=list(model.model_fields))) from None
        raise InvalidArgument(f"Unknown transfer '{action}': it is export or import.")

    @staticmethod
    def _model_sha256(model: str) -> str:
        """The pinned SHA-256 of embedding model ``model`` ("" for a model the manifest does not pin)."""
        try:
            return model_entry(model).sha256
        except EngramError:
            return ""

    # -------------------------------------------------------------- capture

    def capture_file(self, editor: str, transcript: os.PathLike[str] | str, *, session_id: str = "",
                     cwd: str = "") -> CaptureReport:
        """Capture the turns of an editor's session file not stored yet, into the default workspace.

        Raises:
            InvalidArgument: an editor capture does not read.
            ModelError, StoreError, WorkspaceError: embedding or writing failed (nothing of it is recorded as
                read, so the next capture reads the same turns again).
        """
        return capture_file(self._scope(create=True), Ledger(self.paths.data_dir), editor, Path(transcript),
                            session_id=session_id, cwd=cwd)

    def start_capture(self) -> None:
        """Carry out the hooks' capture jobs and watch the editors' session folders until ``close``
        (the service and the tray app do this). Idempotent."""
        with self._close_lock:
            if self._closed or self._capture is not None:
                return
            self._capture = CaptureWorker(self.paths, lambda: self._scope(create=True), lambda: self.settings)
            self._capture.start()

    def start_watching(self) -> None:
        """Keep every folder ingested into a local workspace current until ``close`` (``core/capture/folder_watch.py``;
        the service and the tray app do this). Idempotent."""
        with self._close_lock:
            if self._closed or self._watch is not None:
                return
            own = [self.paths.data_dir, self.paths.config_dir, self.paths.log_dir]
            self._watch = FolderWatch(self._watched_folders, self._keep_current, lambda: self.settings, own)
            self._watch.start()
        self.subscribe(lambda event: self._watch.refresh() if isinstance(event, IngestFinished) and self._watch
                       else None)

    @property
    def folder_watch(self) -> FolderWatch | None:
        """The running folder watch (``None`` before ``start_watching``): its folders, ``pause``, ``paused``."""
        return self._watch

    def _watched_folders(self) -> list[Watched]:
        """Every folder ingested into a local workspace, with its project (a folder of two projects: the first)."""
        found: dict[tuple[str, str], Watched] = {}
        for name in self.workspace_names():
            if self._workspaces.location(name) is not None:  # shared: its folders are other machines' too
                continue
            for row in self.store(name).source_rows(["root", "project", "kind"]):
                if row["kind"] == "file" and row["root"]:
                    found.setdefault((name, str(row["root"])), Watched(name, Path(str(row["root"])), str(row["project"])))
        return list(found.values())

    def _keep_current(self, batch: Batch) -> None:
        """Ingest a watched folder's changed files again and forget its deleted ones.

        Raises:
            EngramError: the ingest or a delete failed (the watch logs it; the next change tries again).
        """
        folder = batch.folder
        store = self.store(folder.workspace)
        for path in batch.deleted:
            if store.source(path) is not None:
                # Gone from the folder, not forgotten by the person: it comes back if it is written again.
                self.call("delete", {"source": path, "workspace": folder.workspace, "keep_out": False})
        if batch.changed:
            arguments: dict[str, Any] = {"path": str(folder.root), "project": folder.project,
                                         "workspace": folder.workspace}
            if (patterns := include_patterns(batch)) is not None:
                arguments["include"] = patterns
            self.call("ingest_path", arguments)

    def capture_ledger(self) -> Ledger:
        """What capture has read of each session and stored today."""
        return Ledger(self.paths.data_dir)

    def close(self) -> None:
        """Finish queued writes, release the stores and the models. Idempotent.

        Does not wait for a model load in flight: that load closes its model when it ends.
        """
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            capture, self._capture = self._capture, None
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()
        if capture is not None:
            capture.stop()
        with self._close_lock:
            embedder = self._embedding.detach()
            self._workspaces.close()
        self._indexing.resume()  # a paused ingest finishes its batch instead of holding the close
        self._maintenance.close()
        self._writer.close()
        self._budget.close()
        if embedder is not None:
            embedder.close()
        self._inference.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
