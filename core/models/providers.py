"""Where generation runs: this process (``local``), a local or remote HTTP server, or a cloud API.

- ``local``: the model pool of this process.
- ``ollama`` / ``vllm`` / ``openai``: OpenAI-compatible chat completions over HTTP, with JSON-schema
  output; the time left before the deadline is the HTTP timeout.
- ``anthropic``: the Messages API.
Both HTTP kinds go through ``models/remote_client.py``, which redacts every text it sends.
API keys of remote providers live in the OS keyring (service ``engram``), never in settings files.

The local-inference rule: inference is local only for ``local``, or for ``ollama``/``vllm`` whose base
URL's host is a loopback address (127.0.0.0/8, ::1, localhost). A LAN or remote host is never local.
``models/runs_where.py`` applies it for every reader of the settings.
"""

from __future__ import annotations

import ipaddress
import json
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import httpx2

from ..errors import ModelError
from .generation import Completion, LoadedModel, Rates
from .remote_client import RemoteClient

KEYRING_SERVICE = "engram"
DEFAULT_URLS = {"ollama": "http://127.0.0.1:11434", "vllm": "http://127.0.0.1:8000",
                "openai": "https://api.openai.com", "anthropic": "https://api.anthropic.com"}


class Provider(Protocol):
    name: str

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None, thinking: bool = True) -> Completion:
        """One completion; ``thinking=False`` asks a server that can think not to (the local model never does:
        its template is rendered without thinking)."""
        ...

    def rates(self, deadline: float | None = None) -> Rates | None:
        """How fast the model reads and writes (``None`` when unknown, e.g. a server elsewhere)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for this model (an estimate where its tokenizer is not at hand)."""
        ...


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` for a model whose tokenizer is elsewhere: about four bytes per token."""
    return len(text.encode("utf-8")) // 4 + 1


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this computer (127.0.0.0/8, ::1 or localhost)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_local_inference(provider: str, base_url: str = "") -> bool:
    """The local-inference rule (see the module docstring)."""
    if provider == "local":
        return True
    if provider in ("ollama", "vllm"):
        return is_loopback(base_url or DEFAULT_URLS[provider])
    return False


def api_key(provider: str) -> str:
    """The API key of a remote provider from the OS keyring.

    Raises:
        ModelError: no key is stored, or there is no usable keyring on this computer.
    """
    import keyring
    from keyring.errors import KeyringError

    try:
        key = keyring.get_password(KEYRING_SERVICE, provider)
    except KeyringError as exc:
        raise ModelError(f"No usable keyring on this computer ({exc}); remote providers need one for their API "
                         "key.", title="Keyring unavailable") from exc
    if not key:
        raise ModelError(f"No API key for {provider} in the keyring; store it with `engram keys set {provider}`.",
                         title="API key missing")
    return key


@dataclass
class LocalProvider:
    model: LoadedModel
    name: str = "local"

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None, thinking: bool = True) -> Completion:
        return self.model.complete(messages, deadline=deadline, max_tokens=max_tokens, json_schema=json_schema)

    def rates(self, deadline: float | None = None) -> Rates | None:
        return self.model.rates(deadline)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)


@dataclass
class OpenAICompatibleProvider:
    """ollama, vLLM or any OpenAI-compatible chat-completions server."""

    name: str
    base_url: str
    model: str
    key: str | None = None
    client: httpx2.Client | None = None

    def rates(self, deadline: float | None = None) -> Rates | None:
        return None

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def request_body(self, messages: list[dict[str, str]], *, max_tokens: int, json_schema: dict[str, Any] | None,
                     thinking: bool) -> dict[str, Any]:
        """The chat-completions request ``complete`` sends (see there)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": 0.0}
        if json_schema is not None:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "answer", "schema": json_schema, "strict": True}}
        if not thinking:
            if self.name == "ollama":
                body["reasoning_effort"] = "none"
            elif self.name == "vllm" or self.base_url.rstrip("/") != DEFAULT_URLS["openai"]:
                body["chat_template_kwargs"] = {"enable_thinking": False}
        return body

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None, thinking: bool = True) -> Completion:
        """One completion over HTTP (sent redacted: ``models/remote_client.py``). Without ``thinking`` the server
        is asked not to think: Ollama with ``reasoning_effort: none``, vLLM (and an ``openai`` provider at another
        address than OpenAI's) through the chat template's ``enable_thinking``.

        Raises:
            DeadlineExceeded: no answer before ``deadline``.
            ModelError: the server is unreachable, refused the request, or sent what cannot be read.
        """
        body = self.request_body(messages, max_tokens=max_tokens, json_schema=json_schema, thinking=thinking)
        started = time.monotonic()
        reply = RemoteClient("openai", self.name, self.base_url, self.key, self.client).post(body, deadline=deadline)
        try:
            data = reply.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
            usage = data.get("usage") or {}
        except (ValueError, KeyError, IndexError) as exc:
            raise ModelError(f"{self.name} sent an answer Engram cannot read ({exc}).") from exc
        stopped: Literal["stop", "length"] = "stop" if choice.get("finish_reason") in (None, "stop") else "length"
        return Completion(text, int(usage.get("completion_tokens", 0)), int(usage.get("prompt_tokens", 0)), stopped,
                          round(time.monotonic() - started, 4), None)


@dataclass
class AnthropicProvider:
    """Anthropic's Messages API (remote: never counts as local inference)."""

    model: str
    key: str
    base_url: str = DEFAULT_URLS["anthropic"]
    name: str = "anthropic"

    def rates(self, deadline: float | None = None) -> Rates | None:
        return None

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None, thinking: bool = True) -> Completion:
        """One completion from the Messages API (sent redacted: ``models/remote_client.py``); a JSON schema is
        asked for in the system prompt.

        Raises:
            DeadlineExceeded: no answer before ``deadline``.
            ModelError: Anthropic is unreachable or refused the request.
            ValueError: the answer is not JSON.
        """
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        if json_schema is not None:
            system += "\nAnswer with JSON only, matching this schema: " + json.dumps(json_schema)
        body = {"model": self.model, "max_tokens": max_tokens, "system": system,
                "messages": [m for m in messages if m["role"] != "system"]}
        started = time.monotonic()
        reply = RemoteClient("anthropic", "Anthropic", self.base_url, self.key, show_url=False).post(
            body, deadline=deadline)
        data = reply.json()
        text = "".join(part.get("text", "") for part in data.get("content", []))
        usage = data.get("usage") or {}
        return Completion(text, int(usage.get("output_tokens", 0)), int(usage.get("input_tokens", 0)),
                          "stop" if data.get("stop_reason") == "end_turn" else "length",
                          round(time.monotonic() - started, 4), None)
