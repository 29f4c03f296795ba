"""Typed settings, grouped by concern.

Each group is a small pydantic model; ``Settings`` holds one of each. Keys are addressed as
``group.key`` (``search.limit``) in the TOML file, the CLI and error messages, and as
``ENGRAM_<GROUP>_<KEY>`` in the environment. Loading and precedence live in ``settings_file``.
"""

from __future__ import annotations

import re
import shlex
import typing
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .urls import CREDENTIALS_REFUSED, has_credentials

WORKSPACE_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"
_WORKSPACE_RE = re.compile(WORKSPACE_PATTERN)


def is_workspace_name(name: str) -> bool:
    """True when ``name`` is a valid workspace name (lowercase letters, digits and dashes, 1–40)."""
    return bool(_WORKSPACE_RE.fullmatch(name))


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)
    #: What the group is about, shown by `engram config list`.
    about: ClassVar[str] = ""


class StoreSettings(_Group):
    about: ClassVar[str] = "Where and how memories are stored"

    default_workspace: str = Field(
        "default",
        pattern=WORKSPACE_PATTERN,
        description="Workspace used when a command or tool names none (lowercase letters, digits, dashes).",
    )
    read_consistency_sec: float = Field(
        0.0,
        ge=0.0,
        le=3600.0,
        description="How stale a read may be, in seconds; 0 always sees other processes' latest writes.",
    )
    shared_read_consistency_sec: float = Field(
        5.0,
        ge=0.0,
        le=3600.0,
        description=("How stale a read of a shared (bucket) workspace may be, in seconds: other machines' writes show "
                     "up within this time; 0 asks the bucket before every read (one more round trip per search)."),
    )
    vector_index_min_rows: int = Field(
        5_000,
        ge=256,
        le=10_000_000,
        description="Build a vector index once a workspace holds this many memories (below it, exact search is fast).",
    )
    maintenance_writes: int = Field(32, ge=0, le=100_000, description=(
        "Compact a workspace and fold new rows into its indexes after this many writes (0: only after an ingest)."))
    maintenance_idle_sec: float = Field(30.0, ge=1.0, le=86400.0, description=(
        "Also maintain a workspace this many seconds after its last write (this pass also removes the old versions "
        "a burst of writes left)."))


class EmbedSettings(_Group):
    about: ClassVar[str] = "The embedding model"

    model: str = Field(
        "all-minilm-l6-v2",
        min_length=1,
        description="Manifest id of the embedding model (the bundled all-MiniLM-L6-v2 is the only one so far).",
    )
    threads: int = Field(0, ge=0, le=256, description=(
        "CPU threads for embedding; 0 uses every core. The embedding model runs on the GPU model.gpu_device "
        "chooses, when the llama.cpp build can use it."))


class ModelSettings(_Group):
    about: ClassVar[str] = "Model files and the device the local models run on"

    gpu_device: str = Field("auto", min_length=1, description=(
        "GPU the local models (the helper and the embedding model) run on, each whole on that one GPU: auto "
        "(the discrete GPU with the most memory), cpu, an index or part of a name (see `engram device`)."))
    chat_large: str = Field("qwen3.5-35b-a3b", min_length=1,
                            description="The larger chat model, offered on computers with 32 GB of memory or more.")
    hub_url: str = Field("https://huggingface.co", min_length=1, description="Model hub to download pinned models from.")

    _no_credentials = field_validator("hub_url")(classmethod(lambda cls, value: _without_credentials(value)))
    _no_link_credentials = field_validator("chat_large")(
        classmethod(lambda cls, value: _link_without_credentials(value)))


class HelperLocalSettings(_Group):
    about: ClassVar[str] = "The helper model when it runs on this computer (helper.provider = local)"

    model: str = Field("qwen3.5-4b", min_length=1, description=(
        "A manifest id, a .gguf path, owner/repo/file.gguf, or an https link (see `engram models list`)."))
    n_ctx: int = Field(8192, ge=512, le=262144, description="Context length in tokens.")
    n_gpu_layers: int = Field(-1, ge=-1, le=1000, description="Layers offloaded to the GPU; -1 all, 0 none.")
    threads: int = Field(4, ge=0, le=256, description=(
        "CPU threads of the helper model (never more than this computer's cores); 0 uses every core."))
    batch: int = Field(256, ge=16, le=8192, description=(
        "Prompt tokens the helper model reads in one step (llama.cpp's n_batch and n_ubatch); larger reads long "
        "prompts faster on a GPU and needs more memory."))

    _no_link_credentials = field_validator("model")(classmethod(lambda cls, value: _link_without_credentials(value)))


class HelperSettings(_Group):
    about: ClassVar[str] = "The helper model (tagging, summaries, recall planning and answers) and where it runs"

    provider: Literal["local", "ollama", "vllm", "openai", "anthropic"] = Field(
        "local", description="Where the helper model runs: local (llama.cpp here), ollama, vllm, openai, anthropic.")
    base_url: str = Field("", description="URL of the ollama/vLLM/OpenAI-compatible server (empty: its default).")
    _no_credentials = field_validator("base_url")(classmethod(lambda cls, value: _without_credentials(value)))
    remote_model: str = Field("", description="The model's name at a provider other than local.")
    local: HelperLocalSettings = Field(default_factory=HelperLocalSettings)


class TaggerSettings(_Group):
    about: ClassVar[str] = "Tagging new memories with the helper model"

    llm: bool = Field(False, description="Classify new memories (type, domain, topics) with the helper model.")
    llm_concurrency: int = Field(1, ge=1, le=16, description=(
        "Memories classified at once by a remote provider (one request each); the local model takes them one "
        "after another."))


class SummarizerSettings(_Group):
    about: ClassVar[str] = "Model-written summaries of sources and sessions"

    enabled: bool = Field(False, description="Summarise sources with the helper model (digests use them).")


class WatchSettings(_Group):
    about: ClassVar[str] = "Ingested folders kept current while Engram runs"

    enabled: bool = Field(True, description=(
        "Keep every folder remembered in a local workspace current: changed files are read again, deleted ones forgotten."))
    quiet_sec: float = Field(2.0, ge=0.2, le=600, description=(
        "A folder's changes are taken together once it has been quiet this long."))
    skip_folders: list[str] = Field(default_factory=list, description=(
        "Ingested folders not to watch (absolute paths, ~ allowed)."))


class CaptureSettings(_Group):
    about: ClassVar[str] = "Editor sessions remembered without the agent storing them, and the brief at each start"

    claude_code: bool = Field(True, description=(
        "Capture Claude Code sessions (its Engram plugin's hooks, `engram capture` and, while Engram runs, the "
        "session files it writes)."))
    codex: bool = Field(True, description=(
        "Capture Codex sessions (`engram capture` and, while Engram runs, the session files it writes)."))
    turns_per_session: int = Field(1000, ge=1, le=100000, description=(
        "At most this many turns of one session are stored; later ones are counted as left out."))
    turns_per_day: int = Field(3000, ge=1, le=1000000, description=(
        "At most this many captured turns are stored per day (UTC), over every editor."))
    chars_per_day: int = Field(5_000_000, ge=1000, le=1_000_000_000, description=(
        "At most this many characters of captured turns are stored per day (UTC)."))
    summaries: bool = Field(False, description=(
        "When a session ends, the helper model writes a summary of it (goal, decisions, what is open) as a memory "
        "linked to its turns. Off: capture never loads a generation model."))
    brief_chars: int = Field(2500, ge=0, le=9000, description=(
        "The brief a new session starts with (recent work, decisions, facts): at most this many characters; 0: "
        "none. Claude Code moves a hook's context over 10,000 characters into a file, so the brief stays under."))
    brief_wait_sec: float = Field(4.0, ge=0.5, le=30, description=(
        "How long a session's start waits for Engram's service to give the brief (it starts the service)."))


class UpkeepSettings(_Group):
    about: ClassVar[str] = "Duplicates found when a memory is written"

    duplicates: Literal["near", "exact", "off"] = Field("near", description=(
        "A note or turn written again is counted on the stored one instead of stored twice: near (the same text, "
        "or a note at least near_threshold alike with every detail the same), exact (the same text, case and "
        "spacing aside) or off. A conversation turn is only ever the same as a replay of itself."))
    near_threshold: float = Field(0.88, ge=0.8, le=1.0, description=(
        "How alike (cosine similarity of the vectors) a new note must be to a stored one of its project to count "
        "as the same memory, its numbers, names, identifiers, times and negations all agreeing; the longer text "
        "is shown and every text is kept with it."))
    update_threshold: float = Field(0.8, ge=0.7, le=1.0, description=(
        "How alike a new note must be to a stored one whose details differ (30 days, then 90 days) to be stored "
        "as a possible update of it: the reply and review say so, and search shows the newer first."))


class IngestSettings(_Group):
    about: ClassVar[str] = "How files are listed and chunked"

    chunk_chars: int = Field(1000, ge=200, le=8000, description="Target chunk length in characters.")
    overlap_chars: int = Field(
        120, ge=0, le=2000, description="Characters repeated between consecutive chunks of a long section."
    )
    max_file_bytes: int = Field(
        2_000_000, ge=1024, le=1_000_000_000, description="Files larger than this are skipped."
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Extra ignore patterns in .gitignore syntax, applied to every ingest.",
    )
    use_gitignore: bool = Field(True, description="Respect .gitignore files under the ingested folder.")
    allowed_roots: list[str] = Field(
        default_factory=lambda: ["~"],
        description=("Folders that ingest may read, and everything under them (~ is your home). Engram's own "
                     "data, settings and log folders are never ingested."),
    )

    @field_validator("exclude")
    @classmethod
    def _patterns_not_blank(cls, value: list[str]) -> list[str]:
        if any(not p.strip() for p in value):
            raise ValueError("patterns must not be blank")
        return value

    @field_validator("allowed_roots")
    @classmethod
    def _roots_are_absolute(cls, value: list[str]) -> list[str]:
        for root in value:
            if "\x00" in root:
                raise ValueError("a folder cannot contain a NUL character")
            if not (root.strip() == "~" or root.startswith(("~/", "~\\")) or Path(root).is_absolute()):
                raise ValueError(f"'{root}' is not an absolute folder (or ~, ~/...)")
        return value


class SearchSettings(_Group):
    about: ClassVar[str] = "Hybrid retrieval"

    limit: int = Field(10, ge=1, le=50, description="Results a search returns when the caller names no limit.")
    max_chars: int = Field(
        4000, ge=1200, le=12000, description="Length cap of a rendered search response, in characters."
    )
    k_per_channel: int = Field(24, ge=1, le=200, description="Candidates each channel contributes before fusion.")
    weight_semantic: float = Field(1.0, ge=0.0, le=10.0, description="RRF weight of the vector channel.")
    weight_lexical: float = Field(1.0, ge=0.0, le=10.0, description="RRF weight of the full-text channel.")
    weight_graph: float = Field(
        0.1, ge=0.0, le=10.0,
        description="RRF weight of the graph channel (0.1: best measured on SciFact and Django lookups; see README).")
    graph_seeds: int = Field(8, ge=0, le=64, description="Top fused results the graph channel expands from.")
    graph_hops: int = Field(1, ge=1, le=3, description="How many hops the graph channel walks from its seeds.")
    graph_reverse: bool = Field(False, description="Also walk edges backwards (e.g. to the previous chunk).")
    rrf_k: int = Field(60, ge=1, le=1000, description="The k of Reciprocal Rank Fusion: score = w / (k + rank).")
    fusion: Literal["auto", "convex", "rrf"] = Field("auto", description=(
        "How the channels' candidates are combined: convex (their scores, each scaled to 0–1, weighted; each channel "
        "gives at least 100 candidates), rrf (their ranks: w / (rrf_k + rank)), or auto: convex for conversation "
        "exchanges, rrf for files and notes (as measured best for each)."))
    feedback: bool = Field(True, description=(
        "With the convex fusion, search meaning a second time from the query moved towards the 5 best results "
        "(pseudo-relevance feedback)."))


class RunBudgetSettings(_Group):
    about: ClassVar[str] = ("A run's allowance of semantic query preparation (tokenizing and embedding queries), "
                            "kept durably across calls, processes and restarts")

    enabled: bool = Field(False, description=(
        "Bound the semantic preparation of a run's queries; past the allowance searches answer from the lexical "
        "and graph channels."))
    max_queries: int = Field(4, ge=1, le=1000, description="Queries a run may prepare semantically.")
    max_rounds: int = Field(2, ge=1, le=100, description="Preparation rounds (batches) a run may use.")
    deadline_sec: float = Field(10.0, ge=0.1, le=86400.0, description=(
        "Seconds from a run's first reservation after which it prepares nothing more and its handles expire."))
    max_tokens_per_query: int = Field(256, ge=8, le=8192, description=(
        "Tokens of one query that are embedded (the embedding model's own limit applies when smaller)."))


class RecallSettings(_Group):
    about: ClassVar[str] = "The recall tool"

    max_chars: int = Field(
        4000, ge=1200, le=12000, description="Length cap of a recall response when the caller names none."
    )
    llm: bool = Field(False, description=(
        "Let the helper model plan recalls and condense the evidence into a cited answer (only when it runs on "
        "this computer)."))
    llm_timeout_sec: float = Field(30.0, ge=1.0, le=600.0,
                                   description="One deadline for a recall's planning and answering, in seconds.")
    run_budget: RunBudgetSettings = Field(default_factory=RunBudgetSettings)


class ChatSettings(_Group):
    about: ClassVar[str] = "Chat with your memory: a model researches with the read tools, then answers citing them"

    provider: Literal["local", "ollama", "vllm", "openai", "anthropic"] = Field(
        "local", description=("Where the chat model runs; local keeps every prompt on this computer (the others "
                              "receive what research reads, with secrets redacted)."))
    base_url: str = Field("", description="URL of the ollama/vLLM/OpenAI-compatible server for chat (empty: its "
                                          "default).")
    _no_credentials = field_validator("base_url")(classmethod(lambda cls, value: _without_credentials(value)))
    remote_model: str = Field("", description="The chat model's name at a provider other than local.")
    local_model: str = Field("qwen3.5-4b", min_length=1, description=(
        "The chat model on this computer: a manifest id (qwen3.5-4b is shared with the helper when file, context "
        "and GPU layers match), a .gguf path, owner/repo/file.gguf, or an https link."))
    _no_link_credentials = field_validator("local_model")(
        classmethod(lambda cls, value: _link_without_credentials(value)))
    n_ctx: int = Field(8192, ge=1024, le=262144, description="The chat model's context length in tokens.")
    n_gpu_layers: int = Field(-1, ge=-1, le=1000, description="Layers of the chat model offloaded to the GPU; -1 all, "
                                                               "0 none.")
    max_tokens: int = Field(1024, ge=64, le=32768, description="Longest reply the model may write in one step.")
    tool_format: Literal["auto", "qwen-xml", "hermes", "llama3", "mistral", "none"] = Field("auto", description=(
        "How the local model writes tool calls; auto asks the model's own chat template, none chats without tools."))
    research_no_progress_rounds: int = Field(4, ge=1, le=100, description=(
        "Research ends after this many rounds in a row that found no new evidence."))
    research_timeout_sec: float = Field(300.0, ge=5.0, le=7200.0, description=(
        "Research ends after this many seconds; the answer then gets its own time."))
    analysis_workers: int = Field(2, ge=0, le=8, description=(
        "Readers that take turns over the sections of a question too long for the model's context (one at a "
        "time); 0: no section analysis, and such a question is refused."))
    research_token_budget: int = Field(65536, ge=1024, le=4_194_304, description=(
        "Research ends once its model calls have read and written this many tokens."))
    answer_timeout_sec: float = Field(120.0, ge=5.0, le=3600.0, description=(
        "Time the final, tools-free answer may take."))


class ServiceSettings(_Group):
    about: ClassVar[str] = "The local MCP service"

    port: int = Field(0, ge=0, le=65535, description="Loopback port of the service; 0 picks a free one.")
    start_timeout_sec: float = Field(
        60.0, ge=1.0, le=600.0, description="How long `engram mcp` waits for a service it started to answer.")


class DesktopSettings(_Group):
    about: ClassVar[str] = "The tray app"

    start_at_login: bool = Field(False, description=(
        "Start the tray app when you log in (the tray app writes its login entry when it starts with this on, "
        "and writes or removes it when you change this in its window)."))
    notifications: bool = Field(True, description="Show tray notifications for finished long jobs and errors.")
    open_with: str = Field("auto", description=(
        "How a result's Open shows its file: auto (an editor on this computer that goes to the line, the "
        "connected ones first, else the default app), system (the default app), or a command such as "
        "'code --goto {file}:{line}'."))

    @field_validator("open_with")
    @classmethod
    def _open_with(cls, value: str) -> str:
        value = value.strip()
        if value in ("auto", "system"):
            return value
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"the command cannot be read ({exc}); quote a path that holds spaces") from None
        if not words or not any("{file}" in w for w in words[1:]):
            raise ValueError("use auto, system, or a command that names the file as {file} (and the line as "
                             "{line}), e.g. code --goto {file}:{line}")
        if runner := next((w for w in words if _runs_script(w)), None):
            raise ValueError(f"the command runs {runner}, which would read the file's name as code (a file named "
                             "$(…).md would run); name the editor itself, e.g. code --goto {file}:{line}")
        return value


def _without_credentials(value: str) -> str:
    if has_credentials(value):
        raise ValueError(f"the URL {CREDENTIALS_REFUSED}")
    return value


def _link_without_credentials(value: str) -> str:
    """A model named by a link is checked as a URL; a path or an id may hold an "@" of its own."""
    return _without_credentials(value) if "://" in value else value


#: Programs that run text as code: a shell, or an interpreter that takes a script on its command line.
_SCRIPT_RUNNERS = re.compile(r"(?:sh|bash|dash|zsh|ksh|mksh|ash|yash|fish|csh|tcsh|nu|ssh|busybox|cmd|powershell|pwsh|env|xargs|osascript|python[\d.]*|perl[\d.]*|"
                             r"ruby[\d.]*|node|nodejs|php[\d.]*|lua[\d.]*|tclsh|wish)(?:\.exe)?", re.I)


def _runs_script(word: str) -> bool:
    """Whether ``word`` names a shell or an interpreter (``/bin/sh``, ``bash``, ``python3``, ``cmd.exe``)."""
    name = word.replace("\\", "/").rsplit("/", 1)[-1]
    return bool(_SCRIPT_RUNNERS.fullmatch(name))


class Settings(BaseModel):
    """Every setting, one group per concern. Build it with ``settings_file.load_settings``."""

    model_config = ConfigDict(extra="forbid")

    store: StoreSettings = Field(default_factory=StoreSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    helper: HelperSettings = Field(default_factory=HelperSettings)
    tagger: TaggerSettings = Field(default_factory=TaggerSettings)
    summarizer: SummarizerSettings = Field(default_factory=SummarizerSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)
    upkeep: UpkeepSettings = Field(default_factory=UpkeepSettings)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    desktop: DesktopSettings = Field(default_factory=DesktopSettings)


def _groups(model: type[BaseModel], prefix: str = "") -> dict[str, type[_Group]]:
    found: dict[str, type[_Group]] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, _Group):
            path = f"{prefix}{name}"
            found[path] = annotation
            found.update(_groups(annotation, path + "."))
    return found


#: Every group by its dotted path ("store", "helper", "helper.local", …).
GROUPS: dict[str, type[_Group]] = _groups(Settings)


def is_group_field(group: str, name: str) -> bool:
    """Whether ``group.name`` is a sub-group rather than a setting."""
    return f"{group}.{name}" in GROUPS


def split_key(key: str) -> tuple[str, str]:
    """``"helper.local.n_ctx"`` → ``("helper.local", "n_ctx")`` (no validation)."""
    group, _, name = key.rpartition(".")
    return group, name


def setting_keys() -> list[str]:
    """Every ``group.key`` (groups may nest: ``helper.local.model``), in declaration order."""
    return [f"{group}.{name}" for group, model in GROUPS.items() for name in model.model_fields
            if not is_group_field(group, name)]


def describe_key(key: str) -> dict[str, Any]:
    """The description, default and accepted values of one ``group.key`` (no validation of ``key``)."""
    group, name = split_key(key)
    field = GROUPS[group].model_fields[name]
    return {"description": field.description or "", "default": field.get_default(call_default_factory=True),
            "accepts": accepted_values(key)}


def accepted_values(key: str) -> str:
    """A short human description of what ``key`` accepts, e.g. ``an integer from 1 to 50``."""
    group, name = split_key(key)
    field = GROUPS[group].model_fields[name]
    annotation = field.annotation
    bounds = {type(m).__name__: m for m in field.metadata}
    lo = getattr(bounds.get("Ge"), "ge", None)
    hi = getattr(bounds.get("Le"), "le", None)
    if annotation is bool:
        return "true or false"
    if annotation in (int, float):
        kind = "an integer" if annotation is int else "a number"
        if lo is not None and hi is not None:
            return f"{kind} from {lo} to {hi}"
        return kind
    if annotation == list[str]:
        return "a list of strings (JSON, or comma-separated)"
    if typing.get_origin(annotation) is Literal:
        return "one of: " + ", ".join(str(a) for a in typing.get_args(annotation))
    for m in field.metadata:
        if getattr(m, "pattern", None) == WORKSPACE_PATTERN:
            return "a workspace name: lowercase letters, digits and dashes, starting with a letter or digit, 1–40 long"
    return "a non-empty string"
