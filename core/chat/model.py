"""The chat model seam: what the loop needs from a model, and the local model behind it.

The loop talks to a ``ChatModel``: it renders messages (tool schemas, earlier calls and their results
included) as the model was trained to read them, counts the prompt's tokens, and writes one reply
before a deadline, handing each piece of text on as it comes. ``LocalChatModel`` does that with a GGUF's
own chat template on a loaded llama.cpp model; with ``tool_format`` ``auto`` it asks the template which
format it writes tool calls in (``template_probe``). Tests put a scripted model at this seam.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ModelError
from ..models.generation import Completion, LoadedModel
from .template_probe import detect_tool_format

Messages = Sequence[Mapping[str, Any]]
Tools = Sequence[Mapping[str, Any]]


class ChatModel(Protocol):
    """A model the chat loop can research and answer with."""

    @property
    def name(self) -> str: ...

    @property
    def tool_format(self) -> str:
        """The format its replies write tool calls in; ``none``: it chats without tools."""
        ...

    @property
    def format_note(self) -> str:
        """Why the format was chosen (said to the person when it is ``none``)."""
        ...

    @property
    def context(self) -> int:
        """Its context length in tokens."""
        ...

    def prompt_tokens(self, messages: Messages, tools: Tools | None) -> int:
        """Tokens of the prompt ``messages`` and ``tools`` make. Raises ``ModelError``."""
        ...

    def reply(self, messages: Messages, tools: Tools | None, *, deadline: float, max_tokens: int,
              on_text: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
              force_call: bool = False) -> Completion:
        """One reply before ``deadline`` (with ``force_call``, one tool call in the model's format, where the
        model can be held to it: see ``forces_calls``). Raises ``ModelError`` (``DeadlineExceeded`` among them)."""
        ...


@dataclass
class LocalChatModel:
    """A loaded GGUF, its template rendering the conversation, in the tool format its template writes."""

    loaded: LoadedModel
    name: str
    tool_format: str
    format_note: str = ""
    _arguments_as_text: bool = False

    @classmethod
    def open(cls, loaded: LoadedModel, name: str, tool_format: str) -> LocalChatModel:
        """Wrap ``loaded``; ``tool_format`` ``auto`` is decided from its chat template (``none`` when the
        template renders no call any format reads back, with the reason in ``format_note``)."""
        if tool_format != "auto":
            return cls(loaded, name, tool_format, f"chat.tool_format is {tool_format}.")
        choice = detect_tool_format(loaded.template, bos_token=loaded.bos, eos_token=loaded.eos)
        return cls(loaded, name, choice.tool_format or "none", choice.reason)

    @property
    def context(self) -> int:
        return self.loaded.context

    def _render(self, messages: Messages, tools: Tools | None) -> str:
        offered = tools if self.tool_format != "none" else None
        if not self._arguments_as_text:
            try:
                return self.loaded.prompt(messages, offered)
            except ModelError:
                if not any(m.get("tool_calls") for m in messages):
                    raise
                self._arguments_as_text = True  # this template wants a call's arguments as a JSON string
        return self.loaded.prompt([_arguments_as_text(m) for m in messages], offered)

    def prompt_tokens(self, messages: Messages, tools: Tools | None) -> int:
        return self.loaded.count_tokens(self._render(messages, tools))

    @property
    def forces_calls(self) -> bool:
        """Whether ``reply(force_call=True)`` can hold the model to its format (a grammar, for hermes)."""
        return self.tool_format == "hermes"

    def reply(self, messages: Messages, tools: Tools | None, *, deadline: float, max_tokens: int,
              on_text: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
              force_call: bool = False) -> Completion:
        grammar = hermes_call_grammar([t["function"]["name"] for t in tools or []]) \
            if force_call and self.forces_calls and tools else None
        return self.loaded.complete_prompt(self._render(messages, tools), deadline=deadline, max_tokens=max_tokens,
                                           on_text=on_text, stop=stop, grammar=grammar,
                                           checkpoint=self._fixed_start(messages, tools))

    def _fixed_start(self, messages: Messages, tools: Tools | None) -> str | None:
        """The start every prompt of a conversation shares: the instructions and the tool definitions, as the
        template renders them (``None`` when the first message is not the instructions)."""
        if not messages or messages[0].get("role") != "system":
            return None
        try:
            return self.loaded.prompt([messages[0]], tools if self.tool_format != "none" else None,
                                      add_generation_prompt=False)
        except ModelError:
            return None


def hermes_call_grammar(names: Sequence[str]) -> str:
    """GBNF for exactly one hermes call to one of ``names``: ``<tool_call>`` JSON ``</tool_call>``."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = {"type": "object", "properties": {"name": {"enum": list(names)}, "arguments": {"type": "object"}},
              "required": ["name", "arguments"], "additionalProperties": False}
    rules = str(json_schema_to_gbnf(json.dumps(schema))).replace("root ::=", "call ::=", 1)
    return 'root ::= "<tool_call>\\n" call "\\n</tool_call>"\n' + rules


def _arguments_as_text(message: Mapping[str, Any]) -> Mapping[str, Any]:
    calls = message.get("tool_calls")
    if not calls:
        return message
    return {**message, "tool_calls": [
        {**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"], ensure_ascii=False)}}
        for c in calls]}
