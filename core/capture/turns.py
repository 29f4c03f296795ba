"""A captured turn of an editor's session: what the person asked, what the assistant answered, what its tools did.

A transcript reader (``claude_code``, ``codex``) turns an editor's session file into ``Turn`` records; capture
stores each as one exchange memory. The record keeps only what a later search needs: the person's words, the
assistant's own text and one line about its tools (``tool_lines``); tool outputs and file contents are never
kept. ``exchange_text`` is the memory's content, every secret already redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from ..models.redact import redact

#: At most this many characters of the person's words and of the answer go into one turn's memory (a store
#: takes 20,000): a pasted log or a very long answer keeps its start, and says it was cut.
PROMPT_CHARS = 6000
ANSWER_CHARS = 10000
CUT = " […]"


@dataclass(frozen=True)
class Turn:
    """One turn: the person's prompt and everything the assistant did until the next prompt.

    ``turn_id`` is the editor's own id of the prompt's message (stable across re-reads, so a turn is stored once);
    ``number`` counts the session's turns from 1 in the order read.
    """

    editor: str
    session_id: str
    turn_id: str
    number: int
    started: datetime | None
    cwd: str
    prompt: str
    answer: str
    tools: tuple[str, ...] = ()



#: How a turn's heading names the editor it was said in, when the prompt names no speaker.
EDITOR_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}
_NAMED = re.compile(r"^([^\n:]{1,40}):\s")


def when_in_words(moment: datetime) -> str:
    """A time as a conversation's turns are dated: ``1:56 pm on 8 May, 2023`` (in this computer's time zone)."""
    local = moment.astimezone()
    hour = local.hour % 12 or 12
    return f"{hour}:{local.minute:02d} {'am' if local.hour < 12 else 'pm'} on {local.day} {local:%B}, {local.year}"


def turn_heading(turn: Turn) -> str:
    """A captured turn's title: who spoke and when, as an agent titles a conversation's turn (``Caroline, 1:56 pm on
    8 May, 2023``). Who: the speaker a prompt names at its start (``Name: …``, a conversation pasted or relayed),
    else the editor. Measured on LoCoMo: the prompt's first line as the title left the hook path 0.021 below the
    ``store`` path (all@10); who and when put it within 0.004 (benchmark/RESULTS.md, Capture)."""
    named = _NAMED.match(redact(turn.prompt).text.strip())
    who = named.group(1).strip() if named else EDITOR_NAMES.get(turn.editor, turn.editor)
    return f"{who}, {when_in_words(turn.started)}" if turn.started is not None else who


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - len(CUT)].rstrip() + CUT


def exchange_text(turn: Turn) -> str:
    """The memory a turn becomes: a ``User:`` and an ``Assistant:`` paragraph and one
    ``Tools:`` line, each part clipped to its share and every recognised secret redacted.

    A prompt that got no answer and ran no tool (the session ended, or the editor was stopped) is the person's
    words alone: a lone ``User:`` label tells nothing, and it would hide a speaker the words name themselves
    (``Name: …``, as a conversation's exchange is stored; ``core/retrieval/speakers.py``)."""
    # Redacted before clipped: a secret cut in two by the clip would no longer be recognised.
    prompt = _clip(redact(turn.prompt).text, PROMPT_CHARS)
    if not turn.answer.strip() and not turn.tools:
        return prompt
    parts = [f"User: {prompt}"]
    if turn.answer.strip():
        parts.append(f"Assistant: {_clip(redact(turn.answer).text, ANSWER_CHARS)}")
    if turn.tools:
        parts.append("Tools: " + redact("; ".join(turn.tools)).text)
    return "\n".join(parts)


def project_of(cwd: str) -> str:
    """The project of a session: the name of the folder it ran in (``general`` when unknown)."""
    name = cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    return name[:100] or "general"
