"""The named reads of one workspace: every question the engine asks its tables, by what it asks.

Callers name what they want (``chunks_of(source)``, ``edges_from(ids)``, ``projects()``); the filter text each
question becomes is written here and nowhere else. ``WorkspaceStore`` inherits these methods; they rest on its
plain reads (``_scan``, ``_count``, ``_version``, ``_indexes``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import pyarrow as pa

from . import filters as sql
from .derived import Derived
from .fts import FTS_COLUMN
from .memory_filter import CURRENT, SUPERSEDED, Filters, filter_text, sources_under
from .rows import Edge, IndexInfo, Row
from .schema import EXCLUDED_KIND

_EDGE_COLUMNS = ["src", "dst", "relation", "weight"]
#: The tables an export carries whole (digests are derived from the memories and rebuilt), each with its key.
Table = Literal["memories", "sources", "facts", "edges"]
TABLE_KEYS: dict[str, str] = {"memories": "id", "sources": "source", "facts": "id", "edges": "id"}


def _edges(rows: list[Row]) -> list[Edge]:
    return [Edge(r["src"], r["dst"], r["relation"], r["weight"]) for r in rows]


class Queries:
    """The named reads of a workspace's tables (mixed into ``WorkspaceStore``, which provides the plain reads).

    Every method raises ``StoreError`` when the workspace cannot be read (for a shared workspace: a bucket error
    saying why).
    """

    _memories: Any
    _sources: Any
    _facts: Any
    _edges: Any
    _digests: Any
    derived: Derived

    # The plain reads, written in ``WorkspaceStore`` (declared here so that the named reads type-check on their own).
    def _scan(self, table: Any, where: str | None, columns: Sequence[str] | None = None,
              limit: int | None = None) -> list[Row]:
        raise NotImplementedError

    def _count(self, table: Any, where: str | None = None) -> int:
        raise NotImplementedError

    def _version(self, table: Any) -> int:
        raise NotImplementedError

    def _indexes(self, table: Any) -> list[Any]:
        raise NotImplementedError

    def _arrow(self, table: Any, where: str | None) -> pa.Table:
        raise NotImplementedError

    # ---------------------------------------------------------------- counts and versions

    def count_memories(self, project: str | None = None) -> int:
        """How many memories the workspace (or ``project`` of it) holds."""
        return self._count(self._memories, _in_project(project))

    def count_sources(self, project: str | None = None) -> int:
        """How many sources were ingested into the workspace (or into ``project``)."""
        return self._count(self._sources, sql.all_of(_in_project(project), _NOT_EXCLUDED))

    def count_edges(self) -> int:
        """How many edges the graph plane holds."""
        return self._count(self._edges)

    def count_current_facts(self) -> int:
        """How many facts have not been ended."""
        return self._count(self._facts, "ended IS NULL")

    def memories_version(self) -> int:
        """The version of the memories table read now."""
        return self._version(self._memories)

    def edges_version(self) -> int:
        """The version of the edges table read now (what is derived from the edges is kept by it)."""
        return self._version(self._edges)

    def content_versions(self) -> tuple[int, int, int]:
        """The versions of the memories, sources and edges tables read now (what digests are derived from)."""
        return self._version(self._memories), self._version(self._sources), self._version(self._edges)

    def memory_indexes(self) -> list[IndexInfo]:
        """The indexes of the memories table."""
        return [IndexInfo(i.name, i.index_type, tuple(i.columns)) for i in self._indexes(self._memories)]

    def has_fts(self) -> bool:
        """Whether the memories table has its full-text index."""
        return any(FTS_COLUMN in i.columns and i.index_type == "FTS" for i in self.memory_indexes())

    # ---------------------------------------------------------------- memories

    def memories(self, columns: Sequence[str], *, project: str | None = None,
                 kinds: Sequence[str] = (), sources: Sequence[str] = ()) -> list[Row]:
        """``columns`` of every memory (of ``project``, of ``kinds``, of ``sources`` when given), unordered."""
        return self._scan(self._memories, sql.all_of(sql.in_list("kind", kinds) if kinds else None,
                                                      sql.in_list("source", sources) if sources else None,
                                                      _in_project(project)), columns)

    def memories_by_ids(self, ids: Iterable[str], columns: Sequence[str] | None = None) -> dict[str, Row]:
        """The memories among ``ids`` that exist, keyed by id."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        if columns is not None and "id" not in columns:
            columns = ["id", *columns]
        rows = self._scan(self._memories, sql.in_list("id", wanted), columns, limit=len(wanted))
        return {r["id"]: r for r in rows}

    def memory_ids_matching(self, ids: Sequence[str], filters: Filters | None) -> set[str]:
        """Those of ``ids`` whose memories pass ``filters``."""
        if not ids:
            return set()
        rows = self._scan(self._memories, sql.all_of(sql.in_list("id", ids), filter_text(filters)), ["id"], limit=len(ids))
        return {r["id"] for r in rows}

    def memory_with_key(self, key: str, columns: Sequence[str] | None = None) -> Row | None:
        """The current memory whose exact-duplicate key is ``key`` (``None``: none such)."""
        rows = self._scan(self._memories, sql.all_of(f"dedup_key = {sql.quote(key)}", CURRENT), columns, limit=1)
        return rows[0] if rows else None

    def count_superseded(self) -> int:
        """How many memories a newer one superseded (derived once per version of the memories table)."""
        return self.derived.cached("superseded", self._version(self._memories),
                                   lambda: self._count(self._memories, SUPERSEDED))

    def superseded_by_ids(self, ids: Sequence[str], columns: Sequence[str] | None = None) -> list[Row]:
        """The memories that the memories ``ids`` superseded, unordered."""
        if not ids:
            return []
        return self._scan(self._memories, sql.in_list("superseded_by", ids), columns)

    def memories_seen_again(self, columns: Sequence[str], *, project: str | None = None) -> list[Row]:
        """``columns`` of the current notes and exchanges (of ``project``) written more than once (``seen_count``
        above 1; an older row without a count reads as seen once), unordered."""
        return self._scan(self._memories, sql.all_of("seen_count > 1", CURRENT, _NOTES, _in_project(project)),
                          columns)

    def memories_merged_unkept(self, columns: Sequence[str], *, project: str | None = None) -> list[Row]:
        """``columns`` of the current notes and exchanges (of ``project``) with sightings counted before Engram kept
        merged texts (``merged_unkept`` above 0), unordered."""
        return self._scan(self._memories, sql.all_of("merged_unkept > 0", CURRENT, _NOTES, _in_project(project)),
                          columns)

    def current_notes(self, columns: Sequence[str], *, project: str | None = None) -> list[Row]:
        """``columns`` of the current notes and exchanges (of ``project``), unordered."""
        return self._scan(self._memories, sql.all_of(CURRENT, _NOTES, _in_project(project)), columns)

    def superseded_memories(self, columns: Sequence[str], *, project: str | None = None) -> list[Row]:
        """``columns`` of the memories (of ``project``) a newer one superseded, unordered."""
        return self._scan(self._memories, sql.all_of(SUPERSEDED, _in_project(project)), columns)

    def memories_with_hashes(self, hashes: Iterable[str], columns: Sequence[str]) -> list[Row]:
        """``columns`` of the memories whose content hash is among ``hashes``."""
        return self._scan(self._memories, sql.in_list("content_hash", sorted(set(hashes))), columns)

    def chunks_of(self, source: str, columns: Sequence[str] | None = None, *, from_line: int | None = None,
                  to_line: int | None = None) -> list[Row]:
        """The memories of ``source`` (unordered), those ending at or after ``from_line`` and starting at or
        before ``to_line`` when given."""
        return self._scan(self._memories, sql.all_of(f"source = {sql.quote(source)}",
                                                      f"end_line >= {int(from_line)}" if from_line else None,
                                                      f"start_line <= {int(to_line)}" if to_line else None), columns)

    def chunk_titles(self) -> list[Row]:
        """``source``, ``title`` and ``chunk_index`` of every file or text chunk."""
        return self._scan(self._memories, "kind IN ('chunk', 'content')", ["source", "title", "chunk_index"])

    def holds_exchanges(self) -> bool:
        """Whether any memory is a conversation exchange (derived once per version of the memories table)."""
        return self.derived.cached("holds exchanges", self._version(self._memories),
                                   lambda: self._count(self._memories, "kind = 'exchange'") > 0)

    def projects(self) -> list[str]:
        """The projects that hold sources, notes or exchanges, sorted."""
        names = {r["project"] for r in self._scan(self._sources, _NOT_EXCLUDED, ["project"])}
        names |= {r["project"] for r in self.memories(["project"], kinds=("note", "exchange"))}
        return sorted(names)

    # ---------------------------------------------------------------- sources

    def source_rows(self, columns: Sequence[str] | None = None, *, project: str | None = None,
                    prefixes: Sequence[str] = ()) -> list[Row]:
        """The source rows (of ``project``; starting with one of ``prefixes``), unordered."""
        return self._scan(self._sources, sql.all_of(_in_project(project), sources_under(list(prefixes)),
                                                    _NOT_EXCLUDED), columns)

    def source(self, name: str) -> Row | None:
        """The source row of stored source ``name`` (``None``: none such, or a forgotten file)."""
        rows = self._scan(self._sources, sql.all_of(f"source = {sql.quote(name)}", _NOT_EXCLUDED), limit=1)
        return rows[0] if rows else None

    def excluded_sources(self, root: str | None = None, *, folder: bool = True) -> list[Row]:
        """The files forgotten and kept out of later ingests: all, those under ``root`` (a ``folder``), or
        ``root`` itself (a file)."""
        if root is None:
            scope = None
        else:
            scope = sql.prefix("source", root.rstrip("/") + "/") if folder else f"source = {sql.quote(root)}"
        return self._scan(self._sources, sql.all_of(scope, f"kind = {sql.quote(EXCLUDED_KIND)}"))

    def file_sources(self, root: str, *, folder: bool) -> list[Row]:
        """The rows of files ingested as ``root`` (a file) or under it (a ``folder``)."""
        scope = sql.prefix("source", root.rstrip("/") + "/") if folder else f"source = {sql.quote(root)}"
        return self._scan(self._sources, sql.all_of(scope, "kind = 'file'"))

    def source_roots(self) -> dict[str, str]:
        """source → the folder it was ingested from (derived once per version of the sources table)."""
        return self.derived.cached("source roots", self._version(self._sources), lambda: {
            r["source"]: r["root"] for r in self._scan(self._sources, None, ["source", "root"])})

    # ---------------------------------------------------------------- the graph plane

    def edges(self, relation: str | None = None) -> list[Edge]:
        """Every edge (of ``relation``), unordered."""
        return _edges(self._scan(self._edges, f"relation = {sql.quote(relation)}" if relation else None,
                                 _EDGE_COLUMNS))

    def edges_from(self, ids: Sequence[str]) -> list[Edge]:
        """The edges leaving ``ids``."""
        if not ids:
            return []
        return _edges(self._scan(self._edges, sql.in_list("src", list(ids)), _EDGE_COLUMNS))

    def edges_to(self, ids: Sequence[str], relations: Sequence[str]) -> list[Edge]:
        """The edges of ``relations`` that arrive at ``ids``."""
        if not ids:
            return []
        return _edges(self._scan(self._edges, sql.all_of(sql.in_list("dst", list(ids)), sql.in_list(
            "relation", relations)), _EDGE_COLUMNS))

    def duplicate_links(self, ids: Sequence[str]) -> dict[str, Row]:
        """src → its ``duplicate_of`` edge row (``id``, ``dst``) for those of ``ids`` recorded as duplicates of a
        kept memory (a captured turn counted on an earlier one)."""
        if not ids:
            return {}
        rows = self._scan(self._edges, sql.all_of(sql.in_list("src", list(ids)), "relation = 'duplicate_of'"),
                          ["id", "src", "dst"])
        return {r["src"]: r for r in rows}

    def hub_degrees(self) -> Counter[str]:
        """How many memories point at each entity or source node (derived once per edges-table version)."""
        return self.derived.cached("hub degrees", self._version(self._edges), lambda: Counter(
            r["dst"] for r in self._scan(self._edges, "relation IN ('mentions', 'part_of')", ["dst"])))

    # ---------------------------------------------------------------- facts and digests

    def facts(self, *, subject: str | None = None, predicate: str | None = None, object: str | None = None,
              project: str | None = None, include_ended: bool = False,
              columns: Sequence[str] | None = None) -> list[Row]:
        """The facts matching each given field (subject, predicate and object case-insensitively), unordered;
        current ones only unless ``include_ended``."""
        return self._scan(self._facts, sql.all_of(
            f"lower(subject) = {sql.quote(subject.lower())}" if subject else None,
            f"lower(predicate) = {sql.quote(predicate.lower())}" if predicate else None,
            f"lower(object) = {sql.quote(object.lower())}" if object else None,
            _in_project(project),
            None if include_ended else "ended IS NULL",
        ), columns)

    def fact(self, fact_id: str) -> Row | None:
        """The fact of id ``fact_id`` (``None``: none such)."""
        rows = self._scan(self._facts, f"id = {sql.quote(fact_id)}", limit=1)
        return rows[0] if rows else None

    def digest_hashes(self) -> dict[str, str]:
        """digest id → the hash over its children, for every stored digest."""
        return {d["id"]: d["children_hash"] for d in self._scan(self._digests, None, ["id", "children_hash"])}

    def digests_by_ids(self, ids: Sequence[str], columns: Sequence[str] | None = None) -> dict[str, Row]:
        """The digests among ``ids`` that exist, keyed by id."""
        if columns is not None and "id" not in columns:
            columns = ["id", *columns]
        return {r["id"]: r for r in self._scan(self._digests, sql.in_list("id", ids), columns)}


    # ---------------------------------------------------------------- whole tables (export and import)

    def table_data(self, table: Table, *, project: str | None = None) -> pa.Table:
        """Every row of ``table`` (of ``project``; edges have none and are always whole) with every column, the
        vectors too, as Arrow in storage order: what an export writes. Forgotten files' source rows are included."""
        where = _in_project(project) if table != "edges" else None
        return self._arrow(getattr(self, "_" + table), where)

    def table_keys(self, table: Table) -> set[str]:
        """The keys (``TABLE_KEYS``: ids, or a source's name) of every row of ``table``: what an import skips."""
        key = TABLE_KEYS[table]
        return {str(r[key]) for r in self._scan(getattr(self, "_" + table), None, [key])}


_NOT_EXCLUDED = f"kind != {sql.quote(EXCLUDED_KIND)}"
_NOTES = "kind IN ('note', 'exchange')"


def _in_project(project: str | None) -> str | None:
    return f"project = {sql.quote(project)}" if project else None
