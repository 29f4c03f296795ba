"""What a peer's memory reads as, whatever the peer: notes and facts of one project, before ``store`` sees them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .results import Format


@dataclass(frozen=True)
class PeerNote:
    """One note read from a peer's files (the text as the peer holds it; redaction comes when it is stored)."""

    content: str
    title: str = ""
    type: str = "note"
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class PeerFact:
    """One knowledge-graph fact read from a peer's files (basic-memory's relations)."""

    subject: str
    predicate: str
    object: str
    source: str = ""


@dataclass(frozen=True)
class PeerImport:
    """Everything read from a peer's path: its notes and facts, for one project."""

    format: Format
    project: str
    notes: tuple[PeerNote, ...]
    facts: tuple[PeerFact, ...] = ()
    #: What the reader left out or could not keep, said to the person.
    remarks: tuple[str, ...] = field(default_factory=tuple)
