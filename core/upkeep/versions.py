"""The texts merged into a memory (its ``merged_texts`` column): nothing a merge takes in is lost, and it can be undone.

A near duplicate counted on a stored memory used to leave only its count behind (or, a longer text, to overwrite the
stored one in place). Now every text merged into a memory is kept with it, as written: the id it was written under,
its text, title, tags and type, when it was written and merged, how (``near``: found by its vector with every detail
agreeing; ``merge``: ``engram merge``, whose other memory stays as a superseded row), how alike it was and how many
times it was written. ``own`` is the memory's own text, title and tags before anything was merged into it; the
memory shows its own text or, when a longer merged text replaced it, that text (its entry ``kept``). Exact repeats
add no entry (they are the shown text); the tags they bring are added to ``own``.

Stored as JSON in one nullable column, so that counting a merge stays one commit of the memories table.
``unmerge`` turns the record back into the memories it was made of.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from .keys import dedup_key, normalised

How = Literal["near", "merge"]
FORMAT = 1


@dataclass(frozen=True)
class MergedText:
    """One text merged into a memory, with what it was when it was written."""

    id: str
    content: str
    title: str
    tags: tuple[str, ...]
    type: str
    written: datetime
    merged: datetime
    how: How
    similarity: float
    seen: int = 1
    last_seen: datetime | None = None
    #: The memory shows this text now (it was longer than what the memory showed when it came).
    kept: bool = False


@dataclass(frozen=True)
class Own:
    """A memory's own text, title and tags (those exact repeats added included), before any merge."""

    content: str
    title: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class MergedTexts:
    """What was merged into one memory (empty: nothing yet)."""

    own: Own | None = None
    texts: tuple[MergedText, ...] = field(default_factory=tuple)

    @property
    def shown(self) -> MergedText | None:
        """The merged text the memory shows in place of its own (``None``: it shows its own)."""
        return next((t for t in self.texts if t.kept), None)

    def tags(self) -> list[str]:
        """The memory's tags: its own and every merged text's, in the order they came."""
        own = list(self.own.tags) if self.own else []
        return list(dict.fromkeys([*own, *(tag for t in self.texts for tag in t.tags)]))

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "own": None if self.own is None else {
            "content": self.own.content, "title": self.own.title, "tags": list(self.own.tags)},
            "texts": [_text_json(t) for t in self.texts]}, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | None) -> MergedTexts:
        """The record in a ``merged_texts`` value (``None`` or empty: nothing merged).

        Raises:
            ValueError: the value is not a record this Engram wrote (damaged, or of a newer format).
        """
        if not raw:
            return cls()
        data = json.loads(raw)
        if not isinstance(data, dict) or int(data.get("format", 0)) > FORMAT:
            raise ValueError("merged_texts is not a record of a format this Engram reads")
        own = data.get("own")
        return cls(own=None if own is None else Own(str(own["content"]), str(own["title"]), tuple(own["tags"])),
                   texts=tuple(_text(t) for t in data.get("texts", [])))


def _text_json(t: MergedText) -> dict[str, Any]:
    return {"id": t.id, "content": t.content, "title": t.title, "tags": list(t.tags), "type": t.type,
            "written": t.written.isoformat(), "merged": t.merged.isoformat(), "how": t.how,
            "similarity": round(t.similarity, 4), "seen": t.seen,
            "last_seen": None if t.last_seen is None else t.last_seen.isoformat(), "kept": t.kept}


def _text(d: dict[str, Any]) -> MergedText:
    return MergedText(id=str(d["id"]), content=str(d["content"]), title=str(d.get("title", "")),
                      tags=tuple(d.get("tags", [])), type=str(d.get("type", "note")),
                      written=datetime.fromisoformat(d["written"]), merged=datetime.fromisoformat(d["merged"]),
                      how="merge" if d.get("how") == "merge" else "near", similarity=float(d.get("similarity", 1.0)),
                      seen=int(d.get("seen", 1)),
                      last_seen=datetime.fromisoformat(d["last_seen"]) if d.get("last_seen") else None,
                      kept=bool(d.get("kept", False)))


@dataclass(frozen=True)
class Merge:
    """A text to merge into a memory: the new write's (or, for ``engram merge``, the other memory's)."""

    id: str
    content: str
    title: str
    tags: tuple[str, ...]
    type: str
    written: datetime
    how: How
    similarity: float
    seen: int = 1


def merged_with(memory: Mapping[str, Any], new: Merge, now: datetime, *,
                show_longer: bool = True) -> tuple[MergedTexts, bool]:
    """``memory``'s record (a row with ``content``, ``title``, ``tags`` and ``merged_texts``) with ``new`` merged in,
    and whether ``new``'s text is now the one the memory shows (with ``show_longer``: it is longer than what the
    memory showed).

    A text the record holds already (the same once normalised) counts on its entry; the memory's own text counts on
    the memory alone.

    Raises:
        ValueError: the memory's record is damaged (``MergedTexts.from_json``).
    """
    record = MergedTexts.from_json(memory.get("merged_texts"))
    own = record.own or Own(str(memory["content"]), str(memory["title"]), tuple(memory["tags"]))
    key = normalised(new.content)
    texts = list(record.texts)
    if key == normalised(own.content):
        tags = tuple(dict.fromkeys([*own.tags, *new.tags]))
        return MergedTexts(replace(own, tags=tags), tuple(texts)), False
    for index, text in enumerate(texts):
        if normalised(text.content) == key:
            texts[index] = replace(text, seen=text.seen + new.seen, last_seen=now,
                                   tags=tuple(dict.fromkeys([*text.tags, *new.tags])))
            return MergedTexts(own, tuple(texts)), False
    longer = show_longer and len(new.content) > len(str(memory["content"]))
    if longer:
        texts = [replace(t, kept=False) for t in texts]
    texts.append(MergedText(id=new.id, content=new.content, title=new.title, tags=new.tags, type=new.type,
                            written=new.written, merged=now, how=new.how, similarity=new.similarity, seen=new.seen,
                            last_seen=now if new.seen > 1 else None, kept=longer))
    return MergedTexts(own, tuple(texts)), longer


def _record(row: Mapping[str, Any]) -> MergedTexts | None:
    """The record of texts merged into note ``row``; ``None`` when it has none, or a damaged one (its texts are then
    not matched, and a merge into it says so)."""
    if not row.get("merged_texts"):
        return None
    try:
        return MergedTexts.from_json(row["merged_texts"])
    except ValueError:
        return None


def own_text(row: Mapping[str, Any]) -> str | None:
    """The text a note was first written with, when it now shows a longer text merged into it (else ``None``: it
    shows its own, or its record is damaged)."""
    record = _record(row)
    if record is None or record.own is None or record.own.content == row.get("content"):
        return None
    return record.own.content


def kept_text_keys(row: Mapping[str, Any]) -> set[str]:
    """The exact-duplicate keys (``dedup_key``) of the texts a note keeps besides the one it shows: those merged into
    it, and its own when it shows a merged one (none for a conversation turn, or a damaged record). A text written
    again word for word is an exact repeat of that note."""
    record = _record(row) if row.get("kind") == "note" else None
    if record is None:
        return set()
    texts = [t.content for t in record.texts] + ([record.own.content] if record.own else [])
    return {dedup_key("note", str(row["project"]), text) for text in texts}
