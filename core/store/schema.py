"""Table schemas of a workspace store, and the version that guards them.

Bump ``SCHEMA_VERSION`` whenever a table gains, loses or changes a column; a store written with a
higher version than this code knows is refused rather than modified.
"""

from __future__ import annotations

import pyarrow as pa

# Version 1: memories, sources, facts, edges; 2 added digests. Opening an older store adds the tables it
# lacks (and nothing else changes).
SCHEMA_VERSION = 2

_TS = pa.timestamp("us", tz="UTC")


def memories_schema(dimensions: int) -> pa.Schema:
    """Every retrievable record: notes, conversation exchanges, file chunks, inline content."""
    return pa.schema([
        pa.field("id", pa.string(), nullable=False),
        pa.field("project", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),  # note, exchange, chunk or content
        pa.field("type", pa.string(), nullable=False),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("content", pa.string(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), dimensions), nullable=False),
        pa.field("created_at", _TS, nullable=False),
        pa.field("updated_at", _TS, nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
        pa.field("chunk_index", pa.int32(), nullable=False),
        pa.field("start_line", pa.int32(), nullable=False),
        pa.field("end_line", pa.int32(), nullable=False),
    ])


SOURCES_SCHEMA = pa.schema([
    pa.field("source", pa.string(), nullable=False),
    pa.field("project", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("root", pa.string(), nullable=False),
    pa.field("mtime", pa.float64(), nullable=False),
    pa.field("size", pa.int64(), nullable=False),
    pa.field("content_hash", pa.string(), nullable=False),
    pa.field("chunk_count", pa.int32(), nullable=False),
    pa.field("summary", pa.string(), nullable=False),
    pa.field("ingested_at", _TS, nullable=False),
])

FACTS_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("project", pa.string(), nullable=False),
    pa.field("subject", pa.string(), nullable=False),
    pa.field("predicate", pa.string(), nullable=False),
    pa.field("object", pa.string(), nullable=False),
    pa.field("valid_from", _TS, nullable=False),
    pa.field("ended", _TS, nullable=True),
    pa.field("source", pa.string(), nullable=False),
    pa.field("created_at", _TS, nullable=False),
])

EDGES_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("src", pa.string(), nullable=False),
    pa.field("dst", pa.string(), nullable=False),
    pa.field("relation", pa.string(), nullable=False),
    pa.field("weight", pa.float32(), nullable=False),
    # The memory id or source whose (re)ingest wrote this edge; replaced together with it.
    pa.field("origin", pa.string(), nullable=False),
])

DIGESTS_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("level", pa.string(), nullable=False),  # source | entity | scope | workspace
    pa.field("key", pa.string(), nullable=False),  # the source, entity name or project it summarises
    pa.field("project", pa.string(), nullable=False),
    pa.field("title", pa.string(), nullable=False),
    pa.field("content", pa.string(), nullable=False),
    pa.field("children_hash", pa.string(), nullable=False),
    pa.field("children", pa.int32(), nullable=False),
    pa.field("updated_at", _TS, nullable=False),
])

#: Node-id prefixes of the graph plane. Memory ids carry no prefix.
ENTITY_PREFIX = "e:"
SOURCE_PREFIX = "s:"
