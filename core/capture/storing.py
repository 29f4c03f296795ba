"""Captured turns stored as exchange memories of their session, within the capture caps.

Each turn becomes one ``exchange`` memory, embedded after the exchange before it as ``store`` embeds one, with
the session as its source (``session:<editor>/<session id>``): forgetting that source (``delete`` with
``source``) forgets every turn of the session. A turn's memory id is made from its editor, session and turn id,
so a turn read again is recognised: unchanged (or shorter: a rewritten file) it is skipped, grown (its answer went on after the
read) it is replaced in place. New turns stop at the caps (``capture.turns_per_session``, ``capture.turns_per_day``,
``capture.chars_per_day``); those left out are counted, never stored later by surprise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from ..embedding import Embedder
from ..events import EngineEvent, MemoriesWritten
from ..ingest.exchanges import exchange_vector, previous_exchange, remember_exchange
from ..ingest.records import content_hash, edge, mention_edges, note_row
from ..models.providers import Provider
from ..settings import Settings
from ..store import WorkspaceStore, Writer
from ..store.schema import SOURCE_PREFIX
from ..upkeep.writing import write_new_memories
from .ledger import DayTally, SessionEntry
from .turns import Turn, exchange_text, turn_heading

SOURCE_KIND = "session"


class Scope(Protocol):
    """What capture writes through: a workspace's store and the engine's writer and embedding model (the tools'
    ``Scope`` is one; capture does not depend on the tools)."""

    @property
    def workspace(self) -> str: ...

    @property
    def store(self) -> WorkspaceStore: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def writer(self) -> Writer: ...

    def embedder(self) -> Embedder: ...

    def emit(self, event: EngineEvent) -> None: ...

    def provider(self, role: str = "helper") -> Provider: ...
CAPTURED_TAG = "captured"


def session_source(editor: str, session_id: str) -> str:
    """The source name of a captured session, e.g. ``session:claude-code/6f1c…``."""
    return f"session:{editor}/{session_id}"


def turn_memory_id(editor: str, session_id: str, turn_id: str) -> str:
    """The memory id of a captured turn: the same turn always gets the same id."""
    return "t" + hashlib.sha256(f"{editor}\0{session_id}\0{turn_id}".encode()).hexdigest()[:15]


@dataclass(frozen=True)
class Caps:
    """What capture may still store: of this session, and today."""

    session_turns: int
    day_turns: int
    day_chars: int

    @classmethod
    def left(cls, scope: Scope, entry: SessionEntry, today: DayTally) -> Caps:
        capture = scope.settings.capture
        return cls(session_turns=max(0, capture.turns_per_session - entry.turns),
                   day_turns=max(0, capture.turns_per_day - today.turns),
                   day_chars=max(0, capture.chars_per_day - today.chars))


@dataclass(frozen=True)
class StoredTurns:
    """What one capture stored: new turns, grown turns replaced, turns already stored, turns over a cap."""

    new: int = 0
    replaced: int = 0
    unchanged: int = 0
    capped: int = 0
    #: Characters of the new turns' memories.
    chars: int = 0
    #: New turns counted on a memory already stored (the same or a near-identical text) instead of stored.
    duplicates: int = 0


def store_turns(scope: Scope, turns: Sequence[Turn], *, project: str, caps: Caps) -> StoredTurns:
    """Store ``turns`` (one session's, in order) as exchange memories of ``project``.

    Raises:
        ModelError: the embedding model failed (nothing was stored).
        StoreError: the workspace cannot be written.
    """
    if not turns:
        return StoredTurns()
    editor, session_id = turns[0].editor, turns[0].session_id
    source = session_source(editor, session_id)
    ids = [turn_memory_id(editor, session_id, t.turn_id) for t in turns]
    known = scope.store.memories_by_ids(ids, ["id", "content_hash", "content"])
    counted = scope.store.duplicate_links([i for i in ids if i not in known])
    embedder = scope.embedder()
    previous = previous_exchange(scope.store, project)
    new_rows: list[dict[str, object]] = []
    replaced_rows: list[dict[str, object]] = []
    edges: list[dict[str, object]] = []
    unchanged = capped = chars = 0
    last = ""
    now = datetime.now(UTC)
    for turn, memory_id in zip(turns, ids, strict=True):
        text = exchange_text(turn)
        link = counted.get(memory_id)
        if link is not None and link["id"] == duplicate_link(memory_id, link["dst"], text, source)["id"]:
            unchanged += 1  # counted on an earlier memory already, with this very text
            previous = text
            continue
        if memory_id in known:
            stored = known[memory_id]
            # Grown (the answer went on after the last read): replaced. The same, or shorter (a transcript
            # rewritten with less of the turn): the stored one stays.
            if stored["content_hash"] == content_hash(text) or len(text) <= len(str(stored["content"])):
                unchanged += 1
                previous = str(stored["content"])
                continue
        elif len(new_rows) >= min(caps.session_turns, caps.day_turns) or chars + len(text) > caps.day_chars:
            capped += 1
            continue
        heading = turn_heading(turn)
        row = note_row(memory_id=memory_id, project=project, kind="exchange", type_="exchange",
                       tags=[CAPTURED_TAG, editor], title=heading, content=text,
                       vector=exchange_vector(embedder, heading, text, previous), now=turn.started or now,
                       source=source)
        previous = last = text
        if memory_id in known:
            replaced_rows.append(row)
        else:
            new_rows.append(row)
            chars += len(text)
            edges += [*mention_edges(memory_id, text, source), edge(memory_id, SOURCE_PREFIX + source, "part_of", source)]
    duplicates = 0
    if new_rows or replaced_rows:
        duplicates = scope.writer.run(_write, scope, new_rows, replaced_rows, edges, source, project, now)
        remember_exchange(scope.store, project, last)
        scope.emit(MemoriesWritten(scope.workspace, "capture", len(new_rows) - duplicates + len(replaced_rows)))
    return StoredTurns(new=len(new_rows) - duplicates, replaced=len(replaced_rows), unchanged=unchanged,
                       capped=capped, chars=chars, duplicates=duplicates)


def duplicate_link(turn_memory_id: str, kept: str, text: str, source: str) -> dict[str, Any]:
    """The edge recording that the turn of ``turn_memory_id`` (with ``text``) was counted on memory ``kept``: its id
    holds the text's hash, so the same turn read again is recognised, and a turn that grew since is not."""
    link = edge(turn_memory_id, kept, "duplicate_of", source)
    return {**link, "id": hashlib.sha256(f"{link['id']}\0{content_hash(text)}".encode()).hexdigest()[:16]}


def _write(scope: Scope, new_rows: list[dict[str, object]], replaced_rows: list[dict[str, object]],
           edges: list[dict[str, object]], source: str, project: str, now: datetime) -> int:
    """On the writer: the turns (a turn that duplicates a stored memory of the project counted on it, linked to
    this session), then the session's source row (its count of turns). Returns how many turns were duplicates."""
    store = scope.store
    by_row: dict[str, list[dict[str, object]]] = {}
    for e in edges:
        by_row.setdefault(str(e["src"]), []).append(e)

    def on_duplicate(row: Mapping[str, Any], kept: str) -> list[dict[str, Any]]:
        link = [duplicate_link(str(row["id"]), kept, str(row["content"]), source)]
        session = SOURCE_PREFIX + source
        if kept in by_row or any(e.dst == session and e.relation == "part_of" for e in store.edges_from([kept])):
            return link  # already a turn of this session
        return [*link, edge(kept, session, "part_of", source)]

    written = write_new_memories(store, scope.settings.upkeep, new_rows, by_row, now=now, on_duplicate=on_duplicate)
    duplicates = sum(w.duplicate_of is not None for w in written)
    store.upsert_memories(replaced_rows)
    row = store.source(source)
    count = (int(row["chunk_count"]) if row is not None else 0) + len(new_rows) - duplicates
    now = datetime.now(UTC)
    store.upsert_sources([{
        "source": source, "project": project, "kind": SOURCE_KIND, "root": "", "mtime": now.timestamp(), "size": 0,
        "content_hash": "", "chunk_count": count, "summary": "",
        "ingested_at": row["ingested_at"] if row is not None else now}])
    return duplicates

