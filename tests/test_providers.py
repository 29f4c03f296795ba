"""Providers: the local-inference rule, an OpenAI-compatible server over real HTTP, keys from the keyring."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import keyring
import pytest

from engram.core.errors import ModelError
from engram.core.models.generation import DeadlineExceeded
from engram.core.models.providers import OpenAICompatibleProvider, api_key, is_local_inference, is_loopback

from .conftest import MemoryKeyring


@pytest.mark.parametrize(("provider", "url", "local"), [
    ("local", "", True),
    ("ollama", "", True),
    ("ollama", "http://localhost:11434", True),
    ("ollama", "http://127.8.0.1:11434", True),
    ("vllm", "http://[::1]:8000", True),
    ("ollama", "http://192.168.1.20:11434", False),
    ("vllm", "http://gpu-box.lan:8000", False),
    ("openai", "http://127.0.0.1:8000", False),
    ("anthropic", "", False),
])
def test_the_local_inference_rule(provider: str, url: str, local: bool) -> None:
    assert is_local_inference(provider, url) is local


def test_loopback_hosts() -> None:
    assert is_loopback("http://127.0.0.1:1") and is_loopback("http://LOCALHOST") and not is_loopback("http://10.0.0.1")


class FakeOpenAI:
    """An OpenAI-compatible chat-completions endpoint on a real local port."""

    def __init__(self, delay: float = 0.0) -> None:
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                fake.headers.append(dict(self.headers))
                time.sleep(delay)
                reply = json.dumps({"choices": [{"message": {"content": '{"answer": "ok"}'}, "finish_reason": "stop"}],
                                    "usage": {"prompt_tokens": 12, "completion_tokens": 5}}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_openai_compatible_server_answers_with_json_schema_output() -> None:
    fake = FakeOpenAI()
    try:
        provider = OpenAICompatibleProvider("ollama", fake.url, "qwen3.5:4b")
        out = provider.complete([{"role": "user", "content": "hi"}], deadline=time.monotonic() + 10,
                                json_schema={"type": "object"})
    finally:
        fake.close()
    assert json.loads(out.text) == {"answer": "ok"} and out.tokens == 5
    assert fake.bodies[0]["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert fake.bodies[0]["model"] == "qwen3.5:4b"


def test_the_time_left_is_the_http_timeout() -> None:
    fake = FakeOpenAI(delay=2.0)
    try:
        provider = OpenAICompatibleProvider("vllm", fake.url, "m")
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            provider.complete([{"role": "user", "content": "hi"}], deadline=started + 0.3)
        assert time.monotonic() - started < 1.5
    finally:
        fake.close()


def test_api_keys_come_from_the_keyring(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ModelError, match="No API key for openai"):
        api_key("openai")
    keyring.set_password("engram", "openai", "sk-test")
    assert api_key("openai") == "sk-test"
    fake = FakeOpenAI()
    try:
        OpenAICompatibleProvider("openai", fake.url, "gpt", key=api_key("openai")).complete(
            [{"role": "user", "content": "hi"}], deadline=time.monotonic() + 10)
    finally:
        fake.close()
    assert fake.headers[0]["Authorization"] == "Bearer sk-test"


def test_a_server_asked_not_to_think_is_asked_in_its_own_words() -> None:
    def asked(name: str, url: str) -> dict[str, Any]:
        body = OpenAICompatibleProvider(name, url, "m").request_body(
            [{"role": "user", "content": "x"}], max_tokens=8, json_schema=None, thinking=False)
        return {k: v for k, v in body.items() if k in ("reasoning_effort", "chat_template_kwargs")}

    assert asked("ollama", "http://127.0.0.1:11434") == {"reasoning_effort": "none"}
    assert asked("vllm", "http://10.0.0.5:8000") == {"chat_template_kwargs": {"enable_thinking": False}}
    assert asked("openai", "http://127.0.0.1:8080/v1") == {"chat_template_kwargs": {"enable_thinking": False}}
    assert asked("openai", "https://api.openai.com") == {}, "OpenAI's own API takes neither"
    thinking = OpenAICompatibleProvider("ollama", "http://x", "m").request_body(
        [], max_tokens=8, json_schema=None, thinking=True)
    assert "reasoning_effort" not in thinking and "chat_template_kwargs" not in thinking
