"""Table schemas of a workspace store, and the version that guards them.

Bump ``SCHEMA_VERSION`` whenever a table gains, loses or changes a column; a store written with a
higher version than this code knows is refused rather than modified.
"""

from __future__ import annotations

import pyarrow as pa

# Version 1: memories, sources, facts, edges; 2 added digests; 3 added memories.search_text (the heading or title
# and the content, which the full-text index covers); 4 added the upkeep columns of memories (``UPKEEP_FIELDS``).
# Opening an older store adds the tables it lacks; from 2 to 3, the column (computed from the stored title and
# content) and its full-text index; from 3 to 4, the upkeep columns, empty (read as their defaults); 5 added the
# merge columns (``MERGE_FIELDS``): from 4 to 5 ``merged_texts`` empty and ``merged_unkept`` from ``seen_count``.
SCHEMA_VERSION = 5

_TS = pa.timestamp("us", tz="UTC")


#: The memories' upkeep columns (schema 4), each nullable as columns added to an older store are: ``dedup_key`` (the
#: exact-duplicate key of a note or exchange; empty for file chunks and for rows stored before schema 4),
#: ``seen_count`` (how many times it was written; empty: once), ``last_seen`` (when it was last written; empty: its
#: ``updated_at``), ``valid_to`` (when a newer memory superseded it; empty: current) and ``superseded_by`` (that
#: memory's id).
UPKEEP_FIELDS = (
    pa.field("dedup_key", pa.string(), nullable=True),
    pa.field("seen_count", pa.int32(), nullable=True),
    pa.field("last_seen", _TS, nullable=True),
    pa.field("valid_to", _TS, nullable=True),
    pa.field("superseded_by", pa.string(), nullable=True),
)


#: The memories' merge columns (schema 5): ``merged_texts`` (JSON, ``core/upkeep/versions.py``: the texts merged
#: into a memory as near duplicates or by ``engram merge``, each with its own id, times and tags, and the memory's own
#: text before the first merge; empty: none) and ``merged_unkept`` (sightings counted on the memory before schema 5,
#: whose texts were not kept; empty: none).
MERGE_FIELDS = (
    pa.field("merged_texts", pa.string(), nullable=True),
    pa.field("merged_unkept", pa.int32(), nullable=True),
)
#: ``merged_unkept`` as a store migrating from schema 4 computes it: every sighting after the first.
MERGED_UNKEPT_SQL = "CAST(NULLIF(seen_count - 1, 0) AS INT)"


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
        # What the lexical channel matches: ``search_text(title, content)``. Nullable, as a column added to an
        # older store by an SQL expression is.
        pa.field("search_text", pa.string(), nullable=True),
        *UPKEEP_FIELDS,
        *MERGE_FIELDS,
    ])


def search_text(title: str, content: str) -> str:
    """The text the full-text index covers: the title (a speaker and date, a heading path), then the content.

    Matches the expression an older store's rows get it by (``SEARCH_TEXT_SQL``).
    """
    return f"{title}\n{content}"


#: ``search_text`` as LanceDB computes it for the rows of a store older than schema version 3.
SEARCH_TEXT_SQL = "concat(title, chr(10), content)"


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
#: The ``kind`` of a source row that stands for a file the person forgot: it holds no chunks, is left out of every
#: listing and count, and keeps a later ingest of its folder from bringing the file back.
EXCLUDED_KIND = "excluded"
