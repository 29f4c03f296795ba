"""Writing a workspace (or one project of it) to an export folder (``folder`` describes it).

Everything is written into ``FOLDER.partial`` and the folder is renamed to ``FOLDER`` last, the manifest being the
last file written into it: an export that is interrupted leaves no folder that looks whole (the next export to the
same place clears the ``.partial`` one). The columns of each table are taken from its Arrow schema, so a column
added to the store later is exported without a change here.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import TransferFailed, TransferRefused
from ..store import WorkspaceStore
from ..store.queries import Table
from ..store.schema import SCHEMA_VERSION
from ..store.timestamps import clamp_timestamps
from .folder import FORMAT, MANIFEST, NAMES, NOT_EXPORTED, TABLE_FILES, VECTORS, Counts, Embedding, engram_version
from .markdown import write_markdown
from .results import Exported
from .values import iso_utc, json_rows

logger = logging.getLogger(__name__)

#: Told the name of each file once it is written (the CLI's progress; a seam for the interrupted-export test).
Progress = Callable[[str], None]


def partial_folder(target: Path) -> Path:
    """Where the export to ``target`` is written before it is renamed to ``target``."""
    return target.with_name(target.name + ".partial")


def _prepare(target: Path) -> Path:
    """The empty ``.partial`` folder to write the export to ``target`` in.

    Raises:
        TransferRefused: ``target`` exists, or a ``.partial`` folder there holds what an export does not write.
        OSError: the folder cannot be made.
    """
    if target.exists() or target.is_symlink():
        raise TransferRefused(f"{target} exists already; an export writes a new folder. Give a folder name that is "
                              "not taken (or move the old export away). Nothing was written.", title="Cannot export")
    partial = partial_folder(target)
    if partial.exists():
        stray = [p.name for p in partial.iterdir() if p.name not in NAMES]
        if stray or not partial.is_dir():
            raise TransferRefused(f"{partial} exists and holds files an export does not write ({', '.join(stray[:3])}"
                                  "); move it away, then export again. Nothing was written.", title="Cannot export")
        shutil.rmtree(partial)  # an interrupted export of ours
    partial.mkdir(parents=True)
    return partial


def _write_jsonl(path: Path, table: pa.Table) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in json_rows(table):
            handle.write(json.dumps(row, ensure_ascii=False, allow_nan=True))
            handle.write("\n")


def _write_vectors(path: Path, vectors: pa.ChunkedArray, dimensions: int) -> None:
    flat = pc.list_flatten(vectors.combine_chunks()) if len(vectors) else pa.array([], pa.float32())
    data = np.asarray(flat.to_numpy(zero_copy_only=False), dtype="<f4")
    if data.size != len(vectors) * dimensions:
        raise TransferFailed(f"The workspace's vectors are not all {dimensions}-dimensional; nothing was exported. "
                             "Ingest into a new workspace.")
    path.write_bytes(data.tobytes())


def _edges_of(edges: pa.Table, memory_ids: pa.Array) -> pa.Table:
    """The edges leaving the memories ``memory_ids`` (every edge is written by the memory it leaves)."""
    return edges.filter(pc.is_in(edges.column("src"), value_set=memory_ids))


def export_workspace(store: WorkspaceStore, target: Path, *, project: str | None, embedding: Embedding,
                     progress: Progress | None = None) -> Exported:
    """Write ``store`` (or its ``project``) to the new folder ``target``; ``embedding`` names the model of its vectors.

    Raises:
        TransferRefused: ``target`` exists already (nothing is written).
        TransferFailed: the disk refused a write (the ``.partial`` folder is removed; nothing that looks whole stays).
        StoreError: the workspace cannot be read.
    """
    started = time.perf_counter()
    tell = progress or (lambda _name: None)
    try:
        partial = _prepare(target)
    except OSError as exc:
        raise TransferFailed(f"Cannot create {partial_folder(target)}: {exc.strerror or exc}. Check that the folder "
                             "above it exists and is writable. Nothing was written.") from None
    try:
        counts = _write_all(store, partial, project=project, embedding=embedding, tell=tell)
        partial.rename(target)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        logger.warning("exporting workspace '%s' to %s failed: %s", store.name, target, exc)
        raise TransferFailed(f"Writing the export to {target} failed: {exc.strerror or exc}. Check that the disk is "
                             "not full and the folder is writable; nothing was left there.") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return Exported(workspace=store.name, folder=str(target), project=project, counts=counts,
                    embedding_model=embedding.model, not_exported=sorted(NOT_EXPORTED),
                    seconds=round(time.perf_counter() - started, 3))


def _write_all(store: WorkspaceStore, folder: Path, *, project: str | None, embedding: Embedding,
               tell: Progress) -> Counts:
    memories = store.table_data("memories", project=project)
    tables: dict[Table, pa.Table] = {
        "memories": memories.drop_columns(["vector"]),
        "facts": store.table_data("facts", project=project),
        "edges": store.table_data("edges"),
        "sources": store.table_data("sources", project=project),
    }
    if project is not None:
        tables["edges"] = _edges_of(tables["edges"], memories.column("id").combine_chunks())
    for name, table in tables.items():
        _write_jsonl(folder / TABLE_FILES[name], table)
        tell(TABLE_FILES[name])
    _write_vectors(folder / VECTORS, memories.column("vector"), embedding.dimensions)
    tell(VECTORS)
    write_markdown(folder, _python_rows(tables["memories"]), _python_rows(tables["facts"]))
    tell("markdown")
    counts = Counts(**{name: table.num_rows for name, table in tables.items()})
    manifest: dict[str, Any] = {
        "format": FORMAT, "engram_version": engram_version(), "workspace": store.name, "project": project,
        "schema_version": SCHEMA_VERSION, "exported_at": iso_utc(datetime.now(UTC)),
        "embedding": embedding.model_dump(), "counts": counts.model_dump(),
        "files": {**TABLE_FILES, "vectors": VECTORS, "markdown": "markdown"},
        "columns": {name: [f.name for f in table.schema] for name, table in tables.items()},
        "not_exported": NOT_EXPORTED,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tell(MANIFEST)
    return counts


def _python_rows(table: pa.Table) -> list[dict[str, Any]]:
    return list(clamp_timestamps(table).to_pylist())
