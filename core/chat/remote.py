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
        """One reply; its calls are written into the text in the hermes shape (``force_call`` is not needed:
        the API returns calls as data).

        Raises:
            DeadlineExceeded: no answer before ``deadline``.
            ModelError: the provider is unreachable, refused the request, or sent what cannot be read.
        """
        if self.api == "anthropic":
            body = self._anthropic_request(messages, tools, max_tokens)
        else:
            body = self._openai_request(messages, tools, max_tokens)
        started = time.monotonic()
        response = RemoteClient(self.api, self.provider, self.base_url, self.key, self.client).post(
            body, deadline=deadline)
        try:
            data = response.json()
            text, stopped, read, wrote = (self._anthropic_reply(data) if self.api == "anthropic"
                                          else self._openai_reply(data))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelError(f"{self.provider} sent an answer Engram cannot read ({exc!r}).") from exc
        if on_text is not None and text:
            on_text(text)
        return Completion(text, wrote, read, stopped, round(time.monotonic() - started, 4), None)

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

    @staticmethod
    def _openai_reply(data: dict[str, Any]) -> tuple[str, Literal["stop", "length"], int, int]:
        choice = data["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        for call in message.get("tool_calls") or []:
            raw = call["function"].get("arguments") or "{}"
            try:
                arguments: Any = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                arguments = raw  # kept as written: the loop reports it to the model as unreadable
            text += _as_hermes(call["function"]["name"], arguments)
        usage = data.get("usage") or {}
        stopped: Literal["stop", "length"] = "length" if choice.get("finish_reason") == "length" else "stop"
        return text, stopped, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))

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

    @staticmethod
    def _anthropic_reply(data: dict[str, Any]) -> tuple[str, Literal["stop", "length"], int, int]:
        text = ""
        for block in data.get("content", []):
            if block.get("type") == "text":
                text += block.get("text", "")
            elif block.get("type") == "tool_use":
                text += _as_hermes(block["name"], block.get("input") or {})
        usage = data.get("usage") or {}
        stopped: Literal["stop", "length"] = "length" if data.get("stop_reason") == "max_tokens" else "stop"
        return text, stopped, int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
