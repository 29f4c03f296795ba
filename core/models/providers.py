"""Where generation runs: this process (``local``), a local or remote HTTP server, or a cloud API.

- ``local``: the model pool of this process.
- ``ollama`` / ``vllm`` / ``openai``: OpenAI-compatible chat completions over HTTP, with JSON-schema
  output; the time left before the deadline is the HTTP timeout.
- ``anthropic``: the Messages API.
API keys of remote providers live in the OS keyring (service ``engram``), never in settings files.

The local-inference rule: inference is local only for ``local``, or for ``ollama``/``vllm`` whose base
URL's host is a loopback address (127.0.0.0/8, ::1, localhost). A LAN or remote host is never local.
"""

from __future__ import annotations

import ipaddress
import json
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import httpx

from ..errors import ModelError
from .generation import Completion, DeadlineExceeded, LoadedModel, Rates

KEYRING_SERVICE = "engram"
DEFAULT_URLS = {"ollama": "http://127.0.0.1:11434", "vllm": "http://127.0.0.1:8000",
                "openai": "https://api.openai.com", "anthropic": "https://api.anthropic.com"}


class Provider(Protocol):
    name: str

    @property
    def local(self) -> bool: ...

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion: ...

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

    @property
    def local(self) -> bool:
        return True

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion:
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
    client: httpx.Client | None = None

    @property
    def local(self) -> bool:
        return is_local_inference(self.name, self.base_url)

    def rates(self, deadline: float | None = None) -> Rates | None:
        return None

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded("The deadline passed before the model was asked.")
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": 0.0}
        if json_schema is not None:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "answer", "schema": json_schema, "strict": True}}
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        started = time.monotonic()
        http = self.client or httpx.Client(trust_env=True)
        try:
            reply = http.post(self.base_url.rstrip("/") + "/v1/chat/completions", json=body, headers=headers,
                              timeout=remaining)
        except httpx.TimeoutException as exc:
            raise DeadlineExceeded(f"{self.name} did not answer before the deadline.") from exc
        except httpx.HTTPError as exc:
            raise ModelError(f"{self.name} at {self.base_url} is unreachable ({exc}).") from exc
        finally:
            if self.client is None:
                http.close()
        if reply.status_code >= 400:
            raise ModelError(f"{self.name} answered HTTP {reply.status_code}: {reply.text[:200]}")
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

    @property
    def local(self) -> bool:
        return False

    def rates(self, deadline: float | None = None) -> Rates | None:
        return None

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded("The deadline passed before the model was asked.")
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        if json_schema is not None:
            system += "\nAnswer with JSON only, matching this schema: " + json.dumps(json_schema)
        body = {"model": self.model, "max_tokens": max_tokens, "system": system,
                "messages": [m for m in messages if m["role"] != "system"]}
        started = time.monotonic()
        try:
            reply = httpx.post(self.base_url.rstrip("/") + "/v1/messages", json=body, timeout=remaining,
                               headers={"x-api-key": self.key, "anthropic-version": "2023-06-01"})
        except httpx.TimeoutException as exc:
            raise DeadlineExceeded("Anthropic did not answer before the deadline.") from exc
        except httpx.HTTPError as exc:
            raise ModelError(f"Anthropic is unreachable ({exc}).") from exc
        if reply.status_code >= 400:
            raise ModelError(f"Anthropic answered HTTP {reply.status_code}: {reply.text[:200]}")
        data = reply.json()
        text = "".join(part.get("text", "") for part in data.get("content", []))
        usage = data.get("usage") or {}
        return Completion(text, int(usage.get("output_tokens", 0)), int(usage.get("input_tokens", 0)),
                          "stop" if data.get("stop_reason") == "end_turn" else "length",
                          round(time.monotonic() - started, 4), None)
