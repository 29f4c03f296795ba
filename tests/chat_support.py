"""A scripted chat model for the loop's tests: the seam the real model sits at."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engram.core.errors import ModelError
from engram.core.models.generation import Completion


class ScriptedReply(str):
    """A scripted reply that ended otherwise than by stopping on its own (``length``: cut off at ``max_tokens``)."""

    stopped: str

    def __new__(cls, text: str, *, stopped: str) -> ScriptedReply:
        reply = super().__new__(cls, text)
        reply.stopped = stopped
        return reply


Step = str | Callable[[list[dict[str, Any]], Any], str] | ModelError


class ScriptedModel:
    """Replies from a script, one entry per call: a text, a function of (messages, tools), or an error to raise.
    Records every call's messages and tools; counts a prompt's tokens as its JSON's length / 4."""

    def __init__(self, script: Sequence[Step], *, tool_format: str = "hermes", context: int = 8192,
                 piece: int = 7) -> None:
        self.script = list(script)
        self.name = "scripted"
        self.tool_format = tool_format
        self.format_note = f"chat.tool_format is {tool_format}."
        self.context = context
        self.piece = piece
        self.calls: list[tuple[list[dict[str, Any]], Any]] = []
        self.forced: list[bool] = []
        self.forces_calls = False

    def prompt_tokens(self, messages: Sequence[Mapping[str, Any]], tools: Any) -> int:
        return len(json.dumps(list(messages), default=str) + json.dumps(tools or [])) // 4

    def reply(self, messages: Sequence[Mapping[str, Any]], tools: Any, *, deadline: float, max_tokens: int,
              on_text: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
              force_call: bool = False) -> Completion:
        self.calls.append(([dict(m) for m in messages], tools))
        self.forced.append(force_call)
        if not self.script:
            raise AssertionError("the model was asked more often than the script says")
        step = self.script.pop(0)
        if isinstance(step, ModelError):
            raise step
        text = step(list(messages), tools) if callable(step) else step
        stopped = text.stopped if isinstance(text, ScriptedReply) else "stop"
        for i in range(0, len(text), self.piece):
            if on_text is not None:
                on_text(text[i:i + self.piece])
            if stop is not None and stop():
                text, stopped = text[:i + self.piece], "cancelled"
                break
        return Completion(text, max(1, len(text) // 4), self.prompt_tokens(messages, tools), stopped, 0.01, 0.0)


def call(name: str, **arguments: Any) -> str:
    """A hermes tool call."""
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def first_id(messages: list[dict[str, Any]]) -> str:
    """The first memory id in the latest tool result."""
    tool = next(m for m in reversed(messages) if m["role"] == "tool")
    found = re.search(r"^\[\d+\] ([0-9a-f]{12}) ·", tool["content"], re.M)
    assert found, tool["content"]
    return found.group(1)


def citing(text: str) -> Step:
    """An answer that cites the first memory of the latest tool result, as a model that cites writes it."""
    return lambda messages, tools: f"{text} [{first_id(messages)}]"


def uncited(text: str) -> list[Step]:
    """A model that will not cite: its answer in research, and the same again when the closing request lists
    the memories read by id and asks for one that cites them."""
    return [text, text]
