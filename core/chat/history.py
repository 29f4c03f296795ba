"""Fitting a conversation into the model's context, by the prompt's actual tokens (tool schemas included).

The instructions and the tool definitions come first and never change, so the model's evaluated prompt
is reused from one call to the next. What the current turn said is always kept. When the whole
conversation does not fit, earlier turns' research (tool calls and their results) goes first, oldest turn
first, then whole earlier exchanges, oldest first; the first message shown then says which earlier
messages are not shown, and ``conversation_history`` can read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conversation import Conversation, Message
from .model import ChatModel


def fit_messages(conversation: Conversation, turn: int, model: ChatModel, tools: Sequence[dict[str, Any]] | None,
                 instructions: str, *, reserve: int, closing: str | None = None) -> list[dict[str, Any]] | None:
    """The messages for the next call of turn ``turn``, leaving ``reserve`` tokens for the reply; None when
    even the instructions, the tools and this turn's own messages do not fit.

    Raises:
        ModelError: the model's template does not render the messages.
    """
    limit = model.context - reserve
    earlier = [m for m in conversation.messages if m.turn < turn]
    current = [m for m in conversation.messages if m.turn == turn]
    turns = sorted({m.turn for m in earlier})
    # Each candidate keeps less than the one before: all; then without the research of turn 1, of turn 2, …;
    # then without the whole of turn 1, turn 2, …
    candidates: list[list[Message]] = [earlier]
    for n in turns:
        candidates.append([m for m in candidates[-1] if not (m.turn == n and m.research)])
    for n in turns:
        candidates.append([m for m in candidates[-1] if m.turn != n])
    for kept in candidates:
        messages = _messages(instructions, earlier, kept + current, closing)
        if model.prompt_tokens(messages, tools) <= limit:
            return messages
    return None


def _messages(instructions: str, earlier: list[Message], kept: list[Message], closing: str | None) -> list[dict[str, Any]]:
    shown = {m.number for m in kept}
    hidden = [m.number for m in earlier if m.number not in shown]
    out = [{"role": "system", "content": instructions}] + [m.as_template() for m in kept]
    if hidden:
        note = (f"({len(hidden)} earlier message{'s' if len(hidden) != 1 else ''} of this conversation "
                f"({_ranges(hidden)}) {'are' if len(hidden) != 1 else 'is'} not shown; the conversation_history tool "
                "reads them.)\n\n")
        first_user = next(i for i, m in enumerate(out) if m["role"] == "user")
        out[first_user] = {**out[first_user], "content": note + out[first_user]["content"]}
    if closing is not None:
        out.append({"role": "user", "content": closing})
    return out


def _ranges(numbers: list[int]) -> str:
    spans: list[tuple[int, int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    return ", ".join(f"{a}–{b}" if a != b else f"{a}" for a, b in spans)
