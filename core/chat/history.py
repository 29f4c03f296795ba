"""Fitting a conversation into the model's context, by the prompt's actual tokens (tool schemas included).

The instructions and the tool definitions come first and never change, so the model's evaluated prompt
is reused from one call to the next. What the current turn said is always kept. When the whole
conversation does not fit, earlier turns' research (tool calls and their results) goes first, oldest turn
first, then whole earlier exchanges, oldest first. The first message shown then carries the running
summary of the exchanges it covers (``summary``) and says which earlier messages are not shown;
``conversation_history`` reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .conversation import Conversation, Message
from .model import ChatModel


@dataclass(frozen=True)
class Fitted:
    """The messages of the next call, and the numbers of the earlier messages left out of it."""

    messages: list[dict[str, Any]]
    hidden: list[int]
    #: The prompt's tokens (tool schemas included).
    tokens: int = 0


def fit(conversation: Conversation, turn: int, model: ChatModel, tools: Sequence[dict[str, Any]] | None,
        instructions: str, *, reserve: int, closing: str | None = None) -> Fitted | None:
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
        shown = {m.number for m in kept}
        hidden = [m.number for m in earlier if m.number not in shown]
        messages = _messages(instructions, conversation, hidden, kept + current, closing)
        tokens = model.prompt_tokens(messages, tools)
        if tokens <= limit:
            return Fitted(messages, hidden, tokens)
    return None


def fit_messages(conversation: Conversation, turn: int, model: ChatModel, tools: Sequence[dict[str, Any]] | None,
                 instructions: str, *, reserve: int, closing: str | None = None) -> list[dict[str, Any]] | None:
    """``fit``'s messages alone (None when they do not fit)."""
    fitted = fit(conversation, turn, model, tools, instructions, reserve=reserve, closing=closing)
    return None if fitted is None else fitted.messages


def _messages(instructions: str, conversation: Conversation, hidden: list[int], kept: list[Message],
              closing: str | None) -> list[dict[str, Any]]:
    out = [{"role": "system", "content": instructions}] + [m.as_template() for m in kept]
    if hidden:
        covered = [n for n in hidden if n <= conversation.summary_upto] if conversation.summary else []
        rest = [n for n in hidden if n not in covered]
        note = ""
        if covered:
            note += f"(Summary of earlier messages {_ranges(covered)}:\n{conversation.summary}\n)\n"
        if rest:
            note += (f"({len(rest)} earlier message{'s' if len(rest) != 1 else ''} of this conversation "
                     f"({_ranges(rest)}) {'are' if len(rest) != 1 else 'is'} not shown.)\n")
        note += "(The conversation_history tool reads earlier messages in full.)\n\n"
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
