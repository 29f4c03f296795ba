"""Claude Code's session transcripts (``~/.claude/projects/<project>/<session id>.jsonl``) read as turns.

Each line of a transcript is one JSON object: ``type`` ``user`` (the person's prompt, or the results of tools),
``assistant`` (text, thinking and ``tool_use`` blocks, often one block per line), ``system``, ``summary``,
``file-history-snapshot`` and others; every message has ``uuid``, ``sessionId``, ``timestamp`` and ``cwd``. A turn
starts at a prompt the person typed and holds what the assistant wrote and which tools it used until the next
one. Left out: tool results (only the tools' inputs become the turn's ``Tools:`` line), thinking, messages of
sub-agents (``isSidechain``), messages Claude Code writes itself (``isMeta``, the summary a compaction starts
with) and lines that are not JSON.

Reading is incremental: ``read_transcript(path, offset)`` starts at a byte offset an earlier read returned, reads
only whole lines (one being written stays for the next read) and returns the offset to start from next time:
the start of the last turn when that one may still grow, else the end of what it read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .tool_lines import tool_lines
from .turns import Turn

EDITOR = "claude-code"
#: The start of the message Claude Code writes after compacting a session (not the person's words).
_COMPACTED = "This session is being continued from a previous conversation"


@dataclass(frozen=True)
class Reading:
    """What one read of a transcript found: its turns (the last one ``open`` when the session may add to it) and
    the byte offset the next read starts at."""

    turns: list[Turn]
    offset: int
    last_open: bool


@dataclass
class _Building:
    turn_id: str
    started: datetime | None
    cwd: str
    prompt: str
    session_id: str
    at: int  # the byte offset of the prompt's line
    answer: list[str] = field(default_factory=list)
    uses: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _prompt_text(message: Mapping[str, Any]) -> str | None:
    """The person's words in a ``user`` line, or None when it holds only tool results (or nothing)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str)) if texts else None


def _is_prompt(entry: Mapping[str, Any], text: str | None) -> bool:
    if text is None or not text.strip() or entry.get("isMeta") or entry.get("isCompactSummary"):
        return False
    return not text.lstrip().startswith(_COMPACTED)


def _finish(building: _Building, number: int) -> Turn:
    return Turn(editor=EDITOR, session_id=building.session_id, turn_id=building.turn_id, number=number,
                started=building.started, cwd=building.cwd, prompt=building.prompt.strip(),
                answer="\n\n".join(t.strip() for t in building.answer if t.strip()),
                tools=tool_lines(building.uses, building.cwd))


def read_transcript(path: Path, offset: int = 0, *, first_number: int = 1, session_id: str = "") -> Reading:
    """The turns of the transcript at ``path`` from byte ``offset`` on (numbered from ``first_number``).

    ``session_id`` is used where a line does not carry one (the hook's own id, else the file's name).

    Raises:
        OSError: the file cannot be read.
    """
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1  # whole lines only: a line being written is read next time
    session = session_id or path.stem
    turns: list[Turn] = []
    building: _Building | None = None
    position = offset
    for raw in data[:end].splitlines(keepends=True):
        at, position = position, position + len(raw)
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if not isinstance(entry, dict) or entry.get("isSidechain"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        if entry.get("type") == "user":
            text = _prompt_text(message)
            if _is_prompt(entry, text):
                if building is not None:
                    turns.append(_finish(building, first_number + len(turns)))
                building = _Building(turn_id=str(entry.get("uuid") or f"{session}@{at}"),
                                     started=_time(entry.get("timestamp")), cwd=str(entry.get("cwd") or ""),
                                     prompt=text or "", session_id=str(entry.get("sessionId") or session), at=at)
        elif entry.get("type") == "assistant" and building is not None:
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    building.answer.append(block["text"])
                elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                    given = block.get("input")
                    building.uses.append((block["name"], given if isinstance(given, dict) else {}))
    if building is None:
        return Reading(turns, offset + end, last_open=False)
    turns.append(_finish(building, first_number + len(turns)))
    return Reading(turns, building.at, last_open=True)
