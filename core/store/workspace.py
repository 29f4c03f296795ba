"""One workspace's LanceDB database: its tables, its reads, and its (writer-only) writes.

The database lies in a local folder, or under a prefix of an S3-compatible bucket for a shared workspace
(``opening`` opens both). Library failures become typed errors here (``failure``); a shared workspace's
commit that loses a race with another machine's is tried again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa

from ..errors import EngramError, StoreError
from . import filters as sql
from .bucket_errors import BucketUnreachable, bucket_failure
from .commit_races import retrying_lost_races
from .derived import Derived
from .fts import FTS_COLUMN
from .location import BucketLocation
from .memory_filter import Filters, filter_text
from .queries import Queries
from .rows import Row
from .schema import (
    DIGESTS_SCHEMA,
    EDGES_SCHEMA,
    EXCLUDED_KIND,
    FACTS_SCHEMA,
    SOURCE_PREFIX,
    SOURCES_SCHEMA,
    search_text,
)
from .timestamps import clamp_timestamps
from .writer import require_writer

logger = logging.getLogger(__name__)

#: How long a shared workspace found unreachable answers "unreachable" at once, before its storage is tried again.
UNREACHABLE_HOLD_SEC = 5.0
_IF_IT_KEEPS_FAILING = ("Try again; if it keeps failing, the workspace's files may be damaged: restore them from a "
                        "backup, or ingest into a new workspace.")


class WorkspaceStore(Queries):
    """The tables of one workspace. Reads (the named ones of ``Queries``) are safe from any thread; writes run on
    the writer."""

    def __init__(self, name: str, folder: Path, db: Any, dimensions: int, location: BucketLocation | None = None) -> None:
        self.name = name
        self.folder = folder
        #: The bucket of a shared workspace (``None``: the workspace lives in ``folder``).
        self.location = location
        #: Until when (monotonic) a shared workspace counts as unreachable, and the failure that found it so.
        self._unreachable: tuple[float, Exception] | None = None
        #: Set (per thread) while reads check a write that has not been made yet (``reads_before_write``).
        self._checking_write = threading.local()
        self.dimensions = dimensions
        self._db = db
        # The LanceDB tables: private to the store (``Queries`` names every read of them).
        self._memories = db.open_table("memories")
        self._sources = db.open_table("sources")
        self._facts = db.open_table("facts")
        self._edges = db.open_table("edges")
        self._digests = db.open_table("digests")
        #: Read once: asking the table would cost a round trip to a shared workspace's bucket at every write.
        self.memories_schema: pa.Schema = self._memories.schema
        #: What is derived from the tables and kept while this store lives, and the maintenance bookkeeping.
        self.derived = Derived()

    # ----------------------------------------------------------------- opening

    @property
    def where(self) -> str:
        """Where the workspace lives, in one line: its folder, or its bucket location."""
        return self.location.describe() if self.location else str(self.folder)

    @contextmanager
    def reads_before_write(self) -> Iterator[None]:
        """Reads made inside are a write's checks (is this text already stored? do these ids exist?): a failure
        among them says, as a failed write does, that nothing was written."""
        outer = getattr(self._checking_write, "on", False)
        self._checking_write.on = True
        try:
            yield
        finally:
            self._checking_write.on = outer

    def failure(self, exc: Exception, doing: str, *, write: bool = False) -> EngramError:
        """The error to raise for a library failure while ``doing`` something to this workspace: a typed bucket
        error when a shared workspace's storage failed, else a store error pointing at Engram's log.

        A shared workspace whose storage cannot be reached is held as such for ``UNREACHABLE_HOLD_SEC``: calls in
        that time fail at once (``reachable``) instead of each waiting for the network to fail again.
        """
        write = write or getattr(self._checking_write, "on", False)
        if self.location is not None:
            found = bucket_failure(exc, self.name, self.location, doing, write=write)
            if found is not None:  # an expected condition, said in full by the error: the library's text is detail
                logger.info("%s shared workspace '%s' failed: %s", doing, self.name, exc)
                if isinstance(found, BucketUnreachable):
                    self._unreachable = (time.monotonic() + UNREACHABLE_HOLD_SEC, exc)
                return found
        logger.warning("%s workspace '%s' failed: %s", doing, self.name, exc)
        if write:
            return StoreError(f"{doing.capitalize()} workspace '{self.name}' failed (the details are in Engram's log); "
                              "nothing was changed by the failed step. Check that the disk is not full and Engram's "
                              "data folder is writable, then try again.")
        return StoreError(f"{doing.capitalize()} workspace '{self.name}' failed (the details are in Engram's log). "
                          f"{_IF_IT_KEEPS_FAILING}")

    def reachable(self, doing: str, *, write: bool = False) -> None:
        """Raise at once while a shared workspace's storage was found unreachable moments ago.

        Raises:
            BucketUnreachable: within ``UNREACHABLE_HOLD_SEC`` of the failure that found it so.
        """
        held = self._unreachable
        if held is None or self.location is None:
            return
        write = write or getattr(self._checking_write, "on", False)
        if time.monotonic() >= held[0]:
            self._unreachable = None
            return
        found = bucket_failure(held[1], self.name, self.location, doing, write=write)
        raise found if found is not None else BucketUnreachable(str(held[1]))

    # ------------------------------------------------------------------- reads

    def _rows(self, query: Callable[[], Any]) -> list[Row]:
        """Run the query ``query()`` builds (building one can read the table: a bucket's too) into rows."""
        self.reachable("reading")
        try:
            table = query().to_arrow()
        except (OSError, ValueError, RuntimeError) as exc:
            # The library's text can hold the filter and the data folder's paths: it goes to the log only.
            raise self.failure(exc, "reading") from exc
        try:
            return cast(list[Row], table.to_pylist())
        except (OverflowError, ValueError):
            # Rows an older Engram stored with a time past year 9999 (or before year 1) in UTC.
            logger.warning("workspace '%s' holds times outside years 1–9999; they are read as the nearest time "
                           "Python holds (end or re-add such facts with kg_edit)", self.name)
        try:
            return cast(list[Row], clamp_timestamps(table).to_pylist())
        except (OverflowError, ValueError) as exc:
            logger.warning("reading workspace '%s' failed: %s", self.name, exc)
            raise StoreError(f"Reading workspace '{self.name}' failed (the details are in Engram's log). "
                             f"{_IF_IT_KEEPS_FAILING}") from exc

    def _scan(self, table: Any, where: str | None, columns: Sequence[str] | None = None,
              limit: int | None = None) -> list[Row]:
        """Rows of ``table`` matching ``where`` (unordered), at most ``limit``."""
        def query() -> Any:
            built = table.search()
            if where:
                built = built.where(where)
            if columns:
                built = built.select(list(columns))
            return built.limit(limit)  # None: every matching row (plain scans only)

        return self._rows(query)

    def _arrow(self, table: Any, where: str | None) -> pa.Table:
        """Every row of ``table`` matching ``where``, every column, as Arrow (times as stored)."""
        self.reachable("reading")
        try:
            built = table.search()
            return built.where(where).limit(None).to_arrow() if where else built.limit(None).to_arrow()
        except (OSError, ValueError, RuntimeError) as exc:
            raise self.failure(exc, "reading") from exc

    def _count(self, table: Any, where: str | None = None) -> int:
        self.reachable("counting rows in")
        try:
            return cast(int, table.count_rows(where) if where else table.count_rows())
        except (OSError, ValueError, RuntimeError) as exc:
            raise self.failure(exc, "counting rows in") from exc

    def vector_search(self, vector: np.ndarray, k: int, filters: Filters | None,
                      columns: Sequence[str], *, exact: bool = False) -> list[Row]:
        """The ``k`` memories passing ``filters`` nearest to ``vector`` by cosine distance, nearest first; each
        row's ``_distance`` is ``1 - cosine similarity``.

        Uses the vector index when there is one, unless ``exact`` asks for a full scan. The index's own distances
        are not cosine distances (IVF_HNSW_SQ gives about twice them, on quantized vectors: a cosine of 0.82 came
        back as 0.37 where the exact scan says 0.18), and rows not indexed yet are scanned exactly, so each row's
        distance is computed here from its stored vector and the rows are ordered by it.

        Raises:
            StoreError: the workspace cannot be read.
        """
        restrict = filter_text(filters)
        wanted = list(dict.fromkeys([*columns, "vector"]))

        def query() -> Any:
            built = self._memories.search(vector, vector_column_name="vector").distance_type("cosine")
            if exact:
                built = built.bypass_vector_index()
            if restrict:
                built = built.where(restrict, prefilter=True)
            return built.select([*wanted, "_distance"]).limit(k)

        rows = self._rows(query)
        if not rows:
            return rows
        unit = np.asarray(vector, dtype=np.float32).reshape(-1)
        unit = unit / (float(np.linalg.norm(unit)) or 1.0)
        stored = np.asarray([r["vector"] for r in rows], dtype=np.float32)
        norms = np.linalg.norm(stored, axis=1)
        cosines = (stored @ unit) / np.where(norms == 0, 1.0, norms)
        out = []
        for row, cosine in zip(rows, cosines, strict=True):
            row = {k: v for k, v in row.items() if k != "vector" or "vector" in columns}
            row["_distance"] = float(1.0 - cosine)
            out.append(row)
        return sorted(out, key=lambda r: r["_distance"])

    def text_search(self, text: str, k: int, filters: Filters | None, columns: Sequence[str]) -> list[Row]:
        """The ``k`` best full-text (BM25) matches for ``text`` passing ``filters``, best first.

        Raises:
            StoreError: the full-text index is missing or unreadable.
        """
        if not self.has_fts():
            raise StoreError(f"Workspace '{self.name}' has no full-text index; the next ingest rebuilds it.")
        restrict = filter_text(filters)

        def query() -> Any:
            built = self._memories.search(text, query_type="fts", fts_columns=FTS_COLUMN)
            if restrict:
                built = built.where(restrict, prefilter=True)
            return built.select([*columns, "_score"]).limit(k)

        return self._rows(query)

    def _indexes(self, table: Any) -> list[Any]:
        self.reachable("listing indexes of")
        try:
            return list(table.list_indices())
        except (OSError, ValueError, RuntimeError) as exc:
            raise self.failure(exc, "listing indexes of") from exc

    def _version(self, table: Any) -> int:
        """The version of ``table`` this store reads now (derived values are kept by it).

        Raises:
            StoreError: it cannot be read (for a shared workspace: a bucket error saying why).
        """
        self.reachable("reading")
        try:
            return cast(int, table.version)
        except (OSError, ValueError, RuntimeError) as exc:
            raise self.failure(exc, "reading") from exc

    # ------------------------------------------------------------------ writes

    def _table_from_rows(self, rows: Sequence[Row], schema: pa.Schema) -> pa.Table:
        columns: dict[str, Any] = {}
        for field in schema:
            if field.name == "search_text":  # derived, never passed in
                columns[field.name] = pa.array([search_text(r["title"], r["content"]) for r in rows], type=field.type)
                continue
            # A nullable column a row does not name (the upkeep columns of a new chunk) is empty.
            values = [r[field.name] if field.name in r or not field.nullable else None for r in rows]
            if field.name == "vector":
                flat = np.asarray(values, dtype=np.float32).reshape(-1)
                columns[field.name] = pa.FixedSizeListArray.from_arrays(pa.array(flat), self.dimensions)
            else:
                columns[field.name] = pa.array(values, type=field.type)
        return pa.Table.from_pydict(columns, schema=schema)

    def _write(self, what: str, fn: Any) -> Any:
        require_writer()
        self.reachable(f"writing {what} to", write=True)
        try:
            result = fn() if self.location is None else retrying_lost_races(
                fn, f"writing {what} to shared workspace '{self.name}'")
        except (OSError, ValueError, RuntimeError) as exc:
            raise self.failure(exc, f"writing {what} to", write=True) from exc
        self._committed()
        return result

    def _committed(self) -> None:
        # Commits of earlier processes count too: every unmaintained commit left (about) one small fragment.
        self.derived.maintenance.committed(self.unmaintained_fragments)

    def unmaintained_fragments(self) -> int:
        """Fragments of the memories and edges tables beyond one each: roughly the commits since compaction."""
        try:
            return max(max(cast(int, t.stats()["fragment_stats"]["num_fragments"]) - 1, 0)
                       for t in (self._memories, self._edges))
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            logger.warning("reading the fragment count of workspace '%s' failed: %s", self.name, exc)
            return 0

    def add_memories(self, rows: Sequence[Row], edges: Sequence[Row]) -> None:
        """Append brand-new memories (fresh ids) and their edges: one commit per table.

        Appending costs the same however many fragments the tables hold; ``upsert_memories`` has to
        match ids against every row, which slows down as single writes pile up.
        """
        if rows:
            data = self._table_from_rows(rows, self.memories_schema)
            self._write("memories", lambda: self._memories.add(data))
        if edges:
            edge_data = self._table_from_rows(edges, EDGES_SCHEMA)
            self._write("edges", lambda: self._edges.add(edge_data))

    def upsert_memories(self, rows: Sequence[Row]) -> None:
        """Insert ``rows`` (replacing memories with the same id) in one commit."""
        if rows:
            data = self._table_from_rows(rows, self.memories_schema)
            self._write("memories", lambda: self._memories.merge_insert("id").when_matched_update_all()
                        .when_not_matched_insert_all().execute(data))

    def update_memory(self, memory_id: str, values: Row) -> None:
        """Change columns of one memory in one commit (``values``: column → new value; a new title or content
        brings its ``search_text`` along)."""
        changes: dict[str, Any] = dict(values)
        if "title" in changes and "content" in changes:
            changes["search_text"] = search_text(str(changes["title"]), str(changes["content"]))
        elif "title" in changes or "content" in changes:
            old = self.memories_by_ids([memory_id], ["title", "content"]).get(memory_id)
            if old is not None:
                changes["search_text"] = search_text(str(changes.get("title", old["title"])),
                                                     str(changes.get("content", old["content"])))
        if "vector" in changes:
            changes["vector"] = np.asarray(changes["vector"], dtype=np.float32).tolist()
        self._write("a memory", lambda: self._memories.update(where=f"id = {sql.quote(memory_id)}", values=changes))

    def supersede(self, ids: Sequence[str], by: str, when: datetime, edges: Sequence[Row]) -> None:
        """Mark the memories ``ids`` superseded by memory ``by`` at ``when`` (their rows and texts stay), and add
        ``edges`` (the ``supersedes`` links from ``by``)."""
        if not ids:
            return
        self._write("a supersession", lambda: self._memories.update(
            where=sql.in_list("id", ids), values={"valid_to": when, "superseded_by": by}))
        self.add_memories([], edges)

    def unsupersede(self, ids: Sequence[str], edges: Sequence[str]) -> None:
        """Make the superseded memories ``ids`` current again (a merge undone) and drop the edges ``edges`` (ids: the
        ``supersedes`` links to them)."""
        if ids:
            self._write("a supersession undone", lambda: self._memories.update(
                where=sql.in_list("id", ids), values={"valid_to": None, "superseded_by": None}))
        self.delete_edges(edges)

    def delete_edges(self, ids: Sequence[str]) -> None:
        """Delete the edges ``ids`` (one commit)."""
        if ids:
            self._write("edges", lambda: self._edges.delete(sql.in_list("id", ids)))

    def replace_sources(self, sources: Sequence[str], memory_rows: Sequence[Row],
                        edge_rows: Sequence[Row], source_rows: Sequence[Row]) -> None:
        """Swap the chunks (then edges, then source rows) of ``sources`` for new ones.

        The memories of all ``sources`` change in one commit, so readers see the old chunks or the new
        ones. The source rows are written last: they mark the files as done, so a crash in between
        leaves old hashes behind and the next ingest redoes those files.
        """
        if not sources:
            return
        in_sources = sql.in_list("source", sources)
        self._swap(self._memories, "id", in_sources, memory_rows, self.memories_schema, "chunks")
        self._swap(self._edges, "id", sql.in_list("origin", sources), edge_rows, EDGES_SCHEMA, "edges")
        self._swap(self._sources, "source", in_sources, source_rows, SOURCES_SCHEMA, "sources")

    def _swap(self, table: Any, key: str, scope: str, rows: Sequence[Row], schema: pa.Schema,
              what: str) -> None:
        """Make the rows of ``table`` matching ``scope`` exactly ``rows``, in one commit."""
        if not rows:
            self._write(what, lambda: table.delete(scope))
            return
        data = self._table_from_rows(rows, schema)
        self._write(what, lambda: table.merge_insert(key).when_matched_update_all()
                    .when_not_matched_insert_all().when_not_matched_by_source_delete(scope).execute(data))

    def upsert_sources(self, rows: Sequence[Row]) -> None:
        """Rewrite source rows only (e.g. a new mtime for unchanged content)."""
        if rows:
            data = self._table_from_rows(rows, SOURCES_SCHEMA)
            self._write("sources", lambda: self._sources.merge_insert("source").when_matched_update_all()
                        .when_not_matched_insert_all().execute(data))

    def append(self, table: str, data: pa.Table) -> None:
        """Append prepared rows to one table in a single commit (bulk loads; no de-duplication)."""
        target = getattr(self, "_" + table)
        self._write(table, lambda: target.add(data))

    def delete_memories(self, ids: Sequence[str]) -> None:
        """Delete memories and every edge they wrote or that points at them."""
        if ids:
            self._write("deletions", lambda: self._memories.delete(sql.in_list("id", ids)))
            self._write("deletions", lambda: self._edges.delete(
                f"{sql.in_list('origin', ids)} OR {sql.in_list('src', ids)} OR {sql.in_list('dst', ids)}"))

    def delete_sources(self, sources: Sequence[str], keep_out: Sequence[Row] = ()) -> None:
        """Forget ingested sources: their chunks, their edges and their source rows. The files of ``keep_out``
        (source rows among ``sources``) are kept out of later ingests: each leaves an ``excluded`` row."""
        if sources:
            self._write("deletions", lambda: self._memories.delete(sql.in_list("source", sources)))
            self._write("deletions", lambda: self._edges.delete(
                f"{sql.in_list('origin', sources)} OR "
                f"{sql.in_list('dst', [SOURCE_PREFIX + s for s in sources])}"))
            self._write("deletions", lambda: self._sources.delete(sql.in_list("source", sources)))
        if keep_out:
            now = datetime.now(UTC)
            self.upsert_sources([{"source": r["source"], "project": r["project"], "kind": EXCLUDED_KIND,
                                  "root": r["root"], "mtime": 0.0, "size": 0, "content_hash": "", "chunk_count": 0,
                                  "summary": "forgotten", "ingested_at": now} for r in keep_out])

    def let_in(self, sources: Sequence[str]) -> None:
        """Forget that the files ``sources`` were forgotten: a later ingest takes them again."""
        if sources:
            self._write("sources", lambda: self._sources.delete(
                sql.all_of(sql.in_list("source", sources), f"kind = {sql.quote(EXCLUDED_KIND)}")))

    def replace_digests(self, rows: Sequence[Row], stale_ids: Sequence[str]) -> None:
        """Upsert digests and drop those whose subject is gone, in two commits."""
        if rows:
            data = self._table_from_rows(rows, DIGESTS_SCHEMA)
            self._write("digests", lambda: self._digests.merge_insert("id").when_matched_update_all()
                        .when_not_matched_insert_all().execute(data))
        if stale_ids:
            self._write("digests", lambda: self._digests.delete(sql.in_list("id", stale_ids)))

    def add_fact(self, row: dict[str, Any]) -> None:
        data = self._table_from_rows([row], FACTS_SCHEMA)
        self._write("a fact", lambda: self._facts.add(data))

    def end_fact(self, fact_id: str, ended: Any) -> None:
        self._write("a fact", lambda: self._facts.update(where=f"id = {sql.quote(fact_id)}", values={"ended": ended}))

