"""A captured turn of an editor's session: what the person asked, what the assistant answered, what its tools did.

A transcript reader (``claude_code``, ``codex``) turns an editor's session file into ``Turn`` records; capture
stores each as one exchange memory. The record keeps only what a later search needs: the person's words, the
assistant's own text and one line about its tools (``tool_lines``); tool outputs and file contents are never
kept. ``exchange_text`` is the memory's content, every secret already redacted.
"""

from __future__ import annotations

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

    @property
    def title(self) -> str:
        """The prompt's first line, secrets redacted, at most 80 characters."""
        first = next((line.strip() for line in redact(self.prompt).text.splitlines() if line.strip()), "")
        return first if len(first) <= 80 else first[:79].rstrip() + "…"


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
