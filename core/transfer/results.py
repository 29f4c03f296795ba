"""What an export and an import return (plain pydantic models, serialisable as JSON), their one-paragraph summary,
and the requests the CLI sends a running service for them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .folder import Counts

Format = Literal["engram", "claude-code", "basic-memory", "mem0"]
FORMAT_NAMES: dict[str, str] = {"engram": "Engram export", "claude-code": "Claude Code memory",
                                "basic-memory": "basic-memory notes", "mem0": "mem0 export"}


_ONE = {"memories": "memory", "facts": "fact", "edges": "edge", "sources": "source"}


def _counted(counts: Counts) -> str:
    parts = [f"{n:,} {name if n != 1 else _ONE[name]}" for name, n in counts.model_dump().items() if n]
    return ", ".join(parts) or "nothing"


class Exported(BaseModel):
    """An export folder written whole."""

    workspace: str
    folder: str
    project: str | None = None
    counts: Counts
    embedding_model: str = ""
    not_exported: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        """One paragraph for a person."""
        scope = f"{self.workspace}/{self.project}" if self.project else self.workspace
        text = f"exported {scope} to {self.folder}: {_counted(self.counts)}"
        if self.embedding_model:
            text += f"; vectors of {self.embedding_model}"
        if self.not_exported:
            text += f"; not exported (derived, rebuilt by Engram): {', '.join(self.not_exported)}"
        return text + f" ({self.seconds:.1f} s)."


class Imported(BaseModel):
    """What an import wrote (in a dry run: would write) and what it left out."""

    workspace: str
    path: str
    format: Format
    dry_run: bool = False
    #: Rows written (a dry run: rows that would be written). For a peer's notes: the notes given to ``store``.
    added: Counts
    #: Rows the workspace already held (by id; a source by its name; a peer's fact by subject, predicate and
    #: object): left as they are, so importing a folder twice adds nothing the second time.
    already_there: Counts
    #: A peer's notes that ``store`` found to duplicate a memory it holds (counted on that memory instead).
    merged: int = 0
    #: Secrets removed from a peer's notes before they were stored (Engram's redaction).
    redacted: int = 0
    #: Memories embedded again: the export's vectors are of another model or size than this workspace's.
    reembedded: int = 0
    notes: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        """One paragraph for a person."""
        verb = "would import" if self.dry_run else "imported"
        text = f"{verb} {self.path} ({FORMAT_NAMES[self.format]}) into {self.workspace}: {_counted(self.added)}"
        if any(self.already_there.model_dump().values()):
            text += f"; already there, left as they are: {_counted(self.already_there)}"
        if self.merged:
            text += f"; {self.merged:,} duplicated memories already stored"
        if self.reembedded:
            text += f"; {self.reembedded:,} memories embedded again (the export's vectors are of another model)"
        if self.redacted:
            text += f"; {self.redacted:,} secrets redacted"
        text += "." if not self.dry_run else ". Nothing was written (--dry-run)."
        return "\n".join([text, *(f"note: {n}" for n in self.notes)])


class ExportRequest(BaseModel):
    """``engram export``'s arguments, as the CLI sends them to a running service."""

    model_config = ConfigDict(extra="forbid")

    folder: str = Field(min_length=1, max_length=4000)
    workspace: str = ""
    project: str | None = Field(default=None, min_length=1, max_length=100)


class ImportRequest(BaseModel):
    """``engram import``'s arguments, as the CLI sends them to a running service."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=4000)
    workspace: str = ""
    project: str | None = Field(default=None, min_length=1, max_length=100)
    dry_run: bool = False
