"""Ingesting a folder or a text: list, read, chunk, embed, and swap into the store.

Incremental: a file whose size and mtime are unchanged is not read; one whose content hash is
unchanged is not re-embedded; files that vanished (or became ignored) under the ingested folder are
forgotten. Changed files are written in batches, each batch one commit of memories.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..embedding import Embedder
from ..events import IngestProgress
from ..fileio import sha256_text
from ..settings import IngestSettings
from ..store import WorkspaceStore, Writer
from ..store.maintenance import maintain
from ..store.rows import Row
from .chunking import chunk_text, summarize, text_format
from .listing import ListedFile, Skip, list_files, read_text
from .records import chunk_rows, content_hash, embedding_text

logger = logging.getLogger(__name__)

_BATCH_FILES = 24
#: Why a forgotten file is not taken again (``delete`` with ``source`` keeps it out; ``again`` lets it in).
FORGOTTEN = "forgotten earlier: kept out (ingest it with again=[path], `engram ingest --again PATH`, to bring it back)"


@dataclass
class IngestReport:
    """What an ingest did, file by file counted."""

    root: str
    project: str
    files_listed: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    chunks_written: int = 0
    skipped: list[Skip] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class _Pending:
    file: ListedFile | None
    source: str
    text: str
    digest: str


ProgressFn = Callable[[IngestProgress], None]


def _existing_sources(store: WorkspaceStore, root: Path, is_file: bool) -> dict[str, Row]:
    rows = store.file_sources(root.as_posix(), folder=not is_file)
    return {r["source"]: r for r in rows}


def ingest_path(store: WorkspaceStore, writer: Writer, embedder: Embedder, target: Path, *, project: str,
                settings: IngestSettings, vector_index_min_rows: int, include: list[str] | None = None,
                progress: ProgressFn | None = None, never: Sequence[Path] = ()) -> IngestReport:
    """Ingest the files under ``target`` into ``store`` as chunks of ``project``.

    Unreadable, binary, undecodable, oversized and ignored files are skipped and counted with a
    reason; the run continues. Folders in ``never`` (Engram's own) are left out wherever they appear.

    Raises:
        IngestError: ``target`` does not exist.
        ModelError: the embedding model failed (files written before it stay written).
        StoreError: the store refused a write (earlier batches stay written; the failed batch is not).
    """
    started = time.perf_counter()
    listing = list_files(target, max_bytes=settings.max_file_bytes, use_gitignore=settings.use_gitignore,
                         exclude=settings.exclude, include=include, never=never)
    report = IngestReport(root=listing.root.as_posix(), project=project, files_listed=len(listing.files),
                          skipped=list(listing.skipped))
    existing = _existing_sources(store, listing.root, listing.root.is_file())
    forgotten = {r["source"] for r in store.excluded_sources(listing.root.as_posix(),
                                                             folder=not listing.root.is_file())}
    pending: list[_Pending] = []
    touched: list[dict[str, Any]] = []
    for file in listing.files:
        if file.source in forgotten:
            report.skipped.append(Skip(file.source, FORGOTTEN))
            continue
        old = existing.get(file.source)
        if old and old["project"] == project and old["size"] == file.size and old["mtime"] == file.mtime:
            report.files_unchanged += 1
            continue
        text = read_text(file)
        if isinstance(text, Skip):
            report.skipped.append(text)
            continue
        digest = sha256_text(text)
        if old and old["project"] == project and old["content_hash"] == digest:
            touched.append({**old, "mtime": file.mtime, "size": file.size})
            report.files_unchanged += 1
            continue
        pending.append(_Pending(file, file.source, text, digest))

    listed = {f.source for f in listing.files}
    # With include patterns only a subset was listed: files outside it are not "gone".
    gone = [] if include else [s for s in existing if s not in listed]
    # A forgotten file that is gone from the folder needs keeping out no longer.
    no_longer = [] if include else [s for s in forgotten if s not in listed]
    if gone or no_longer:
        writer.run(store.delete_sources, gone + no_longer)
        report.files_removed = len(gone)
    if touched:
        writer.run(store.upsert_sources, touched)

    total = len(pending)
    for start in range(0, total, _BATCH_FILES):
        batch = pending[start:start + _BATCH_FILES]
        report.chunks_written += _write_batch(store, writer, embedder, batch, project=project, kind="chunk",
                                              root=listing.root.as_posix(), tags=(), settings=settings)
        report.files_indexed += len(batch)
        if progress:
            progress(IngestProgress(min(start + len(batch), total), total, report.chunks_written,
                                    time.perf_counter() - started))
    if pending or gone:
        writer.run(maintain, store, vector_index_min_rows)
    report.seconds = time.perf_counter() - started
    return report


#: A source's chunk texts and the source's name -> each chunk's extra tags (the model's classification).
ChunkTagger = Callable[[list[str], str], list[list[str]]]


def _write_batch(store: WorkspaceStore, writer: Writer, embedder: Embedder, batch: Sequence[_Pending], *,
                 project: str, kind: str, root: str, tags: Sequence[str], settings: IngestSettings,
                 title: str = "", tagger: ChunkTagger | None = None) -> int:
    now = datetime.now(UTC)
    per_source = []
    texts: list[str] = []
    for item in batch:
        fmt = text_format(item.file.path.suffix) if item.file else "text"
        chunks = chunk_text(item.text, fmt, chunk_chars=settings.chunk_chars, overlap_chars=settings.overlap_chars)
        if title and chunks:
            chunks = [c.__class__(c.index, f"{title} > {c.title}" if c.title else title, c.content,
                                  c.start_line, c.end_line) for c in chunks]
        per_source.append((item, fmt, chunks))
        texts.extend(embedding_text(c.title, c.content) for c in chunks)
    vectors = _vectors(store, embedder, texts, [content_hash(c.content) for _, _, cs in per_source for c in cs])
    memory_rows: list[dict[str, Any]] = []
    edge_rows: list[dict[str, Any]] = []
    source_rows: list[dict[str, Any]] = []
    offset = 0
    for item, fmt, chunks in per_source:
        rows, edges = chunk_rows(source=item.source, project=project, kind=kind, fmt=fmt, tags=tags, chunks=chunks,
                                 vectors=vectors[offset:offset + len(chunks)], now=now,
                                 chunk_tags=tagger([c.content for c in chunks], item.source) if tagger else None)
        offset += len(chunks)
        memory_rows.extend(rows)
        edge_rows.extend(edges)
        source_rows.append({
            "source": item.source, "project": project, "kind": "file" if item.file else "content", "root": root,
            "mtime": item.file.mtime if item.file else 0.0, "size": item.file.size if item.file else len(item.text),
            "content_hash": item.digest, "chunk_count": len(chunks),
            "summary": (f"{title}: " if title else "") + summarize(item.text, fmt), "ingested_at": now,
        })
    writer.run(store.replace_sources, [item.source for item in batch], memory_rows, edge_rows, source_rows)
    return len(memory_rows)


def _vectors(store: WorkspaceStore, embedder: Embedder, texts: list[str], hashes: list[str]) -> np.ndarray:
    """The vectors of ``texts``, embedding only those the workspace does not hold yet.

    A chunk whose text (heading path and content) is already stored, in the file being re-ingested or in
    any other, keeps its stored vector: editing a line of a long file re-embeds the chunks around the edit,
    not the whole file, and identical texts (a repeated licence header, copies of a file) are embedded once.
    """
    known: dict[str, np.ndarray] = {}
    if texts:
        rows = store.memories_with_hashes(hashes, ["title", "content", "content_hash", "vector"])
        for row in rows:
            known.setdefault(embedding_text(row["title"], row["content"]), np.asarray(row["vector"], np.float32))
    todo = list(dict.fromkeys(t for t in texts if t not in known))
    if todo:
        known.update(zip(todo, embedder.embed(todo), strict=True))
    if not texts:
        return np.empty((0, embedder.dimensions), dtype=np.float32)
    return np.stack([known[t] for t in texts])


def ingest_text(store: WorkspaceStore, writer: Writer, embedder: Embedder, *, source: str, title: str, text: str,
                project: str, tags: Sequence[str], settings: IngestSettings, tagger: ChunkTagger | None = None) -> int:
    """Ingest inline ``text`` as the source ``source`` (replacing an earlier text of that source).

    Returns the number of chunks written. ``tagger`` adds tags to each chunk (the model's classification).

    Raises:
        ModelError: the embedding model failed. StoreError: the store refused the write.
    """
    item = _Pending(None, source, text.replace("\r\n", "\n"), sha256_text(text))
    return _write_batch(store, writer, embedder, [item], project=project, kind="content", root="", tags=tags,
                        settings=settings, title=title, tagger=tagger)
