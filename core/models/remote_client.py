"""One HTTP client for remote models: OpenAI-compatible chat completions and Anthropic's Messages API.

Used by the helper providers (``models/providers.py``) and by chat (``chat/remote.py``). It owns what the
two APIs share: the endpoint path, the auth headers, the deadline as the HTTP timeout, and the translation of
transport and HTTP failures into Engram's errors. Reading a reply stays with the caller (each reads its own
fields).

Redaction lives at this boundary: every string in a request body — message text, tool results, call
arguments — passes through ``redact`` before it is sent, so a caller cannot skip it. Redaction is
idempotent, so text a caller already redacted is sent unchanged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import httpx2

from ..errors import ModelError
from .generation import DeadlineExceeded
from .redact import redact

Api = Literal["openai", "anthropic"]
_PATHS: dict[Api, str] = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
ANTHROPIC_VERSION = "2023-06-01"


def redacted(value: Any) -> Any:
    """``value`` (a JSON-shaped body) with every string redacted; keys are left as they are."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, list):
        return [redacted(v) for v in value]
    if isinstance(value, Mapping):
        return {k: redacted(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class RemoteClient:
    """A remote model's endpoint. ``name`` is how errors call it; ``show_url`` puts ``base_url`` into the
    unreachable message. ``client``: a shared ``httpx2.Client`` (one is made per request when ``None``)."""

    api: Api
    name: str
    base_url: str
    key: str | None
    client: httpx2.Client | None = None
    show_url: bool = True

    def headers(self) -> dict[str, str]:
        """The API's auth headers: a bearer key for OpenAI-compatible servers (none without a key), the
        ``x-api-key`` and version headers for Anthropic."""
        if self.api == "anthropic":
            return {"x-api-key": self.key or "", "anthropic-version": ANTHROPIC_VERSION}
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def post(self, body: Mapping[str, Any], *, deadline: float) -> httpx2.Response:
        """Send ``body`` (redacted first) to the API's endpoint, with the time left before ``deadline`` as the
        timeout; the successful response is returned for the caller to read.

        Raises:
            DeadlineExceeded: the deadline passed before the request, or no answer came before it.
            ModelError: the server is unreachable, or answered with an HTTP error status.
        """
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded("The deadline passed before the model was asked.")
        url = self.base_url.rstrip("/") + _PATHS[self.api]
        http = self.client or httpx2.Client(trust_env=True)
        try:
            response = http.post(url, json=redacted(body), headers=self.headers(), timeout=remaining)
        except httpx2.TimeoutException as exc:
            raise DeadlineExceeded(f"{self.name} did not answer before the deadline.") from exc
        except httpx2.HTTPError as exc:
            where = f" at {self.base_url}" if self.show_url else ""
            raise ModelError(f"{self.name}{where} is unreachable ({exc}).") from exc
        finally:
            if self.client is None:
                http.close()
        if response.status_code >= 400:
            raise ModelError(f"{self.name} answered HTTP {response.status_code}: {response.text[:200]}")
        return response

    @contextmanager
    def stream(self, body: Mapping[str, Any], *, deadline: float) -> Iterator[Iterator[dict[str, Any]]]:
        """Send ``body`` (redacted first) with streaming on, and give its server-sent events as they arrive (each
        ``data:`` line's JSON; OpenAI's closing ``[DONE]`` ends them). Leaving the ``with`` closes the stream,
        so a caller that stops reading early (the person stopped the turn) ends the request.

        Raises:
            DeadlineExceeded: the deadline passed before the request, or the server went quiet past it.
            ModelError: the server is unreachable, answered with an HTTP error status, or sent an event that is
                not JSON.
        """
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded("The deadline passed before the model was asked.")
        url = self.base_url.rstrip("/") + _PATHS[self.api]
        http = self.client or httpx2.Client(trust_env=True)
        where = f" at {self.base_url}" if self.show_url else ""
        try:
            with http.stream("POST", url, json=redacted({**body, "stream": True}), headers=self.headers(),
                             timeout=remaining) as response:
                if response.status_code >= 400:
                    response.read()
                    raise ModelError(f"{self.name} answered HTTP {response.status_code}: {response.text[:200]}")
                yield self._events(response)
        except httpx2.TimeoutException as exc:
            raise DeadlineExceeded(f"{self.name} did not answer before the deadline.") from exc
        except httpx2.HTTPError as exc:
            raise ModelError(f"{self.name}{where} is unreachable or broke off ({exc}).") from exc
        finally:
            if self.client is None:
                http.close()

    def _events(self, response: httpx2.Response) -> Iterator[dict[str, Any]]:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # blank separators, "event:" names (Anthropic's data repeats them), comments
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                event = json.loads(data)
            except ValueError as exc:
                raise ModelError(f"{self.name} sent a streamed event Engram cannot read ({data[:80]!r}).") from exc
            if isinstance(event, dict):
                yield event
