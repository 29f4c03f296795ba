"""Row functions of the write tools. Every write goes through the engine's one writer."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..errors import EngramError, IngestCancelled, InvalidArgument, NotFound
from ..events import (
    IngestFailed,
    IngestFinished,
    IngestProgress,
    IngestProgressed,
    IngestStarted,
    MemoriesDeleted,
    MemoriesWritten,
    new_ingest_id,
)
from ..ingest.boundaries import Boundaries
from ..ingest.exchanges import exchange_vector, previous_exchange, remember_exchange
from ..ingest.pipeline import ChunkTagger, ingest_text
from ..ingest.pipeline import ingest_path as run_ingest
from ..ingest.records import embedding_text, mention_edges, new_memory_id, note_row
from ..ingest.tagging import ToClassify, classify, deadline_in, model_tags
from ..upkeep.writing import MAX_SUPERSEDES, Written, checked_supersedes, probably_repeated, write_memory
from . import source_names
from .datetimes import UtcDatetime
from .results import Deleted, Fact, FactChange, IngestResult, SkippedFile, Stored
from .scope import Scope

Tag = Annotated[str, Field(min_length=1, max_length=50)]
DEFAULT_PROJECT = "general"
TAGGING_SECONDS = 20.0


def store(
    scope: Scope,
    content: Annotated[str, Field(min_length=1, max_length=20000, description="The text to remember.")],
    project: Annotated[str, Field(min_length=1, max_length=100, description="Project it belongs to.")] = DEFAULT_PROJECT,
    kind: Annotated[Literal["note", "exchange"], Field(description="note, or exchange for a conversation turn.")] = "note",
    type: Annotated[str, Field(min_length=1, max_length=50, description="e.g. decision, preference, fact, todo.")] = "note",
    tags: Annotated[list[Tag], Field(max_length=16, description="Labels to filter by later.")] = [],  # noqa: B006
    title: Annotated[str, Field(max_length=200, description="A short heading.")] = "",
    supersedes: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(
        max_length=MAX_SUPERSEDES, description=(
            "Ids of memories this one replaces (a changed decision): they stay as history, left out of "
            "search unless asked for."))] = [],  # noqa: B006
) -> Stored:
    """Remember a note or a conversation exchange (the same text again is counted on the stored one; a note alike
    to a stored one with a detail changed is stored apart, and the reply says which it may update)."""
    if not content.strip():
        raise InvalidArgument("Argument 'content' is blank. It accepts 1–20,000 characters of text.")
    replaced = checked_supersedes(scope.store, scope.workspace, supersedes)
    upkeep = scope.settings.upkeep
    memory_id = new_memory_id()
    edges = mention_edges(memory_id, content, memory_id)
    now = datetime.now(UTC)

    def row(vector: np.ndarray | None, row_tags: list[str], row_type: str) -> dict[str, object]:
        return note_row(memory_id=memory_id, project=project, kind=kind, type_=row_type, tags=row_tags, title=title,
                        content=content, vector=vector, now=now)

    def write(vector: np.ndarray | None, row_tags: list[str], row_type: str) -> Written | None:
        new = row(vector, row_tags, row_type)
        return scope.writer.run(lambda: write_memory(scope.store, upkeep, new, edges, supersedes=replaced, now=now))

    # An exact repeat is counted on its memory without being embedded (or tagged) again: the writer's index knows
    # its text; if it turns out not to be one, it is embedded and written as any new memory is.
    written = write(None, tags, type) if probably_repeated(scope.store, upkeep, row(None, tags, type)) else None
    if written is None:
        if kind == "exchange":
            vector = exchange_vector(scope.embedder(), title, content, previous_exchange(scope.store, project))
        else:
            vector = scope.embedder().embed([embedding_text(title, content)])[0]
        written = write(vector, *_model_tags(scope, content, tags, type, project))
    assert written is not None  # with its vector, a memory is always written
    if kind == "exchange":
        remember_exchange(scope.store, project, content)
    scope.emit(MemoriesWritten(scope.workspace, "store", 0 if written.duplicate_of else 1))
    update = written.may_update
    return Stored(id=written.id, workspace=scope.workspace, project=project, kind=kind, entities=written.entities,
                  duplicate_of=written.duplicate_of, merged=written.merged, seen=written.seen,
                  superseded=written.superseded, may_update=update.id if update else None,
                  changes=update.changes if update else "")


def _model_tags(scope: Scope, content: str, tags: list[str], type_: str, project: str) -> tuple[list[str], str]:
    """With ``tagger.llm`` on, add the helper model's domain and topics (and its type, when the caller gave
    none); without it, or when the model cannot answer in time, the memory keeps what it has."""
    if not scope.settings.tagger.llm:
        return tags, type_
    try:
        provider = scope.provider("tagger")
    except EngramError:
        return tags, type_
    (found,) = classify(provider, [ToClassify(content, project)], deadline=deadline_in(TAGGING_SECONDS))
    if found is None:
        return tags, type_
    return [*tags, *model_tags(found)], (found.type.lower() if type_ == "note" else type_)


def _chunk_tagger(scope: Scope, project: str) -> ChunkTagger | None:
    """With ``tagger.llm`` on, classify each chunk of a source (one request each; ``tagger.llm_concurrency`` at
    once where the provider takes several)."""
    if not scope.settings.tagger.llm:
        return None
    try:
        provider = scope.provider("tagger")
    except EngramError:
        return None
    concurrency = scope.settings.tagger.llm_concurrency

    def tag(texts: list[str], source: str) -> list[list[str]]:
        found = classify(provider, [ToClassify(t, project, source) for t in texts],
                         deadline=deadline_in(TAGGING_SECONDS * max(1, len(texts) // concurrency)),
                         concurrency=concurrency)
        return [model_tags(c) if c else [] for c in found]

    return tag


def delete(
    scope: Scope,
    ids: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]] | None,
                   Field(max_length=100, description="Memory ids to delete.")] = None,
    source: Annotated[str | None, Field(max_length=2000, description="Forget an ingested source and its chunks.")] = None,
    keep_out: Annotated[bool, Field(description=(
        "A forgotten file stays out when its folder is ingested again (false: only until then)."))] = True,
) -> Deleted:
    """Delete memories by id, or forget an ingested file or text (kept out of its folder's later ingests).

    A forgotten file stays out of later ingests of its folder unless ``keep_out`` is false; ``ingest_path`` with
    ``again`` takes it back."""
    if bool(ids) == bool(source):
        raise InvalidArgument("Give either 'ids' (memory ids to delete) or 'source' (an ingested source), not both "
                              "and not neither.")
    if source:
        try:
            row = source_names.resolve(scope.store, scope.workspace, source)
        except NotFound as exc:
            raise NotFound(exc.message + " Nothing was deleted.") from None
        kept_out = keep_out and row["kind"] == "file"
        scope.writer.run(scope.store.delete_sources, [row["source"]], [row] if kept_out else [])
        scope.emit(MemoriesDeleted(scope.workspace, row["chunk_count"], source=row["source"]))
        return Deleted(workspace=scope.workspace, source=row["source"], chunks=row["chunk_count"], kept_out=kept_out)
    assert ids is not None
    found = scope.store.memories_by_ids(ids, ["id", "kind", "source"])
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"No memory with id {', '.join(missing)} in workspace '{scope.workspace}'; nothing was deleted.")
    scope.writer.run(scope.store.delete_memories, list(found))
    scope.emit(MemoriesDeleted(scope.workspace, len(found)))
    return Deleted(workspace=scope.workspace, ids=list(found))


def kg_edit(
    scope: Scope,
    action: Annotated[Literal["add", "end"], Field(description="add a fact, or end one (it stays in history).")],
    subject: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    predicate: Annotated[str | None, Field(min_length=1, max_length=100)] = None,
    object: Annotated[str | None, Field(min_length=1, max_length=500)] = None,
    project: Annotated[str, Field(min_length=1, max_length=100)] = DEFAULT_PROJECT,
    valid_from: Annotated[UtcDatetime | None, Field(description="When it became true (default now).")] = None,
    fact_id: Annotated[str | None, Field(min_length=1, max_length=64, description="The fact to end (from kg_query).")] = None,
    source: Annotated[str, Field(max_length=2000, description="Where the fact comes from.")] = "",
) -> FactChange:
    """Add a knowledge-graph fact, or end one by id."""
    now = datetime.now(UTC)
    if action == "end":
        if not fact_id:
            raise InvalidArgument("action 'end' needs 'fact_id' (printed by kg_query and by kg_edit add).")
        found = scope.store.fact(fact_id)
        if found is None:
            raise NotFound(f"No fact with id {fact_id} in workspace '{scope.workspace}'; nothing was changed.")
        if found["ended"] is not None:
            raise InvalidArgument(f"Fact {fact_id} already ended at {found['ended']:%Y-%m-%d %H:%M}.")
        scope.writer.run(scope.store.end_fact, fact_id, now)
        scope.emit(MemoriesWritten(scope.workspace, "kg_edit", 1))
        return FactChange(action="end", fact=Fact(**{**{k: found[k] for k in Fact.model_fields}, "ended": now}))
    if not (subject and predicate and object):
        raise InvalidArgument("action 'add' needs 'subject', 'predicate' and 'object'.")
    if fact_id:
        raise InvalidArgument("'fact_id' is only for action 'end'; new facts get their id from Engram.")
    fact = Fact(id="f-" + uuid.uuid4().hex[:10], project=project, subject=subject.strip(), predicate=predicate.strip(),
                object=object.strip(), valid_from=valid_from or now, source=source)
    scope.writer.run(scope.store.add_fact, {**fact.model_dump(), "created_at": now})
    scope.emit(MemoriesWritten(scope.workspace, "kg_edit", 1))
    return FactChange(action="add", fact=fact)


def ingest_content(
    scope: Scope,
    content: Annotated[str, Field(min_length=1, max_length=2_000_000, description="The text to ingest.")],
    title: Annotated[str, Field(min_length=1, max_length=200, description="Its name; ingesting the same title "
                                                                          "again replaces it.")],
    project: Annotated[str, Field(min_length=1, max_length=100)] = DEFAULT_PROJECT,
    tags: Annotated[list[Tag], Field(max_length=16)] = [],  # noqa: B006
) -> IngestResult:
    """Ingest a text (a document, a transcript) as chunks of a named source."""
    if not content.strip():
        raise InvalidArgument("Argument 'content' is blank. It accepts text of 1 to 2,000,000 characters.")
    source = "content:" + title.strip()
    with _ingest_events(scope, project, source) as events:
        n = ingest_text(scope.store, scope.writer, scope.embedder(), source=source, title=title.strip(), text=content,
                        project=project, tags=tags, settings=scope.settings.ingest, tagger=_chunk_tagger(scope, project))
        events.finished(1, n)
    return IngestResult(workspace=scope.workspace, project=project, root=source, files_listed=1, files_indexed=1,
                        chunks_written=n)


def ingest_path(
    scope: Scope,
    path: Annotated[str, Field(min_length=1, max_length=4000, description=(
        "A folder or file on this computer: an absolute path, under ingest.allowed_roots (default: your home)."))],
    project: Annotated[str | None, Field(min_length=1, max_length=100,
                                         description="Project name (default: the folder's name).")] = None,
    include: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]] | None,
                       Field(max_length=32, description="Only files matching these patterns (e.g. docs/**/*.md).")] = None,
    again: Annotated[list[Annotated[str, Field(min_length=1, max_length=4000)]] | None, Field(
        max_length=100, description="Files forgotten earlier (they are kept out of ingests) to take again.")] = None,
) -> IngestResult:
    """Ingest (or re-sync) the files under a folder: only changed files are re-embedded.

    Files forgotten earlier (``delete`` with ``source``) stay out unless named in ``again``."""
    paths = scope.services.paths
    bounds = Boundaries.of(scope.settings.ingest.allowed_roots, [paths.data_dir, paths.config_dir, paths.log_dir])
    target = bounds.check(path)
    name = project or target.name or DEFAULT_PROJECT
    if again:
        back = [bounds.check(p).as_posix() for p in again]
        outside = [p for p, b in zip(again, back, strict=True) if b != target.as_posix()
                   and not b.startswith(target.as_posix().rstrip("/") + "/")]
        if outside:
            raise InvalidArgument(f"'again' names files outside {target}: {', '.join(outside[:5])}. It takes files "
                                  "under the ingested path that were forgotten earlier.")
        scope.writer.run(scope.store.let_in, back)
    with _ingest_events(scope, name, str(target)) as events:
        report = run_ingest(scope.store, scope.writer, scope.embedder(), target, project=name,
                            settings=scope.settings.ingest,
                            vector_index_min_rows=scope.settings.store.vector_index_min_rows, include=include,
                            progress=events.progress, never=bounds.own)
        events.finished(report.files_indexed, report.chunks_written)
    return IngestResult(
        workspace=scope.workspace, project=name, root=report.root, files_listed=report.files_listed,
        files_indexed=report.files_indexed, files_unchanged=report.files_unchanged,
        files_removed=report.files_removed, chunks_written=report.chunks_written, seconds=round(report.seconds, 3),
        skipped=[SkippedFile(path=s.path, reason=s.reason) for s in report.skipped],
    )


class _IngestEvents:
    """The events of one ingest: its progress (held here while indexing is paused) and its end."""

    def __init__(self, scope: Scope, ingest: str) -> None:
        self.scope = scope
        self.ingest = ingest
        self.started = time.monotonic()

    def progress(self, progress: IngestProgress) -> None:
        self.scope.emit(IngestProgressed(self.ingest, self.scope.workspace, progress))
        # Between batches: what is written stays written; the next batch waits while indexing is paused and
        # never starts once this ingest is cancelled.
        self.scope.services.indexing.checkpoint(self.ingest)

    def finished(self, files_indexed: int, chunks_written: int) -> None:
        self.scope.emit(IngestFinished(self.ingest, self.scope.workspace, files_indexed, chunks_written,
                                       round(time.monotonic() - self.started, 3)))


@contextmanager
def _ingest_events(scope: Scope, project: str, root: str) -> Iterator[_IngestEvents]:
    """Tell subscribers an ingest started, and that it failed if the body raises (the error goes on up)."""
    events = _IngestEvents(scope, new_ingest_id())
    gate = scope.services.indexing
    gate.started(events.ingest)
    scope.emit(IngestStarted(events.ingest, scope.workspace, project, root))
    try:
        yield events
    except EngramError as exc:
        scope.emit(IngestFailed(events.ingest, scope.workspace, exc.title, exc.message,
                                cancelled=isinstance(exc, IngestCancelled)))
        raise
    except BaseException:
        scope.emit(IngestFailed(events.ingest, scope.workspace, "Ingest stopped",
                                "The ingest stopped unexpectedly; what its finished batches wrote stays written."))
        raise
    finally:
        gate.ended(events.ingest)
