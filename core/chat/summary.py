"""The running summary of a conversation's oldest exchanges, once they no longer fit the model's context.

At the start of a turn, the earlier exchanges that the prompt must leave out whole (not only their
research) and that the summary does not cover yet are summarized by the chat model into the running
summary: one bullet per exchange with its message numbers, at most 2,000 characters, in at most 300
output tokens and 120 seconds. What it reads is redacted first (API keys, tokens, passwords). When the
summary fails, those exchanges are left out as before, and summarizing is tried again six messages later.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..errors import ModelError
from ..models.redact import redact
from .conversation import Conversation, Message
from .model import ChatModel

SUMMARY_CHARS = 2000
SUMMARY_TOKENS = 300
SUMMARY_TIMEOUT_SEC = 120.0
RETRY_AFTER_MESSAGES = 6
MESSAGE_CHARS = 600
INSTRUCTIONS = ("You keep a running summary of a conversation between a person and an assistant that answers "
                "from the person's notes. Write one bullet per exchange, starting with its message numbers, "
                "e.g. \"- (5–6) Asked when we deploy; answer: Tuesdays after the review [c5fa596cf60c].\" Keep "
                "decisions, facts, names and cited ids. At most 2,000 characters; nothing else.")


def due(conversation: Conversation, hidden: list[int]) -> list[Message]:
    """The left-out exchanges' questions and answers the summary should cover now (none while a failed
    summary waits for its retry)."""
    if len(conversation.messages) < conversation.summary_retry_at:
        return []
    hide = set(hidden)
    return [m for m in conversation.messages
            if m.number in hide and m.number > conversation.summary_upto and not m.research and m.role != "tool"]


def summarize(conversation: Conversation, messages: list[Message], model: ChatModel, *,
              clock: Callable[[], float] = time.monotonic) -> int:
    """Fold ``messages`` into ``conversation.summary``; returns the tokens the model read and wrote.

    Raises:
        ModelError: the model failed or wrote nothing (the summary is unchanged; the retry is scheduled).
    """
    lines = [f"[{m.number}] {m.role}: {' '.join(redact(m.content).text.split())[:MESSAGE_CHARS]}" for m in messages]
    so_far = redact(conversation.summary).text if conversation.summary else "(none yet)"
    prompt = [{"role": "system", "content": INSTRUCTIONS},
              {"role": "user", "content": f"Summary so far:\n{so_far}\n\nMessages to add:\n" + "\n".join(lines)}]
    try:
        completion = model.reply(prompt, None, deadline=clock() + SUMMARY_TIMEOUT_SEC, max_tokens=SUMMARY_TOKENS)
        text = completion.text.strip()
        if not text:
            raise ModelError("The model wrote no summary.")
    except ModelError:
        conversation.summary_retry_at = len(conversation.messages) + RETRY_AFTER_MESSAGES
        raise
    conversation.summary = text[:SUMMARY_CHARS]
    conversation.summary_upto = max(m.number for m in messages)
    conversation.summary_retry_at = 0
    return completion.prompt_tokens + completion.tokens
