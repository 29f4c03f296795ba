"""Storing a peer's notes and facts the way an agent's are: each note through the ``store`` tool, each fact through
``kg_edit``, with their argument checks — so an imported note gets what a stored one gets (duplicate handling,
entities, tags) — after Engram's redaction has taken the secrets out of its title and text.

A note longer than ``store`` takes is stored as parts (split between lines, "(part 2 of 3)" in the title); a title,
type, tag or project longer than it takes is shortened with "…". A fact the workspace already holds (same subject,
predicate and object, case-insensitively, current) is left as it is, so importing the same notes again adds no fact
twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..catalog import args_model, validate_call
from ..models.redact import redact
from ..store import WorkspaceStore
from ..tools import writes
from ..tools.scope import Scope
from .peers import PeerFact, PeerImport, PeerNote


@dataclass(frozen=True)
class Limits:
    """What ``store`` and ``kg_edit`` take, read from their argument checks (so the two cannot drift apart)."""

    content: int
    title: int
    type: int
    tag: int
    tags: int
    project: int
    subject: int
    predicate: int
    object: int


def _max(prop: dict[str, Any]) -> int:
    for option in [prop, *prop.get("anyOf", [])]:
        if "maxLength" in option:
            return int(option["maxLength"])
    raise KeyError("maxLength")


@cache
def limits() -> Limits:
    """The limits of the ``store`` and ``kg_edit`` tools' arguments."""
    note = args_model("store").model_json_schema()["properties"]
    fact = args_model("kg_edit").model_json_schema()["properties"]
    return Limits(content=_max(note["content"]), title=_max(note["title"]), type=_max(note["type"]),
                  tag=_max(note["tags"]["items"]), tags=int(note["tags"]["maxItems"]), project=_max(note["project"]),
                  subject=_max(fact["subject"]), predicate=_max(fact["predicate"]), object=_max(fact["object"]))


def _short(text: str, most: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def _parts(content: str, most: int) -> list[str]:
    """``content`` in pieces of at most ``most`` characters, cut between lines where a line allows it."""
    if len(content) <= most:
        return [content]
    parts: list[str] = []
    current = ""
    for line in content.splitlines(keepends=True):
        while len(line) > most:  # one line longer than a part: cut it
            if current:
                parts.append(current)
                current = ""
            parts.append(line[:most])
            line = line[most:]
        if len(current) + len(line) > most:
            parts.append(current)
            current = ""
        current += line
    if current.strip():
        parts.append(current)
    return [p for p in parts if p.strip()]


def project_name(project: str) -> str:
    """``project`` as ``store`` takes it."""
    return _short(project, limits().project) or "general"


@dataclass
class Tally:
    """What storing a peer's notes and facts did."""

    notes: int = 0
    merged: int = 0
    redacted: int = 0
    facts: int = 0
    facts_there: int = 0


def store_arguments(note: PeerNote, project: str) -> Iterator[tuple[dict[str, Any], int]]:
    """The ``store`` arguments of ``note`` (one set per part) and the secrets redacted from each."""
    cap = limits()
    content = redact(note.content)
    title = redact(note.title)
    tags = [_short(t, cap.tag).replace(" ", "-") for t in note.tags]
    tags = list(dict.fromkeys(t for t in tags if t))[:cap.tags]
    type_ = _short(note.type, cap.type) or "note"
    parts = _parts(content.text, cap.content)
    for n, part in enumerate(parts, 1):
        heading = title.text if len(parts) == 1 else f"{title.text} (part {n} of {len(parts)})".lstrip()
        yield ({"content": part, "project": project, "kind": "note", "type": type_, "tags": tags,
                "title": _short(heading, cap.title)}, (content.count + title.count) if n == 1 else 0)


def _fact_arguments(fact: PeerFact, project: str) -> dict[str, Any]:
    cap = limits()
    return {"action": "add", "subject": _short(redact(fact.subject).text, cap.subject),
            "predicate": _short(fact.predicate, cap.predicate), "object": _short(redact(fact.object).text, cap.object),
            "project": project, "source": fact.source}


def _fact_there(store: WorkspaceStore | None, arguments: dict[str, Any]) -> bool:
    return store is not None and bool(store.facts(subject=arguments["subject"], predicate=arguments["predicate"],
                                                  object=arguments["object"], project=arguments["project"],
                                                  columns=["id"]))


def write_peer(scope: Scope | None, found: PeerImport, *, dry_run: bool, store: WorkspaceStore | None) -> Tally:
    """Store ``found``'s notes and facts in ``scope`` (a ``dry_run`` only counts them, and needs no scope).

    ``store`` is the target workspace's store when it exists (a dry run into a new workspace has none): the facts
    already there are looked up in it.

    Raises:
        InvalidArgument: a note or fact that ``store`` / ``kg_edit`` still refuses.
        ModelError, StoreError: embedding or writing failed (the notes stored before stay stored; importing again
            counts them as duplicates where duplicate handling is on).
    """
    project = project_name(found.project)
    tally = Tally()
    for note in found.notes:
        for arguments, secrets in store_arguments(note, project):
            tally.redacted += secrets
            tally.notes += 1
            if dry_run or scope is None:
                validate_call("store", arguments)
                continue
            stored = writes.store(scope, **_checked("store", arguments))
            # The store tool names the memory it counted a duplicate on (docs/design/upkeep.md, "Duplicates at
            # write time"); a store without duplicate handling has no such field.
            if stored.duplicate_of:
                tally.merged += 1
    seen: set[tuple[str, str, str]] = set()
    for fact in found.facts:
        arguments = _fact_arguments(fact, project)
        key = (arguments["subject"].lower(), arguments["predicate"].lower(), arguments["object"].lower())
        if key in seen or _fact_there(store, arguments):
            tally.facts_there += 1
            continue
        seen.add(key)
        tally.facts += 1
        if dry_run or scope is None:
            validate_call("kg_edit", arguments)
            continue
        writes.kg_edit(scope, **_checked("kg_edit", arguments))
    return tally


def _checked(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as the tool's checks give them (what ``Engine.call`` passes its row function).

    Raises:
        InvalidArgument: the tool refuses them.
    """
    given = validate_call(tool, arguments).model_dump(exclude_unset=True)
    return {k: v for k, v in given.items() if k not in ("workspace", "max_chars")}
