"""Chat through a remote provider's function calling: OpenAI-compatible servers (ollama, vLLM, OpenAI) and
Anthropic's Messages API.

The loop reads tool calls in one format; a remote model answers with structured calls instead, so this
model writes them into its reply in the hermes shape (``<tool_call>{"name": …, "arguments": …}</tool_call>``)
and reports ``hermes`` as its format. Earlier calls and their results go back in each API's own shape
(OpenAI: ``tool_calls`` with JSON-string arguments and ``role: tool`` results; Anthropic: ``tool_use`` and
``tool_result`` blocks). Every text that leaves the computer — messages, tool results, call arguments — is
redacted: the client (``models/remote_client.py``) redacts every string it sends; call arguments are also
redacted here before they become JSON text, so ``.env``-style lines inside them are still seen as lines.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx2

from ..errors import ModelError
from ..models.generation import Completion
from ..models.providers import estimate_tokens
from ..models.remote_client import RemoteClient, redacted

Messages = Sequence[Mapping[str, Any]]
Tools = Sequence[Mapping[str, Any]]


def _as_hermes(name: str, arguments: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"


@dataclass
class RemoteChatModel:
    """A chat model behind an HTTP API. ``api``: ``openai`` (any OpenAI-compatible server) or ``anthropic``."""

    api: Literal["openai", "anthropic"]
    provider: str
    base_url: str
    model: str
    key: str | None
    context: int
    client: httpx2.Client | None = None
    tool_format: str = "hermes"

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def format_note(self) -> str:
        return f"{self.provider} calls tools through its API's function calling."

    def prompt_tokens(self, messages: Messages, tools: Tools | None) -> int:
        return estimate_tokens(json.dumps(list(messages), default=str) + json.dumps(list(tools or [])))

    def reply(self, messages: Messages, tools: Tools | None, *, deadline: float, max_tokens: int,
              on_text: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
              force_call: bool = False) -> Completion:
        """One reply, streamed: its text goes to ``on_text`` as it arrives, and the tool calls it streams are
        written after the text in the hermes shape once whole (``force_call`` is not needed: the API returns
        calls as data). ``stop`` ends the stream where it is.

        Raises:
            DeadlineExceeded: no answer before ``deadline``.
            ModelError: the provider is unreachable, refused the request, or sent what cannot be read.
        """
        if self.api == "anthropic":
            body = self._anthropic_request(messages, tools, max_tokens)
        else:
            body = self._openai_request(messages, tools, max_tokens)
        started = time.monotonic()
        reading = _AnthropicStream() if self.api == "anthropic" else _OpenAIStream(self.provider)
        client = RemoteClient(self.api, self.provider, self.base_url, self.key, self.client)
        if self.api == "openai" and self.provider != "ollama":
            body["stream_options"] = {"include_usage": True}  # the token counts, in a last event
        ended: Literal["deadline", "cancelled"] | None = None
        with client.stream(body, deadline=deadline) as events:
            try:
                for event in events:
                    piece = reading.take(event)
                    if piece and on_text is not None:
                        on_text(piece)
                    if stop is not None and stop():
                        ended = "cancelled"
                        break
                    if time.monotonic() >= deadline:
                        ended = "deadline"
                        break
            except (KeyError, IndexError, TypeError, AttributeError) as exc:
                raise ModelError(f"{self.provider} sent a streamed answer Engram cannot read ({exc!r}).") from exc
        text = reading.text()
        wrote = reading.wrote or estimate_tokens(text)
        read = reading.read or self.prompt_tokens(messages, tools)
        return Completion(text, wrote, read, ended or reading.stopped, round(time.monotonic() - started, 4), None)

    # ------------------------------------------------------------------ OpenAI

    def _openai_request(self, messages: Messages, tools: Tools | None,
                        max_tokens: int) -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        for m in messages:
            item: dict[str, Any] = {"role": m["role"], "content": str(m.get("content") or "")}
            if m.get("tool_calls"):
                item["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                    "name": c["function"]["name"],
                    "arguments": json.dumps(redacted(c["function"]["arguments"]), ensure_ascii=False)}}
                    for c in m["tool_calls"]]
            if m["role"] == "tool":
                item["tool_call_id"] = m.get("tool_call_id", "")
            out.append(item)
        body: dict[str, Any] = {"model": self.model, "messages": out, "max_tokens": max_tokens, "temperature": 0.0}
        if tools:
            body["tools"] = list(tools)
        return body

    # --------------------------------------------------------------- Anthropic

    def _anthropic_request(self, messages: Messages, tools: Tools | None,
                           max_tokens: int) -> dict[str, Any]:
        system = "\n".join(str(m["content"]) for m in messages if m["role"] == "system")
        turns: list[dict[str, Any]] = []
        for m in messages:
            if m["role"] == "system":
                continue
            if m["role"] == "tool":
                role, blocks = "user", [{"type": "tool_result", "tool_use_id": m.get("tool_call_id", ""),
                                         "content": str(m.get("content") or "")}]
            else:
                role = str(m["role"])
                blocks = [{"type": "text", "text": str(m["content"])}] if m.get("content") else []
                blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                            "input": redacted(c["function"]["arguments"])} for c in m.get("tool_calls") or []]
            if turns and turns[-1]["role"] == role:  # the API wants user and assistant turns to alternate
                turns[-1]["content"] += blocks
            else:
                turns.append({"role": role, "content": blocks})
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "system": system, "messages": turns}
        if tools:
            body["tools"] = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
                              "input_schema": t["function"]["parameters"]} for t in tools]
        return body


def _arguments(raw: str) -> Any:
    """A streamed call's arguments: its JSON text read, or kept as written (the loop tells the model it could
    not be read)."""
    try:
        return json.loads(raw or "{}")
    except ValueError:
        return raw


class _OpenAIStream:
    """A chat-completions stream read: text deltas, tool calls assembled by index, the finish reason, usage."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.parts: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.stopped: Literal["stop", "length"] = "stop"
        self.read = self.wrote = 0

    def take(self, event: dict[str, Any]) -> str:
        """Fold one event in; the text it adds to the reply ("" for none)."""
        if event.get("usage"):
            self.read = int(event["usage"].get("prompt_tokens") or 0)
            self.wrote = int(event["usage"].get("completion_tokens") or 0)
        if event.get("error"):
            raise ModelError(f"{self.provider} stopped with an error: {str(event['error'])[:200]}")
        piece = ""
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                piece += str(delta["content"])
            for call in delta.get("tool_calls") or []:
                held = self.calls.setdefault(int(call.get("index", 0)), {"name": "", "arguments": ""})
                function = call.get("function") or {}
                held["name"] += str(function.get("name") or "")
                held["arguments"] += str(function.get("arguments") or "")
            if choice.get("finish_reason") == "length":
                self.stopped = "length"
        self.parts.append(piece)
        return piece

    def text(self) -> str:
        return "".join(self.parts) + "".join(_as_hermes(c["name"], _arguments(c["arguments"]))
                                             for _, c in sorted(self.calls.items()))


class _AnthropicStream:
    """A Messages API stream read: text deltas, ``tool_use`` blocks with their streamed input, the stop reason."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.blocks: dict[int, dict[str, str]] = {}
        self.stopped: Literal["stop", "length"] = "stop"
        self.read = self.wrote = 0

    def take(self, event: dict[str, Any]) -> str:
        kind = event.get("type")
        if kind == "message_start":
            self.read = int(((event.get("message") or {}).get("usage") or {}).get("input_tokens") or 0)
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                self.blocks[int(event["index"])] = {"name": str(block.get("name") or ""), "input": ""}
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                piece = str(delta.get("text") or "")
                self.parts.append(piece)
                return piece
            if delta.get("type") == "input_json_delta" and int(event["index"]) in self.blocks:
                self.blocks[int(event["index"])]["input"] += str(delta.get("partial_json") or "")
        elif kind == "message_delta":
            if (event.get("delta") or {}).get("stop_reason") == "max_tokens":
                self.stopped = "length"
            self.wrote = int((event.get("usage") or {}).get("output_tokens") or self.wrote)
        elif kind == "error":
            raise ModelError(f"Anthropic stopped with an error: {str(event.get('error'))[:200]}")
        return ""

    def text(self) -> str:
        return "".join(self.parts) + "".join(_as_hermes(b["name"], _arguments(b["input"]))
                                             for _, b in sorted(self.blocks.items()))
