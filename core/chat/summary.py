"""The running summary of a conversation's oldest exchanges, once they no longer fit the model's context.

At the start of a turn, when an earlier exchange must be left out whole (not only its research) and the summary
does not cover it yet, the oldest exchanges are summarized: enough of them that the newest ones still shown fill
at most half of the room the conversation has, so the next summary waits several turns. The model writes one
bullet per newly covered exchange, starting with its message numbers; the bullets are appended to the summary so
far, which keeps at most ``SUMMARY_CHARS`` characters (the oldest bullets go first). A reply cut off by its length
keeps its whole bullets and covers what they name. What the model reads is redacted first (API keys, tokens,
passwords). It runs once per turn, before research and outside its budgets, with ``SUMMARY_TOKENS`` of output and
``SUMMARY_TIMEOUT_SEC``; when it fails, those exchanges are left out as before, and summarizing is tried again six
messages later.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from ..models.redact import redact
from .conversation import Conversation, Message
from .model import ChatModel

SUMMARY_CHARS = 2000
SUMMARY_TOKENS = 300
SUMMARY_TIMEOUT_SEC = 120.0
RETRY_AFTER_MESSAGES = 6
MESSAGE_CHARS = 600
INSTRUCTIONS = ("You summarize the start of a conversation between a person and an assistant that answers from "
                "the person's notes. Write one bullet per exchange given, starting with its message numbers, e.g. "
                "\"- (5–6) Asked when we deploy; answer: Tuesdays after the review [c5fa596cf60c].\" Keep "
                "decisions, facts, names and cited ids; one line each; nothing else.")
#: A bullet's message numbers: ``- (5–6)``, ``- (5-6)``, ``- (7)``.
_BULLET = re.compile(r"^\s*[-*•]\s*\((\d+)(?:\s*[–-]\s*(\d+))?\)")


@dataclass(frozen=True)
class Summarized:
    """What one summary did: the messages it covers now, and what its model call read and wrote."""

    first: int
    last: int
    tokens: int
    cut: bool  # the reply was cut off by its length: only its whole bullets were kept


def due(conversation: Conversation, hidden: list[int]) -> bool:
    """Whether a summary should be written now: an exchange is left out whole that the summary does not cover,
    and no failed summary is waiting for its retry."""
    if len(conversation.messages) < conversation.summary_retry_at:
        return False
    hide = set(hidden)
    return any(m.number in hide and m.number > conversation.summary_upto and not m.research and m.role != "tool"
               for m in conversation.messages)


def to_cover(conversation: Conversation, turn: int, hidden: list[int], room: int,
             tokens: Callable[[Sequence[Message]], int]) -> list[Message]:
    """The questions and answers of the oldest earlier exchanges to summarize now: every exchange left out whole,
    then more, oldest first, until those left fill at most half of ``room`` (``tokens`` measures messages)."""
    exchanges: dict[int, list[Message]] = {}
    for m in conversation.messages:
        if m.turn < turn and m.number > conversation.summary_upto and not m.research and m.role != "tool":
            exchanges.setdefault(m.turn, []).append(m)
    hide = set(hidden)
    order = sorted(exchanges)
    covered: list[Message] = []
    while order and (any(m.number in hide for m in exchanges[order[0]])
                     or tokens([m for n in order for m in exchanges[n]]) > room // 2):
        covered += exchanges[order.pop(0)]
    return covered


def summarize(conversation: Conversation, messages: list[Message], model: ChatModel, *,
              clock: Callable[[], float] = time.monotonic) -> Summarized:
    """Append bullets for ``messages`` to ``conversation.summary`` and move ``summary_upto`` past what they cover.

    Raises:
        ModelError: the model failed or wrote no bullet (the summary is unchanged; the retry is scheduled).
    """
    lines = [f"[{m.number}] {m.role}: {' '.join(redact(m.content).text.split())[:MESSAGE_CHARS]}" for m in messages]
    prompt: list[dict[str, Any]] = [{"role": "system", "content": INSTRUCTIONS},
                                    {"role": "user", "content": "Messages to summarize:\n" + "\n".join(lines)}]
    try:
        completion = model.reply(prompt, None, deadline=clock() + SUMMARY_TIMEOUT_SEC, max_tokens=SUMMARY_TOKENS)
        cut = completion.stopped == "length"
        bullets = _bullets(completion.text, cut=cut)
        if not bullets:
            raise ModelError("The model wrote no summary." if not cut else
                             f"The summary was cut off at {SUMMARY_TOKENS} tokens before its first bullet ended.")
    except ModelError:
        conversation.summary_retry_at = len(conversation.messages) + RETRY_AFTER_MESSAGES
        raise
    last = max(messages[-1].number if not cut else 0, *(end for _, end, _ in bullets))
    last = min(last, messages[-1].number)
    conversation.summary = _kept("\n".join(filter(None, [conversation.summary, *(text for _, _, text in bullets)])))
    conversation.summary_upto = max(conversation.summary_upto, last)
    conversation.summary_retry_at = 0
    return Summarized(messages[0].number, last, completion.prompt_tokens + completion.tokens, cut)


def _bullets(text: str, *, cut: bool) -> list[tuple[int, int, str]]:
    """(first, last message number, line) of each bullet in ``text``; a reply cut off loses its last line."""
    lines = [line.strip() for line in redact(text).text.strip().splitlines() if line.strip()]
    if cut and lines:
        lines = lines[:-1]
    out = []
    for line in lines:
        found = _BULLET.match(line)
        if found:
            first = int(found.group(1))
            out.append((first, int(found.group(2) or first), line))
    return out


def _kept(summary: str) -> str:
    """``summary`` within ``SUMMARY_CHARS``: its oldest bullets go first."""
    lines = summary.splitlines()
    while len("\n".join(lines)) > SUMMARY_CHARS and len(lines) > 1:
        lines.pop(0)
    return "\n".join(lines)[-SUMMARY_CHARS:]
