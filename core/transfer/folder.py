"""Engram's export folder, format 1: what it holds, and its manifest.

::

    FOLDER/
      manifest.json     format, Engram version, workspace, project, store schema version, embedding model, counts
      memories.jsonl    one memory a line, every column of the memories table but the vector
      vectors.f32       the vectors, little-endian float32, dimensions × memories, in memories.jsonl's order
      facts.jsonl       the knowledge-graph facts (current and ended)
      edges.jsonl       the graph plane's edges
      sources.jsonl     one row per ingested file or text (forgotten files too: they stay forgotten)
      markdown/<project>/<kind>.md, facts.md   for a person to read; an import never reads them

Digests are derived from the memories and rebuilt by Engram: the manifest's ``not_exported`` says so.
"""

from __future__ import annotations

import json
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import TransferRefused
from ..store.queries import Table

FORMAT = 1
MANIFEST = "manifest.json"
VECTORS = "vectors.f32"
MARKDOWN = "markdown"
#: The tables an export carries, each in its file.
TABLE_FILES: dict[Table, str] = {"memories": "memories.jsonl", "facts": "facts.jsonl", "edges": "edges.jsonl",
                                 "sources": "sources.jsonl"}
NOT_EXPORTED = {"digests": "derived from the memories; Engram rebuilds them"}
#: Every name an export folder holds at its top (an interrupted export's ``.partial`` folder is known by them).
NAMES = frozenset({MANIFEST, VECTORS, MARKDOWN, *TABLE_FILES.values()})
_UNDERSTOOD = ("an Engram export folder (manifest.json of format 1), a Claude Code MEMORY.md or CLAUDE.md (or the "
               "folder holding it), a folder of basic-memory notes (.md), or a mem0 export (.json)")


class Embedding(BaseModel):
    """The model that made the vectors of ``vectors.f32``."""

    model_config = ConfigDict(extra="ignore")

    model: str
    sha256: str = ""
    dimensions: int = Field(ge=1, le=65536)
    file: str = VECTORS
    dtype: Literal["float32-le"] = "float32-le"


class Counts(BaseModel):
    """Rows per table."""

    memories: int = 0
    facts: int = 0
    edges: int = 0
    sources: int = 0


class Manifest(BaseModel):
    """``manifest.json``: what the folder holds and what wrote it."""

    model_config = ConfigDict(extra="ignore")

    format: int
    engram_version: str
    workspace: str
    project: str | None = None
    schema_version: int
    exported_at: datetime
    embedding: Embedding | None = None
    counts: Counts
    files: dict[str, str]
    not_exported: dict[str, str] = Field(default_factory=dict)


def engram_version() -> str:
    """This Engram's version ("unknown" when it runs from a tree that was never installed)."""
    try:
        return metadata.version("engram")
    except metadata.PackageNotFoundError:
        return "unknown"


def understood() -> str:
    """What ``engram import`` reads, in words (the end of every refusal of a path)."""
    return _UNDERSTOOD


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the export folder ``folder``.

    Raises:
        TransferRefused: it is unreadable, not an Engram manifest, or of a format newer than this Engram reads.
    """
    path = folder / MANIFEST
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise refused(f"{path} cannot be read ({exc.strerror or exc}).") from None
    except ValueError as exc:
        raise refused(f"{path} is not JSON ({exc}).") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("format"), int) or "engram_version" not in raw:
        raise refused(f"{path} is not the manifest of an Engram export (it has no 'format' and 'engram_version'). "
                      f"engram import reads {_UNDERSTOOD}.")
    if raw["format"] > FORMAT:
        raise refused(f"{folder} was exported by a newer Engram ({raw['engram_version']}, export format "
                      f"{raw['format']}); this Engram ({engram_version()}) reads format {FORMAT}. Update Engram to "
                      "import it.")
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
        raise refused(f"{path} is damaged: {fields} missing or wrong. Export the workspace again.") from None


def refused(message: str) -> TransferRefused:
    """An import refused before anything was written."""
    return TransferRefused(message if message.endswith("Nothing was imported.") else f"{message} Nothing was imported.",
                           title="Cannot import")
