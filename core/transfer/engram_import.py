"""Reading an Engram export folder back: every row as it was — ids, times, every column — checked whole first.

``check_export`` reads and checks everything (the manifest, every line of every table, the vectors, and the
embedding model when the vectors must be made again) and writes nothing; ``write_export`` then appends what it
found new. Rows whose key the workspace already holds (a memory's, fact's or edge's id, a source's name) are left
out and counted, so importing the same folder twice adds nothing the second time; so are the chunks of a file or
text the workspace has indexed itself (its own chunks of it stand), and the edges of every memory left out.

The vectors are reused when the export's embedding model and vector size are this workspace's; otherwise each new
memory is embedded again (its title and text, as a note is), which needs the embedding model. Columns the export
lacks because an older Engram wrote it are filled as opening an older store fills them (``FILLS``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..embedding import Embedder
from ..ingest.records import embedding_text
from ..store import WorkspaceStore, Writer
from ..store.maintenance import maintain
from ..store.queries import TABLE_KEYS, Table
from ..store.schema import EDGES_SCHEMA, FACTS_SCHEMA, SCHEMA_VERSION, SOURCES_SCHEMA, memories_schema, search_text
from .folder import TABLE_FILES, VECTORS, Counts, Manifest, read_manifest, refused
from .values import arrow_table

#: Memories embedded per call when the vectors must be made again.
EMBED_BATCH = 64
#: Columns an older export lacks, and what such a row gets (what opening a store of that older schema gives it).
FILLS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "search_text": lambda row: search_text(str(row.get("title", "")), str(row.get("content", ""))),  # schema 3
    # Schema 4 (docs/design/upkeep.md, "Duplicates at write time"): seen once, last seen when last updated.
    "seen_count": lambda row: 1,
    "last_seen": lambda row: row.get("updated_at"),
    # Schema 5 (docs/upkeep.md, "A merge keeps every text"): no merged texts; sightings before it kept no text.
    "merged_texts": lambda row: None,
    "merged_unkept": lambda row: (int(row.get("seen_count") or 1) - 1) or None,
}
#: The order tables are read in: an edge is kept only with the memory it leaves.
READ_ORDER: tuple[Table, ...] = ("memories", "facts", "edges", "sources")
#: The order tables are written in: the source rows last, as an ingest writes them (they mark files as done).
WRITE_ORDER: tuple[Table, ...] = ("memories", "edges", "facts", "sources")


@dataclass(frozen=True)
class Target:
    """The workspace an import goes to: its store (``None`` in a dry run into a workspace not created yet), and the
    embedding model its vectors come from."""

    store: WorkspaceStore | None
    dimensions: int
    model: str
    sha256: str = ""


@dataclass(frozen=True)
class Checked:
    """An export read whole and checked against its target: the new rows of each table, ready to append."""

    manifest: Manifest
    tables: dict[Table, pa.Table]
    already: Counts
    reembedded: int

    @property
    def added(self) -> Counts:
        return Counts(**{name: table.num_rows for name, table in self.tables.items()})


def _read_jsonl(folder: Path, file: str) -> list[dict[str, Any]]:
    path = folder / file
    if not path.is_file():
        raise refused(f"{file} is missing from {folder}: the export is incomplete. Export the workspace again.")
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise refused(f"{file}: line {number} is not JSON ({exc}).") from None
                if not isinstance(row, dict):
                    raise refused(f"{file}: line {number} is not a JSON object.")
                rows.append(row)
    except UnicodeDecodeError:
        raise refused(f"{file} is not UTF-8 text: the export is damaged.") from None
    except OSError as exc:
        raise refused(f"{path} cannot be read ({exc.strerror or exc}).") from None
    return rows


def _fitted(rows: list[dict[str, Any]], schema: pa.Schema, file: str) -> list[dict[str, Any]]:
    """``rows`` with the columns an older export lacks filled in.

    Raises:
        TransferRefused: a row has a column the store does not know, or lacks one it needs that has no fill.
    """
    names = set(schema.names)
    given: set[str] = set().union(*(r.keys() for r in rows)) if rows else set()
    unknown = sorted(given - names - {"vector"})
    if unknown:
        raise refused(f"{file} has columns this Engram's store does not have ({', '.join(unknown[:5])}); it may "
                      f"come from a newer Engram (this one has store schema {SCHEMA_VERSION}). Update Engram to "
                      "import it.")
    fills = {f.name: FILLS[f.name] for f in schema if f.name in FILLS}
    if fills and any(name not in row for row in rows for name in fills):
        rows = [{**row, **{name: fill(row) for name, fill in fills.items() if name not in row}} for row in rows]
    return rows


def _new(rows: list[dict[str, Any]], key: str, file: str, existing: set[str]) -> list[bool]:
    """Which of ``rows`` the workspace does not hold yet (by ``key``).

    Raises:
        TransferRefused: a row has no key, or two rows have the same one.
    """
    seen: set[str] = set()
    keep: list[bool] = []
    for number, row in enumerate(rows, 1):
        value = row.get(key)
        if not isinstance(value, str) or not value:
            raise refused(f"{file}: row {number} has no '{key}'.")
        if value in seen:
            raise refused(f"{file}: '{key}' {value} is in it twice: the export was edited or is damaged.")
        seen.add(value)
        keep.append(value not in existing)
    return keep


def _vectors(folder: Path, manifest: Manifest, rows: int) -> np.ndarray | None:
    """The export's vectors, ``rows`` × its dimensions (``None``: it has none).

    Raises:
        TransferRefused: the vectors file is not the size its memories need.
    """
    embedding = manifest.embedding
    if embedding is None:
        return None
    path = folder / (embedding.file or VECTORS)
    if not path.is_file():
        return None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise refused(f"{path} cannot be read ({exc.strerror or exc}).") from None
    need = rows * embedding.dimensions * 4
    if len(raw) != need:
        raise refused(f"{path.name} holds {len(raw):,} bytes; {rows:,} memories of {embedding.dimensions} dimensions "
                      f"need {need:,}: the export is incomplete. Export the workspace again.")
    return np.frombuffer(raw, dtype="<f4").reshape(rows, embedding.dimensions)


def _same_model(manifest: Manifest, target: Target) -> bool:
    e = manifest.embedding
    return (e is not None and e.model == target.model and e.dimensions == target.dimensions
            and (not e.sha256 or not target.sha256 or e.sha256 == target.sha256))


def check_export(folder: Path, target: Target, embedder: Callable[[], Embedder | None],
                 embed_note: Callable[[], str | None], *, dry_run: bool) -> Checked:
    """Read the export ``folder`` whole and check it against ``target``; nothing is written.

    ``embedder`` gives the embedding model (``None``: it cannot be loaded, ``embed_note`` says why); it is asked
    for only when the vectors must be made again, and used for that only when this is not a ``dry_run``.

    Raises:
        TransferRefused: the folder is not a whole, readable export of a format this Engram reads; or its vectors
            are of another model or size and the embedding model cannot be loaded.
        ModelError: embedding the memories again failed.
        StoreError: the target workspace cannot be read.
    """
    manifest = read_manifest(folder)
    schemas: dict[Table, pa.Schema] = {
        "memories": target.store.memories_schema if target.store is not None else memories_schema(target.dimensions),
        "facts": FACTS_SCHEMA, "edges": EDGES_SCHEMA, "sources": SOURCES_SCHEMA}
    existing: dict[Table, set[str]] = {name: target.store.table_keys(name) if target.store is not None else set()
                                       for name in TABLE_FILES}
    tables: dict[Table, pa.Table] = {}
    already: dict[str, int] = {}
    reembedded = 0
    kept_memories: set[str] = set()
    for name in READ_ORDER:
        file = TABLE_FILES[name]
        rows = _read_jsonl(folder, file)
        if len(rows) != getattr(manifest.counts, name):
            raise refused(f"{file} holds {len(rows):,} rows, and the manifest says {getattr(manifest.counts, name):,}: "
                          "the export is incomplete or was edited. Export the workspace again.")
        keep = _new(rows, TABLE_KEYS[name], file, existing[name])
        if name == "memories":
            # A file or text the workspace has indexed itself keeps its own chunks (their ids differ when its
            # content does): the export's chunks of it would be stale copies.
            keep = [k and not (r.get("source") and r["source"] in existing["sources"]) for r, k in zip(rows, keep)]
            kept_memories = {r["id"] for r, k in zip(rows, keep) if k}
        elif name == "edges":  # an edge goes with the memory it leaves
            keep = [k and (r.get("src") in kept_memories or r.get("src") in existing["memories"])
                    for r, k in zip(rows, keep)]
        already[name] = keep.count(False)
        rows = _fitted(rows, schemas[name], file)
        new_rows = [r for r, k in zip(rows, keep, strict=True) if k]
        if name != "memories":
            tables[name] = arrow_table(new_rows, schemas[name], file=file)
            continue
        schema = schemas[name]
        plain = pa.schema([f for f in schema if f.name != "vector"])
        table = arrow_table(new_rows, plain, file=file)
        vectors = _vectors(folder, manifest, len(rows))
        if vectors is not None and _same_model(manifest, target):
            new_vectors = vectors[np.asarray(keep, dtype=bool)] if rows else vectors
        else:
            reembedded = len(new_rows)
            new_vectors = _embedded(new_rows, manifest, target, embedder, embed_note, dry_run=dry_run)
        flat = pa.array(np.ascontiguousarray(new_vectors, dtype=np.float32).reshape(-1), type=pa.float32())
        column = pa.FixedSizeListArray.from_arrays(flat, target.dimensions)
        tables[name] = table.append_column(schema.field("vector"), column).select(schema.names)
    return Checked(manifest, tables, Counts(**already), reembedded)


def _embedded(rows: list[dict[str, Any]], manifest: Manifest, target: Target, embedder: Callable[[], Embedder | None],
              embed_note: Callable[[], str | None], *, dry_run: bool) -> np.ndarray:
    """Vectors for ``rows`` made by this workspace's embedding model (zeros in a dry run, which embeds nothing).

    Raises:
        TransferRefused: the embedding model cannot be loaded. ModelError: embedding failed.
    """
    empty = np.zeros((len(rows), target.dimensions), dtype=np.float32)
    if not rows:
        return empty
    model = embedder()
    if model is None or model.dimensions != target.dimensions:
        e = manifest.embedding
        theirs = f"{e.model} ({e.dimensions} dimensions)" if e else "no vectors"
        why = (embed_note() or "it cannot be loaded") if model is None else f"it gives {model.dimensions} dimensions"
        raise refused(f"The export holds {theirs}, this workspace uses {target.model} ({target.dimensions} "
                      f"dimensions), and the {len(rows):,} memories cannot be embedded again: the embedding model "
                      f"is unavailable ({why}). Fix the model (engram models status), or import into a workspace of "
                      f"{e.model if e else 'the same model'}.")
    if dry_run:
        return empty
    texts = [embedding_text(str(r.get("title", "")), str(r.get("content", ""))) for r in rows]
    parts = [np.asarray(model.embed(texts[i:i + EMBED_BATCH]), dtype=np.float32)
             for i in range(0, len(texts), EMBED_BATCH)]
    return np.concatenate(parts)


def write_export(store: WorkspaceStore, writer: Writer, checked: Checked, *, vector_index_min_rows: int) -> None:
    """Append the new rows ``check_export`` found (one commit per table), then maintain the workspace once.

    Raises:
        StoreError: the store refused a write (the tables written before it stay written; importing the folder again
            adds the rest, as rows already there are left out).
    """
    for name in WRITE_ORDER:
        table = checked.tables[name]
        if table.num_rows:
            writer.run(store.append, name, table)
    if any(t.num_rows for t in checked.tables.values()):
        writer.run(maintain, store, vector_index_min_rows)
