"""What the tools' row functions return: plain pydantic models, serialisable as JSON."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..upkeep.versions import MergedTexts


class MergedItem(BaseModel):
    """A text merged into a memory (a near duplicate counted on it, or a memory ``engram merge`` made one with it)."""

    id: str
    content: str
    title: str = ""
    tags: list[str] = Field(default_factory=list)
    written: datetime
    merged: datetime
    how: Literal["near", "merge"]
    similarity: float
    seen: int = 1
    #: The memory shows this text in place of its own (it was the longer).
    shown: bool = False


class Memory(BaseModel):
    """A stored memory (a note, an exchange, a chunk of a file or of ingested content)."""

    id: str
    project: str
    source: str
    kind: str
    type: str
    tags: list[str] = Field(default_factory=list)
    title: str = ""
    content: str
    created_at: datetime
    updated_at: datetime
    chunk_index: int = 0
    start_line: int = 0
    end_line: int = 0
    #: How answers name the source: relative to the folder it was ingested from (tools accept both forms).
    path: str = ""
    #: How many times it was written (a duplicate written again counts on the stored memory).
    seen_count: int = 1
    last_seen: datetime | None = None
    #: When a newer memory superseded it, and which (``None``: it is current).
    valid_to: datetime | None = None
    superseded_by: str | None = None
    #: The texts merged into it (``get_memory`` reads them; empty elsewhere), oldest first.
    merged: list[MergedItem] = Field(default_factory=list)
    #: Its own text, when a longer merged text is shown in its place.
    own_text: str | None = None
    #: Sightings counted on it before Engram kept the texts of merges (their texts were not kept).
    merged_unkept: int = 0

    @classmethod
    def from_row(cls, row: Mapping[str, Any], **extra: Any) -> Any:
        fields = {k: row[k] for k in Memory.model_fields if k in row and row[k] is not None and k != "merged"}
        if row.get("merged_texts"):
            fields.update(_merged_fields(str(row["merged_texts"])))
        return cls(**fields, **extra)


def _merged_fields(raw: str) -> dict[str, Any]:
    """``merged`` and ``own_text`` from a ``merged_texts`` record (none from a damaged one: the row keeps it)."""
    try:
        record = MergedTexts.from_json(raw)
    except (ValueError, KeyError, TypeError):
        return {}
    items = [MergedItem(id=t.id, content=t.content, title=t.title, tags=list(t.tags), written=t.written,
                        merged=t.merged, how=t.how, similarity=t.similarity, seen=t.seen, shown=t.kept)
             for t in record.texts]
    own = record.own.content if record.own is not None and record.shown is not None else None
    return {"merged": items, "own_text": own}


class SearchHit(Memory):
    score: float
    channels: list[str]
    #: Cosine similarity to the query by the embedding model (``None``: the semantic channel did not read it).
    similarity: float | None = None
    #: A newer note that may update this one (not yet answered: ``tidy`` supersede or keep_both), shown before it.
    possibly_outdated_by: str | None = None
    #: The details that differ from it (``30 days → 90 days``).
    outdated_changes: str = ""


class SearchResult(BaseModel):
    query: str
    hits: list[SearchHit]
    warnings: list[str] = Field(default_factory=list)
    #: Superseded memories that matched and were left out (``history`` shows them).
    superseded_matched: int = 0


class MemoryList(BaseModel):
    items: list[Memory]
    missing: list[str] = Field(default_factory=list)
    #: id → the memories it superseded and those that superseded it, oldest first (only ids with either).
    history: dict[str, list[Memory]] = Field(default_factory=dict)


class Neighbor(Memory):
    relation: str
    via: str = ""
    hop: int = 1
    score: float = 0.0


class NeighborList(BaseModel):
    origin: str
    items: list[Neighbor]


class FileChunks(BaseModel):
    source: str
    path: str = ""
    total_chunks: int
    items: list[Memory]


class SourceInfo(BaseModel):
    source: str
    project: str
    kind: str
    root: str
    size: int
    mtime: float
    content_hash: str
    chunk_count: int
    summary: str
    ingested_at: datetime
    outline: list[str] = Field(default_factory=list)
    path: str = ""


class SourceList(BaseModel):
    items: list[SourceInfo]
    total: int
    offset: int = 0


class Fact(BaseModel):
    id: str
    project: str
    subject: str
    predicate: str
    object: str
    valid_from: datetime
    ended: datetime | None = None
    source: str = ""


class FactList(BaseModel):
    items: list[Fact]


class CountedName(BaseModel):
    name: str
    count: int


class GraphScope(BaseModel):
    project: str | None
    memories: int
    edges_by_relation: list[CountedName]
    top_entities: list[CountedName]
    predicates: list[CountedName]


class ProjectCount(BaseModel):
    project: str
    memories: int
    sources: int


class WorkspaceStatus(BaseModel):
    workspace: str
    folder: str
    memories: int
    sources: int
    facts: int
    edges: int
    by_kind: list[CountedName]
    projects: list[ProjectCount]
    indexes: list[str]
    embed_model: str
    embed_ready: bool
    embed_note: str = ""
    workspaces: list[str] = Field(default_factory=list)
    local_inference: str = ""
    run_budget: str = ""  # the run budget's limits when recall.run_budget is on
    shared_at: str = ""  # a shared workspace's bucket location ("" for a local workspace)
    read_consistency_sec: float = 0.0  # how stale a read may be (another machine's writes show up within it)
    capture: list[str] = Field(default_factory=list)  # what capture does and stored today, within its caps


class DeviceContext(BaseModel):
    os: str
    machine: str
    python: str
    cpu_count: int
    memory_total_mb: int | None
    llama_cpp: str
    gpu_offload: bool
    system_info: str
    embed_model: str
    embed_threads: int
    data_dir: str
    gpus: list[str] = Field(default_factory=list)
    gpu_choice: str = "CPU"
    build: str = "cpu"
    build_reason: str = ""
    backend_devices: list[str] = Field(default_factory=list)
    backends: list[str] = Field(default_factory=list)  # loaded from files (a GGML_BACKEND_DL build); else []
    backend_note: str = ""
    note: str = ""
    local_inference: str = ""


class WakeUp(BaseModel):
    workspace: str
    project: str | None
    memories: int
    sources: int
    projects: list[ProjectCount]
    recent: list[Memory]
    facts: list[Fact]


class Stored(BaseModel):
    id: str
    workspace: str
    project: str
    kind: str
    entities: list[str] = Field(default_factory=list)
    #: The stored memory this text duplicated (then ``id`` is it, and nothing new was stored).
    duplicate_of: str | None = None
    merged: Literal["exact", "near"] | None = None
    #: How many times the memory has been written.
    seen: int = 1
    #: The memories this one superseded.
    superseded: list[str] = Field(default_factory=list)
    #: A stored note this one is alike to but differs from in a detail: it may update it (``tidy`` supersede makes
    #: it the current one; keep_both says both are true).
    may_update: str | None = None
    #: The details that differ from ``may_update``'s, as a person reads them (``30 days → 90 days``).
    changes: str = ""


class Tidied(BaseModel):
    """What a ``tidy`` did."""

    action: Literal["supersede", "keep_both", "merge", "unmerge"]
    workspace: str
    id: str
    #: supersede: the memories superseded; keep_both: the other memory; merge: the memories merged into ``id``;
    #: unmerge: the memories the split made (or made current again).
    others: list[str] = Field(default_factory=list)
    #: merge, unmerge: how many times ``id`` is now written.
    seen: int = 0
    #: unmerge: the memory shows its own text again (a merged text had been shown in its place).
    restored_own: bool = False


class Deleted(BaseModel):
    workspace: str
    ids: list[str] = Field(default_factory=list)
    source: str | None = None
    chunks: int = 0
    kept_out: bool = False  # a forgotten file: later ingests of its folder leave it out


class ForgetItem(BaseModel):
    """One note or exchange a ``forget`` takes (or would take)."""

    id: str
    kind: str
    project: str
    title: str
    created_at: datetime | None = None


class Forgotten(BaseModel):
    """What a ``forget`` took, or (``dry_run``) would take."""

    workspace: str
    dry_run: bool
    count: int = 0  # memories in all: notes, exchanges and the chunks of the files that go whole
    memories: int = 0  # notes and exchanges
    by_kind: dict[str, int] = Field(default_factory=dict)
    by_project: dict[str, int] = Field(default_factory=dict)
    listed: list[ForgetItem] = Field(default_factory=list)  # the first notes and exchanges, oldest first
    files: list[str] = Field(default_factory=list)  # sources going whole, as list_sources names them
    file_chunks: list[int] = Field(default_factory=list)  # each one's chunks
    kept_out: int = 0  # of ``files``, the ingested files kept out of later ingests of their folder


class NearPair(BaseModel):
    """Two current memories of one project and kind near enough to be duplicates, stored apart."""

    similarity: float
    first: Memory  # the newer
    second: Memory


class PossibleUpdatePair(BaseModel):
    """A newer note alike to an older one with a detail changed: it may update it."""

    similarity: float
    newer: Memory
    older: Memory
    #: The details that differ, older → newer (``30 days → 90 days``).
    changes: list[str] = Field(default_factory=list)


class Review(BaseModel):
    """What ``review`` found to show a person: repeats, near-duplicate pairs, superseded memories."""

    workspace: str
    project: str | None = None
    threshold: float
    #: Current notes and exchanges written more than once, most often first.
    seen_again: list[Memory] = Field(default_factory=list)
    seen_again_total: int = 0
    near_pairs: list[NearPair] = Field(default_factory=list)
    near_pairs_total: int = 0
    #: Current notes and exchanges compared for near pairs, of ``current`` in all (the newest are compared).
    compared: int = 0
    current: int = 0
    #: Newer notes that may update older ones (not yet answered), newest first.
    possible_updates: list[PossibleUpdatePair] = Field(default_factory=list)
    possible_updates_total: int = 0
    #: Current memories with sightings counted before Engram kept merged texts (their texts were not kept).
    merged_before: list[Memory] = Field(default_factory=list)
    merged_before_total: int = 0
    #: Memories a newer version superseded, most recently superseded first.
    superseded: list[Memory] = Field(default_factory=list)
    superseded_total: int = 0


class FactChange(BaseModel):
    action: str
    fact: Fact


class SkippedFile(BaseModel):
    path: str
    reason: str


class IngestResult(BaseModel):
    workspace: str
    project: str
    root: str
    files_listed: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    chunks_written: int = 0
    seconds: float = 0.0
    skipped: list[SkippedFile] = Field(default_factory=list)
