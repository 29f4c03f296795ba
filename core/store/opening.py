"""Opening a workspace: a LanceDB database in a local folder, or under a prefix of an S3-compatible bucket.

Both kinds hold the same tables and a record of the schema version, the vector size and the embedding model
that wrote them: ``workspace.json`` beside a local database, a one-row-per-key ``workspace`` table in a bucket
(the bucket is the one place every machine of a team sees). Opening never rewrites existing tables; a store
written by a newer schema version, or for another embedding size, is refused with a clear error instead of
being touched. Creating the tables is a write, so only the engine's writer does it.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import SchemaTooNew, WorkspaceError, WorkspaceNotFound
from ..fileio import atomic_write_bytes
from .bucket_errors import bucket_failure, unknown_failure
from .commit_races import retrying_lost_races
from .connection import BucketConnection
from .fts import create_fts
from .schema import (
    DIGESTS_SCHEMA,
    EDGES_SCHEMA,
    FACTS_SCHEMA,
    MERGE_FIELDS,
    MERGED_UNKEPT_SQL,
    SCHEMA_VERSION,
    SEARCH_TEXT_SQL,
    SOURCES_SCHEMA,
    UPKEEP_FIELDS,
    memories_schema,
)
from .workspace import WorkspaceStore
from .writer import require_writer

logger = logging.getLogger(__name__)

META_FILE = "workspace.json"
#: The table that records a shared workspace's schema version, vector size and embedding model.
META_TABLE = "workspace"
_META_SCHEMA = pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string(), nullable=False)])


def table_schemas(dimensions: int) -> dict[str, pa.Schema]:
    return {"memories": memories_schema(dimensions), "sources": SOURCES_SCHEMA, "facts": FACTS_SCHEMA,
            "edges": EDGES_SCHEMA, "digests": DIGESTS_SCHEMA}


def open_workspace(name: str, folder: Path, *, dimensions: int, embed_model: str, read_consistency: timedelta,
                   create: bool, bucket: BucketConnection | None = None) -> WorkspaceStore:
    """Open (and with ``create``, first create) workspace ``name``: in ``folder``, or in ``bucket`` when shared
    (``folder`` then holds only what stays on this machine).

    Raises:
        WorkspaceNotFound: it does not exist and ``create`` is false.
        WorkspaceError: it was built for another embedding size, or cannot be read; for a bucket also the typed
            bucket errors (credentials refused, bucket missing, access denied).
        BucketUnreachable: the bucket's storage cannot be reached.
        SchemaTooNew: it was written by a newer Engram.
    """
    if bucket is not None:
        return _open_in_bucket(name, folder, bucket, dimensions=dimensions, embed_model=embed_model,
                               read_consistency=read_consistency, create=create)
    import lancedb

    meta_path = folder / META_FILE
    if not meta_path.is_file():
        if not create:
            raise WorkspaceNotFound(f"Workspace '{name}' does not exist yet; it is created by the first write "
                                    "(remember, ingest) into it.")
        require_writer()
        try:
            atomic_write_bytes(meta_path, json.dumps(_new_meta(dimensions, embed_model), indent=2).encode())
        except OSError as exc:
            logger.warning("creating workspace '%s' in %s failed: %s", name, folder, exc)
            raise WorkspaceError(f"Cannot create workspace '{name}': {exc.strerror or 'the file system refused'}. "
                                 "Check that Engram's data folder is writable and its disk is not full (the "
                                 "details are in Engram's log).") from exc
    meta = _checked_meta(name, _read_meta_file(name, meta_path), dimensions)
    try:
        db = lancedb.connect(folder / "lance", read_consistency_interval=read_consistency)
        _create_missing_tables(db, dimensions)
        if meta["schema_version"] < SCHEMA_VERSION:
            require_writer()
            _migrate(db)
            atomic_write_bytes(meta_path, json.dumps({**meta, "schema_version": SCHEMA_VERSION}, indent=2).encode())
        return WorkspaceStore(name, folder, db, dimensions)
    except (OSError, ValueError, RuntimeError) as exc:
        logger.warning("opening workspace '%s' in %s failed: %s", name, folder, exc)
        raise WorkspaceError(f"Cannot open workspace '{name}': its database cannot be read (the details are in "
                             "Engram's log). Check that Engram's data folder is readable; if the workspace's "
                             "files are damaged, restore them from a backup or use another workspace.") from exc


def _open_in_bucket(name: str, folder: Path, bucket: BucketConnection, *, dimensions: int,
                    embed_model: str, read_consistency: timedelta, create: bool) -> WorkspaceStore:
    import lancedb

    location = bucket.location
    writing = False

    def prepare(db: Any) -> None:
        """Create the workspace (or the tables an older one lacks) and migrate it: each step's commit may lose
        a race with another machine doing the same at the same moment, and is then tried again."""
        nonlocal writing
        existing = set(db.list_tables().tables)
        if META_TABLE not in existing:
            if existing:
                raise WorkspaceError(f"{location.uri} holds tables that are not an Engram workspace "
                                     f"({', '.join(sorted(existing)[:5])}). Choose an empty prefix, e.g. "
                                     f"{location.uri.rstrip('/')}/engram.")
            if not create:
                raise WorkspaceNotFound(f"{location.uri} holds no Engram workspace yet; `engram workspace add` "
                                        "creates one there.")
            require_writer()
            writing = True
            rows = [{"key": k, "value": str(v)} for k, v in _new_meta(dimensions, embed_model).items()]
            # Two machines may create it at once: the first commit wins, the other opens what the first wrote.
            db.create_table(META_TABLE, data=pa.Table.from_pylist(rows, schema=_META_SCHEMA), exist_ok=True)
            writing = False
        raw = {r["key"]: r["value"] for r in db.open_table(META_TABLE).search().limit(None).to_arrow().to_pylist()}
        meta = _checked_meta(name, _parse_meta(name, raw, location.uri), dimensions)
        writing = True
        _create_missing_tables(db, dimensions)
        if meta["schema_version"] < SCHEMA_VERSION:
            require_writer()
            _migrate(db)
            db.open_table(META_TABLE).merge_insert("key").when_matched_update_all().when_not_matched_insert_all() \
                .execute(pa.Table.from_pylist([{"key": "schema_version", "value": str(SCHEMA_VERSION)}],
                                              schema=_META_SCHEMA))
        writing = False

    try:
        db = lancedb.connect(location.uri, storage_options=bucket.options, read_consistency_interval=read_consistency)
        retrying_lost_races(lambda: prepare(db), f"opening shared workspace '{name}'", also=_being_created)
        return WorkspaceStore(name, folder, db, dimensions, location)
    except (OSError, ValueError, RuntimeError) as exc:
        found = bucket_failure(exc, name, location, "opening", write=writing)
        (logger.info if found else logger.warning)("opening shared workspace '%s' at %s failed: %s", name,
                                                   location.uri, exc)
        raise (found or unknown_failure(name, location, "opening")) from exc


def _being_created(exc: BaseException) -> bool:
    """Whether ``exc`` says a table is listed but has no version yet: another machine is creating it (its files
    are there, its first commit is not), so the next attempt opens it."""
    return "was not found" in str(exc)


def _create_missing_tables(db: Any, dimensions: int) -> None:
    """A store from an older schema gets the tables it lacks (its data untouched); a current one: nothing."""
    existing = set(db.list_tables().tables)
    schemas = table_schemas(dimensions)
    missing = [t for t in schemas if t not in existing]
    if not missing:
        return
    require_writer()
    for table in missing:
        db.create_table(table, schema=schemas[table], exist_ok=True)
    if "memories" in missing:
        create_fts(db.open_table("memories"))


def _migrate(db: Any) -> None:
    """Bring an older store's tables to this schema version (its rows are kept; nothing is re-embedded).

    From version 2: ``memories.search_text`` is computed from each row's title and content, and the full-text
    index moves from ``content`` to it (the title, a speaker and date or a heading path, becomes searchable).
    From version 3: the upkeep columns are added, empty (``UPKEEP_FIELDS``: read as seen once, current).
    From version 4: the merge columns (``MERGE_FIELDS``): no merged texts, and every sighting counted before as one
    whose text was not kept (``merged_unkept``).
    """
    memories = db.open_table("memories")
    _to_search_text(memories)
    missing = [f for f in UPKEEP_FIELDS if f.name not in memories.schema.names]
    if missing:
        # Another machine migrating a shared workspace at once may have added them meanwhile: the retry (a lost
        # race) finds them there.
        require_writer()
        memories.add_columns(missing)
        logger.info("added the upkeep columns to a workspace's memories (schema 3 to 4)")
    names = memories.schema.names
    if MERGE_FIELDS[1].name not in names:
        require_writer()
        memories.add_columns({MERGE_FIELDS[1].name: MERGED_UNKEPT_SQL})
    if MERGE_FIELDS[0].name not in names:
        require_writer()
        memories.add_columns([MERGE_FIELDS[0]])
        logger.info("added the merge columns to a workspace's memories (schema 4 to 5)")


def _to_search_text(memories: Any) -> None:
    """Schema 2 to 3: ``search_text`` and its full-text index, each step checked on its own."""
    indexes = [(i.name, i.index_type, list(i.columns)) for i in memories.list_indices()]
    old_fts = [name for name, kind, columns in indexes if kind == "FTS" and columns == ["content"]]
    has_new_fts = any(kind == "FTS" and columns == ["search_text"] for _, kind, columns in indexes)
    if "search_text" in memories.schema.names and has_new_fts and not old_fts:
        return
    # Each step is checked on its own: machines migrating a shared workspace at once each do what is still
    # undone, and one whose commit lost a race (and retries) finds the steps another machine did.
    require_writer()
    if "search_text" not in memories.schema.names:
        memories.add_columns({"search_text": SEARCH_TEXT_SQL})
    if not has_new_fts:
        create_fts(memories)
    for name in old_fts:
        try:
            memories.drop_index(name)
        except (ValueError, RuntimeError, OSError):  # dropped by another machine meanwhile: fine; else raise
            if name in {i.name for i in memories.list_indices()}:
                raise
    logger.info("moved the full-text index of a workspace to title and content (schema 2 to 3)")


def _new_meta(dimensions: int, embed_model: str) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "dimensions": dimensions, "embed_model": embed_model}


def _read_meta_file(name: str, meta_path: Path) -> dict[str, Any]:
    try:
        meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
        return _parse_meta(name, meta, str(meta_path))
    except (OSError, ValueError) as exc:
        logger.warning("reading %s of workspace '%s' failed: %r", meta_path, name, exc)
        raise _damaged(name, META_FILE) from exc


def _parse_meta(name: str, raw: dict[str, Any], where: str) -> dict[str, Any]:
    try:
        return {"schema_version": int(raw["schema_version"]), "dimensions": int(raw["dimensions"]),
                "embed_model": str(raw.get("embed_model", "?"))}
    except (KeyError, TypeError, ValueError) as exc:
        logger.warning("the workspace record of '%s' in %s is damaged: %r", name, where, raw)
        raise _damaged(name, "workspace record") from exc


def _damaged(name: str, what: str) -> WorkspaceError:
    return WorkspaceError(f"Workspace '{name}' cannot be opened: its {what} is unreadable or damaged (the details are "
                          "in Engram's log). Restore the workspace from a backup, or use another workspace.")


def _checked_meta(name: str, meta: dict[str, Any], dimensions: int) -> dict[str, Any]:
    if meta["schema_version"] > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"Workspace '{name}' was written by a newer Engram (store schema {meta['schema_version']}; this version "
            f"reads up to {SCHEMA_VERSION}). Update Engram to open it; it has not been changed.")
    if meta["dimensions"] != dimensions:
        raise WorkspaceError(
            f"Workspace '{name}' holds {meta['dimensions']}-dimensional vectors from '{meta['embed_model']}', "
            f"but the embedding model in use gives {dimensions}. Switch embed.model back, or use a new workspace.")
    return meta
