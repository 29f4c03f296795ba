"""One workspace's LanceDB database: its four tables, its reads, and its (writer-only) writes.

A workspace is a folder holding ``workspace.json`` (schema version, embedding model, dimensions)
and a LanceDB database. Opening never rewrites existing tables; a folder written by a newer schema
version, or for another embedding size, is refused with a clear error instead of being touched.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa

from ..errors import SchemaTooNew, StoreError, WorkspaceError, WorkspaceNotFound
from ..fileio import atomic_write_bytes
from . import filters as sql
from .schema import (
    DIGESTS_SCHEMA,
    EDGES_SCHEMA,
    FACTS_SCHEMA,
    SCHEMA_VERSION,
    SOURCE_PREFIX,
    SOURCES_SCHEMA,
    memories_schema,
)
from .timestamps import clamp_timestamps

logger = logging.getLogger(__name__)

META_FILE = "workspace.json"
WRITER_THREAD = "engram-writer"
_FTS_COLUMN = "content"
_IF_IT_KEEPS_FAILING = ("Try again; if it keeps failing, the workspace's files may be damaged: restore them from a "
                        "backup, or ingest into a new workspace.")


class NotOnWriter(AssertionError):
    """A programming error: a store write ran outside the engine's one writer thread."""


def require_writer() -> None:
    """Raise ``NotOnWriter`` unless called on the engine's writer thread."""
    if threading.current_thread().name != WRITER_THREAD:
        raise NotOnWriter("store writes must run on the writer thread (Engine.writer)")


class WorkspaceStore:
    """The tables of one workspace. Reads are safe from any thread; writes run on the writer."""

    def __init__(self, name: str, folder: Path, db: Any, dimensions: int) -> None:
        self.name = name
        self.folder = folder
        self.dimensions = dimensions
        self._db = db
        self.memories = db.open_table("memories")
        self.sources = db.open_table("sources")
        self.facts = db.open_table("facts")
        self.edges = db.open_table("edges")
        self.digests = db.open_table("digests")
        self._degrees: tuple[int, Counter[str]] | None = None
        self._degree_lock = threading.Lock()
        #: Called on the writer thread after every commit (the engine's maintenance schedule listens).
        self.on_commit: Callable[[WorkspaceStore], None] | None = None
        #: Commits since the last maintenance (writer thread only); ``None`` until first counted.
        self.pending_commits: int | None = None
        #: Each table's version after its last optimize, and after its last one once writes went quiet
        #: (read and written by the maintenance steps, on the writer thread).
        self.maintained_versions: dict[str, int] = {}
        self.settled_versions: dict[str, int] = {}

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, name: str, folder: Path, *, dimensions: int, embed_model: str,
             read_consistency: timedelta, create: bool) -> WorkspaceStore:
        """Open (and with ``create``, first create) the workspace stored in ``folder``.

        Raises:
            WorkspaceError: the folder does not exist and ``create`` is false, or it was built for
                another embedding model size, or it cannot be read.
            SchemaTooNew: the folder was written by a newer Engram.
        """
        import lancedb

        meta_path = folder / META_FILE
        if not meta_path.is_file():
            if not create:
                raise WorkspaceNotFound(f"Workspace '{name}' does not exist yet; it is created by the first write "
                                        "(remember, ingest) into it.")
            require_writer()
            meta: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "dimensions": dimensions,
                                    "embed_model": embed_model}
            try:
                atomic_write_bytes(meta_path, json.dumps(meta, indent=2).encode())
            except OSError as exc:
                logger.warning("creating workspace '%s' in %s failed: %s", name, folder, exc)
                raise WorkspaceError(f"Cannot create workspace '{name}': {exc.strerror or 'the file system refused'}. "
                                     "Check that Engram's data folder is writable and its disk is not full (the "
                                     "details are in Engram's log).") from exc
        meta = cls._read_meta(name, meta_path)
        if meta["dimensions"] != dimensions:
            raise WorkspaceError(
                f"Workspace '{name}' holds {meta['dimensions']}-dimensional vectors from '{meta['embed_model']}', "
                f"but the embedding model in use gives {dimensions}. Switch embed.model back, or use a new workspace."
            )
        try:
            db = lancedb.connect(folder / "lance", read_consistency_interval=read_consistency)
            existing = set(db.list_tables().tables)
            schemas = {"memories": memories_schema(dimensions), "sources": SOURCES_SCHEMA,
                       "facts": FACTS_SCHEMA, "edges": EDGES_SCHEMA, "digests": DIGESTS_SCHEMA}
            missing = [t for t in schemas if t not in existing]
            if missing:
                # Creating tables is a write: only the writer does it. A store from an older schema gets the
                # tables it lacks (its data is untouched); opening a current store writes nothing.
                require_writer()
                for table in missing:
                    db.create_table(table, schema=schemas[table], exist_ok=True)
                if "memories" in missing:
                    create_fts(db.open_table("memories"))
            if meta["schema_version"] < SCHEMA_VERSION:
                require_writer()
                atomic_write_bytes(meta_path, json.dumps({**meta, "schema_version": SCHEMA_VERSION}, indent=2).encode())
            return cls(name, folder, db, dimensions)
        except (OSError, ValueError, RuntimeError) as exc:
            logger.warning("opening workspace '%s' in %s failed: %s", name, folder, exc)
            raise WorkspaceError(f"Cannot open workspace '{name}': its database cannot be read (the details are in "
                                 "Engram's log). Check that Engram's data folder is readable; if the workspace's "
                                 "files are damaged, restore them from a backup or use another workspace.") from exc

    @staticmethod
    def _read_meta(name: str, meta_path: Path) -> dict[str, Any]:
        try:
            meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
            version = int(meta["schema_version"])
            int(meta["dimensions"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("reading %s of workspace '%s' failed: %r", meta_path, name, exc)
            raise WorkspaceError(f"Workspace '{name}' cannot be opened: its {META_FILE} is unreadable or damaged (the "
                                 "details are in Engram's log). Restore the workspace from a backup, or use another "
                                 "workspace.") from exc
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"Workspace '{name}' was written by a newer Engram (store schema {version}; this version reads "
                f"up to {SCHEMA_VERSION}). Update Engram to open it; it has not been changed."
            )
        return meta

    # ------------------------------------------------------------------- reads

    def _rows(self, query: Any) -> list[dict[str, Any]]:
        try:
            table = query.to_arrow()
        except (OSError, ValueError, RuntimeError) as exc:
            # The library's text can hold the filter and the data folder's paths: it goes to the log only.
            logger.warning("reading workspace '%s' failed: %s", self.name, exc)
            raise StoreError(f"Reading workspace '{self.name}' failed (the details are in Engram's log). "
                             f"{_IF_IT_KEEPS_FAILING}") from exc
        try:
            return cast(list[dict[str, Any]], table.to_pylist())
        except (OverflowError, ValueError):
            # Rows an older Engram stored with a time past year 9999 (or before year 1) in UTC.
            logger.warning("workspace '%s' holds times outside years 1–9999; they are read as the nearest time "
                           "Python holds (end or re-add such facts with kg_edit)", self.name)
        try:
            return cast(list[dict[str, Any]], clamp_timestamps(table).to_pylist())
        except (OverflowError, ValueError) as exc:
            logger.warning("reading workspace '%s' failed: %s", self.name, exc)
            raise StoreError(f"Reading workspace '{self.name}' failed (the details are in Engram's log). "
                             f"{_IF_IT_KEEPS_FAILING}") from exc

    def scan(self, table: Any, where: str | None, columns: Sequence[str] | None = None,
             limit: int | None = None) -> list[dict[str, Any]]:
        """Rows of ``table`` matching ``where`` (unordered), at most ``limit``."""
        query = table.search()
        if where:
            query = query.where(where)
        if columns:
            query = query.select(list(columns))
        return self._rows(query.limit(limit))  # None: every matching row (plain scans only)

    def count(self, table: Any, where: str | None = None) -> int:
        try:
            return cast(int, table.count_rows(where) if where else table.count_rows())
        except (OSError, ValueError, RuntimeError) as exc:
            logger.warning("counting rows in workspace '%s' failed: %s", self.name, exc)
            raise StoreError(f"Counting rows in workspace '{self.name}' failed (the details are in Engram's log). "
                             f"{_IF_IT_KEEPS_FAILING}") from exc

    def memories_by_ids(self, ids: Iterable[str], columns: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """The memories among ``ids`` that exist, keyed by id."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        if columns is not None and "id" not in columns:
            columns = ["id", *columns]
        rows = self.scan(self.memories, sql.in_list("id", wanted), columns, limit=len(wanted))
        return {r["id"]: r for r in rows}

    def vector_search(self, vector: np.ndarray, k: int, where: str | None,
                      columns: Sequence[str], *, exact: bool = False) -> list[dict[str, Any]]:
        """The ``k`` memories nearest to ``vector`` by cosine distance, nearest first.

        Uses the vector index when there is one, unless ``exact`` asks for a full scan.
        """
        query = self.memories.search(vector, vector_column_name="vector").distance_type("cosine")
        if exact:
            query = query.bypass_vector_index()
        if where:
            query = query.where(where, prefilter=True)
        return self._rows(query.select([*columns, "_distance"]).limit(k))

    def text_search(self, text: str, k: int, where: str | None, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The ``k`` best full-text (BM25) matches for ``text``, best first.

        Raises:
            StoreError: the full-text index is missing or unreadable.
        """
        if not self.has_fts():
            raise StoreError(f"Workspace '{self.name}' has no full-text index; the next ingest rebuilds it.")
        query = self.memories.search(text, query_type="fts", fts_columns=_FTS_COLUMN)
        if where:
            query = query.where(where, prefilter=True)
        return self._rows(query.select([*columns, "_score"]).limit(k))

    def has_fts(self) -> bool:
        return any(_FTS_COLUMN in idx.columns and idx.index_type == "FTS" for idx in self.indices(self.memories))

    def indices(self, table: Any) -> list[Any]:
        try:
            return list(table.list_indices())
        except (OSError, ValueError, RuntimeError) as exc:
            logger.warning("listing indexes of workspace '%s' failed: %s", self.name, exc)
            raise StoreError(f"Listing indexes of workspace '{self.name}' failed (the details are in Engram's log). "
                             f"{_IF_IT_KEEPS_FAILING}") from exc

    def hub_degrees(self) -> Counter[str]:
        """How many memories point at each entity or source node (cached per edges-table version)."""
        version = self.edges.version
        with self._degree_lock:
            if self._degrees is not None and self._degrees[0] == version:
                return self._degrees[1]
        rows = self.edges.search().where("relation IN ('mentions', 'part_of')").select(["dst"]).limit(None).to_arrow()
        degrees: Counter[str] = Counter(rows.column("dst").to_pylist())
        with self._degree_lock:
            self._degrees = (version, degrees)
        return degrees

    # ------------------------------------------------------------------ writes

    def _table_from_rows(self, rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
        columns: dict[str, Any] = {}
        for field in schema:
            values = [r[field.name] for r in rows]
            if field.name == "vector":
                flat = np.asarray(values, dtype=np.float32).reshape(-1)
                columns[field.name] = pa.FixedSizeListArray.from_arrays(pa.array(flat), self.dimensions)
            else:
                columns[field.name] = pa.array(values, type=field.type)
        return pa.Table.from_pydict(columns, schema=schema)

    def _write(self, what: str, fn: Any) -> Any:
        require_writer()
        try:
            result = fn()
        except (OSError, ValueError, RuntimeError) as exc:
            logger.warning("writing %s to workspace '%s' failed: %s", what, self.name, exc)
            raise StoreError(f"Writing {what} to workspace '{self.name}' failed (the details are in Engram's log); "
                             "nothing was changed by the failed step. Check that the disk is not full and Engram's "
                             "data folder is writable, then try again.") from exc
        self._committed()
        return result

    def _committed(self) -> None:
        if self.pending_commits is None:
            # Commits of earlier processes count too: every unmaintained commit left (about) one small fragment.
            self.pending_commits = self.unmaintained_fragments()
        self.pending_commits += 1
        if self.on_commit is not None:
            self.on_commit(self)

    def unmaintained_fragments(self) -> int:
        """Fragments of the memories and edges tables beyond one each: roughly the commits since compaction."""
        try:
            return max(max(cast(int, t.stats()["fragment_stats"]["num_fragments"]) - 1, 0)
                       for t in (self.memories, self.edges))
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            logger.warning("reading the fragment count of workspace '%s' failed: %s", self.name, exc)
            return 0

    def add_memories(self, rows: Sequence[dict[str, Any]], edges: Sequence[dict[str, Any]]) -> None:
        """Append brand-new memories (fresh ids) and their edges: one commit per table.

        Appending costs the same however many fragments the tables hold; ``upsert_memories`` has to
        match ids against every row, which slows down as single writes pile up.
        """
        if rows:
            data = self._table_from_rows(rows, self.memories.schema)
            self._write("memories", lambda: self.memories.add(data))
        if edges:
            edge_data = self._table_from_rows(edges, EDGES_SCHEMA)
            self._write("edges", lambda: self.edges.add(edge_data))

    def upsert_memories(self, rows: Sequence[dict[str, Any]]) -> None:
        """Insert ``rows`` (replacing memories with the same id) in one commit."""
        if rows:
            data = self._table_from_rows(rows, self.memories.schema)
            self._write("memories", lambda: self.memories.merge_insert("id").when_matched_update_all()
                        .when_not_matched_insert_all().execute(data))

    def replace_sources(self, sources: Sequence[str], memory_rows: Sequence[dict[str, Any]],
                        edge_rows: Sequence[dict[str, Any]], source_rows: Sequence[dict[str, Any]]) -> None:
        """Swap the chunks (then edges, then source rows) of ``sources`` for new ones.

        The memories of all ``sources`` change in one commit, so readers see the old chunks or the new
        ones. The source rows are written last: they mark the files as done, so a crash in between
        leaves old hashes behind and the next ingest redoes those files.
        """
        if not sources:
            return
        in_sources = sql.in_list("source", sources)
        self._swap(self.memories, "id", in_sources, memory_rows, self.memories.schema, "chunks")
        self._swap(self.edges, "id", sql.in_list("origin", sources), edge_rows, EDGES_SCHEMA, "edges")
        self._swap(self.sources, "source", in_sources, source_rows, SOURCES_SCHEMA, "sources")

    def _swap(self, table: Any, key: str, scope: str, rows: Sequence[dict[str, Any]], schema: pa.Schema,
              what: str) -> None:
        """Make the rows of ``table`` matching ``scope`` exactly ``rows``, in one commit."""
        if not rows:
            self._write(what, lambda: table.delete(scope))
            return
        data = self._table_from_rows(rows, schema)
        self._write(what, lambda: table.merge_insert(key).when_matched_update_all()
                    .when_not_matched_insert_all().when_not_matched_by_source_delete(scope).execute(data))

    def upsert_sources(self, rows: Sequence[dict[str, Any]]) -> None:
        """Rewrite source rows only (e.g. a new mtime for unchanged content)."""
        if rows:
            data = self._table_from_rows(rows, SOURCES_SCHEMA)
            self._write("sources", lambda: self.sources.merge_insert("source").when_matched_update_all()
                        .when_not_matched_insert_all().execute(data))

    def append(self, table: str, data: pa.Table) -> None:
        """Append prepared rows to one table in a single commit (bulk loads; no de-duplication)."""
        target = getattr(self, table)
        self._write(table, lambda: target.add(data))

    def delete_memories(self, ids: Sequence[str]) -> None:
        """Delete memories and every edge they wrote or that points at them."""
        if ids:
            self._write("deletions", lambda: self.memories.delete(sql.in_list("id", ids)))
            self._write("deletions", lambda: self.edges.delete(
                f"{sql.in_list('origin', ids)} OR {sql.in_list('src', ids)} OR {sql.in_list('dst', ids)}"))

    def delete_sources(self, sources: Sequence[str]) -> None:
        """Forget ingested sources: their chunks, their edges and their source rows."""
        if sources:
            self._write("deletions", lambda: self.memories.delete(sql.in_list("source", sources)))
            self._write("deletions", lambda: self.edges.delete(
                f"{sql.in_list('origin', sources)} OR "
                f"{sql.in_list('dst', [SOURCE_PREFIX + s for s in sources])}"))
            self._write("deletions", lambda: self.sources.delete(sql.in_list("source", sources)))

    def replace_digests(self, rows: Sequence[dict[str, Any]], stale_ids: Sequence[str]) -> None:
        """Upsert digests and drop those whose subject is gone, in two commits."""
        if rows:
            data = self._table_from_rows(rows, DIGESTS_SCHEMA)
            self._write("digests", lambda: self.digests.merge_insert("id").when_matched_update_all()
                        .when_not_matched_insert_all().execute(data))
        if stale_ids:
            self._write("digests", lambda: self.digests.delete(sql.in_list("id", stale_ids)))

    def add_fact(self, row: dict[str, Any]) -> None:
        data = self._table_from_rows([row], FACTS_SCHEMA)
        self._write("a fact", lambda: self.facts.add(data))

    def end_fact(self, fact_id: str, ended: Any) -> None:
        self._write("a fact", lambda: self.facts.update(where=f"id = {sql.quote(fact_id)}", values={"ended": ended}))


def create_fts(table: Any) -> None:
    """The full-text index on ``content`` (BM25, stemmed, stop words out, accents folded)."""
    from lancedb.index import FTS

    table.create_index(_FTS_COLUMN, config=FTS(with_position=False, stem=True, remove_stop_words=True,
                                               ascii_folding=True))
