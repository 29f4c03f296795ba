"""Turning chunks and notes into store rows: memory rows, their graph edges, their ids."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ..store.schema import ENTITY_PREFIX, SOURCE_PREFIX
from .chunking import Chunk
from .entities import extract_entities
from .tagging import deterministic_tags

ID_LENGTH = 12
#: ``supersedes`` (a memory to the one it replaced) weighs nothing: the graph channel does not walk it.
#: ``duplicate_of`` (a captured turn's id to the memory it was counted on) is bookkeeping, never walked either.
#: ``may_update`` (a new note alike to an older one with a detail changed) and ``keep_both`` (a person said both are
#: true) record upkeep's questions and answers about a pair: never walked.
RELATION_WEIGHTS = {"next": 1.0, "mentions": 1.0, "part_of": 0.5, "supersedes": 0.0, "duplicate_of": 0.0,
                    "may_update": 0.0, "keep_both": 0.0}


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def chunk_id(source: str, index: int, content: str) -> str:
    """Deterministic id of a chunk: the same file content always gets the same ids."""
    return _digest(source, str(index), content)[:ID_LENGTH]


def new_memory_id() -> str:
    return uuid.uuid4().hex[:ID_LENGTH]


def content_hash(text: str) -> str:
    return _digest(text)[:16]


def embedding_text(title: str, content: str) -> str:
    """What the embedding model sees: the heading path, then the text."""
    return f"{title}\n{content}" if title else content


def edge(src: str, dst: str, relation: str, origin: str) -> dict[str, Any]:
    return {"id": _digest(src, relation, dst)[:16], "src": src, "dst": dst, "relation": relation,
            "weight": RELATION_WEIGHTS[relation], "origin": origin}


def mention_edges(memory_id: str, text: str, origin: str) -> list[dict[str, Any]]:
    return [edge(memory_id, ENTITY_PREFIX + name, "mentions", origin) for name in extract_entities(text)]


def chunk_rows(*, source: str, project: str, kind: str, fmt: str, tags: Sequence[str], chunks: Sequence[Chunk],
               vectors: np.ndarray, now: datetime, chunk_tags: Sequence[Sequence[str]] | None = None,
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Memory rows and edges (sequence, part-of, mentions) for the chunks of one source.

    ``chunk_tags`` adds tags per chunk (e.g. a model's topics), in chunk order.
    """
    rows, edges = [], []
    ids = [chunk_id(source, c.index, c.content) for c in chunks]
    all_tags = list(dict.fromkeys([*tags, *deterministic_tags(kind, fmt, source)]))
    for n, (chunk, mid, vector) in enumerate(zip(chunks, ids, vectors)):
        extra = list(chunk_tags[n]) if chunk_tags is not None and n < len(chunk_tags) else []
        rows.append({
            "id": mid, "project": project, "source": source, "kind": kind, "type": fmt,
            "tags": list(dict.fromkeys([*all_tags, *extra])),
            "title": chunk.title, "content": chunk.content, "vector": vector, "created_at": now, "updated_at": now,
            "content_hash": content_hash(chunk.content), "chunk_index": chunk.index,
            "start_line": chunk.start_line, "end_line": chunk.end_line,
        })
        edges.append(edge(mid, SOURCE_PREFIX + source, "part_of", source))
        edges.extend(mention_edges(mid, chunk.content, source))
    edges.extend(edge(a, b, "next", source) for a, b in zip(ids, ids[1:]))
    return rows, edges


def note_row(*, memory_id: str, project: str, kind: str, type_: str, tags: Sequence[str], title: str, content: str,
             vector: np.ndarray | None, now: datetime, source: str = "") -> dict[str, Any]:
    """The memory row of a note or conversation exchange (``vector`` ``None``: not embedded yet, for an exact
    repeat that ``write_memory`` counts without it)."""
    return {
        "id": memory_id, "project": project, "source": source, "kind": kind, "type": type_,
        "tags": list(dict.fromkeys([*tags, *deterministic_tags(kind)])),
        "title": title, "content": content, "vector": vector, "created_at": now, "updated_at": now,
        "content_hash": content_hash(content), "chunk_index": 0, "start_line": 0, "end_line": 0,
    }
