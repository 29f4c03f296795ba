"""Codex's session files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``) read as turns.

Each line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (the session's id and ``cwd``) first, then
``response_item`` lines (``message`` of role ``user``/``assistant``/``developer``, ``reasoning``,
``function_call`` with its ``arguments`` as a JSON string, ``function_call_output``, ``custom_tool_call``,
``local_shell_call``), ``event_msg`` lines (the same conversation as events, token counts …) and
``turn_context`` lines (the ``cwd`` of the turns after them). A turn starts at a ``user`` message the person
typed: the context Codex adds itself (``<environment_context>``, ``<user_instructions>``, an AGENTS.md) is not
one. Read: the assistant's ``output_text`` and the tools' names and inputs; left out: reasoning, tool outputs,
events and lines that are not JSON. Files written before the envelope (a bare session object first, then bare
items) are read the same way.

A Codex message carries no id of its own, so a turn's id is the session's id and the byte offset of its
prompt's line: a session file only grows, so the same turn always gets the same id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from .claude_code import Reading
from .tool_lines import tool_lines
from .turns import Turn

EDITOR = "codex"
_INJECTED = ("<environment_context", "<user_instructions", "<user_shell_command", "# AGENTS.md", "<turn_aborted",
             "Another language model started to solve this problem")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def session_of(path: Path) -> str:
    """A session's id from its file's name (``rollout-2025-05-07T17-24-21-<uuid>.jsonl``), else the name."""
    found = _UUID.search(path.stem)
    return found.group(0) if found else path.stem


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _texts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(b["text"] for b in content
                     if isinstance(b, dict) and b.get("type") in kinds and isinstance(b.get("text"), str))


def _arguments(item: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = item.get("arguments", item.get("input", item.get("action")))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {"input": raw}
    return raw if isinstance(raw, dict) else {}


def read_rollout(path: Path, offset: int = 0, *, first_number: int = 1, session_id: str = "") -> Reading:
    """The turns of the Codex session file at ``path`` from byte ``offset`` on (numbered from ``first_number``).

    Raises:
        OSError: the file cannot be read.
    """
    with path.open("rb") as handle:
        head = handle.readline() if offset else b""
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    session = session_id or session_of(path)
    cwd = _meta_cwd(head)
    turns: list[Turn] = []
    building: dict[str, Any] | None = None
    position = offset

    def finish(turn: dict[str, Any]) -> Turn:
        return Turn(editor=EDITOR, session_id=session, turn_id=f"{session}@{turn['at']}",
                    number=first_number + len(turns), started=turn["started"], cwd=turn["cwd"],
                    prompt=turn["prompt"].strip(), answer="\n\n".join(a.strip() for a in turn["answer"] if a.strip()),
                    tools=tool_lines(turn["uses"], turn["cwd"]))

    for raw in data[:end].splitlines(keepends=True):
        at, position = position, position + len(raw)
        try:
            line = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if not isinstance(line, dict):
            continue
        kind, item = (line.get("type"), line.get("payload")) if "payload" in line else (None, line)
        if not isinstance(item, dict):
            continue
        if kind == "session_meta" or (kind is None and "instructions" in item and "id" in item):
            cwd = str(item.get("cwd") or cwd)
            continue
        if kind == "turn_context":
            cwd = str(item.get("cwd") or cwd)
            continue
        if kind == "compacted" and building is not None:
            # The summary a compaction writes is an assistant message just before this line: not the turn's answer.
            summary = str(item.get("message") or "").strip()
            if summary and building["answer"] and summary.endswith(building["answer"][-1].strip()):
                building["answer"].pop()
            continue
        if kind not in (None, "response_item"):
            continue
        meta = line.get("metadata")
        if isinstance(meta, dict) and meta.get("compaction_output"):
            continue
        if item.get("type") == "message" and item.get("role") == "user":
            text = _texts(item.get("content"), ("input_text", "text"))
            if not text.strip() or text.lstrip().startswith(_INJECTED):
                continue
            if building is not None:
                turns.append(finish(building))
            building = {"at": at, "started": _time(line.get("timestamp")), "cwd": cwd, "prompt": text,
                        "answer": [], "uses": []}
        elif building is None:
            continue
        elif item.get("type") == "message" and item.get("role") == "assistant":
            building["answer"].append(_texts(item.get("content"), ("output_text", "text")))
        elif item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(item.get("name") or ("local_shell" if item.get("type") == "local_shell_call" else "tool"))
            building["uses"].append((name, _arguments(item)))
    if building is None:
        return Reading(turns, offset + end, last_open=False)
    turns.append(finish(building))
    return Reading(turns, building["at"], last_open=True)


def _meta_cwd(head: bytes) -> str:
    """The ``cwd`` of a session's first line (its ``session_meta``), for a read that starts later in the file."""
    try:
        line = json.loads(head) if head else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return ""
    if not isinstance(line, dict):
        return ""
    item = line.get("payload", line)
    return str(item.get("cwd") or "") if isinstance(item, dict) else ""
