"""The remote-model client: every text it is handed is redacted before it leaves, for both APIs; its errors
keep their wording."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engram.core.errors import ModelError
from engram.core.models.redact import redact
from engram.core.models.remote_client import RemoteClient

SECRETS = ["ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2, "sk-ant-" + "x" * 30, "AKIAIOSFODNN7EXAMPLE",
           "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4"]


class Recorder:
    """A loopback endpoint that keeps the raw bytes and headers of every request and answers ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.raw: list[bytes] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                fake.raw.append(self.rfile.read(int(self.headers["Content-Length"])))
                fake.paths.append(self.path)
                fake.headers.append(dict(self.headers))
                reply = b'{"ok": true}' if status < 400 else b"refused"
                self.send_response(status)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    fake = Recorder()
    yield fake
    fake.close()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_secret_in_any_text_handed_to_the_client_never_reaches_the_server(recorder: Recorder, api: str) -> None:
    body = {"model": "m", "system": f"system {SECRETS[0]}",
            "messages": [{"role": "user", "content": f"user {SECRETS[1]}"},
                         {"role": "user", "content": [{"type": "tool_result", "content": f"result {SECRETS[2]}"}]},
                         {"role": "assistant", "tool_calls": [{"function": {"arguments": {
                             "nested": [f"arg {SECRETS[3]}", {"deeper": "API_KEY=abcdefgh12345"}]}}}]}]}
    RemoteClient(api, "test", recorder.url, "key-1").post(body, deadline=time.monotonic() + 10)  # type: ignore[arg-type]
    sent = recorder.raw[0].decode()
    for secret in SECRETS + ["abcdefgh12345"]:
        assert secret not in sent
    assert sent.count("[REDACTED:") == 5
    assert recorder.paths == ["/v1/chat/completions" if api == "openai" else "/v1/messages"]


def test_auth_headers_follow_the_api(recorder: Recorder) -> None:
    deadline = time.monotonic() + 10
    RemoteClient("openai", "vllm", recorder.url, None).post({}, deadline=deadline)
    RemoteClient("openai", "openai", recorder.url, "sk-1").post({}, deadline=deadline)
    RemoteClient("anthropic", "anthropic", recorder.url, "k").post({}, deadline=deadline)
    assert "Authorization" not in recorder.headers[0]
    assert recorder.headers[1]["Authorization"] == "Bearer sk-1"
    assert (recorder.headers[2]["x-api-key"], recorder.headers[2]["anthropic-version"]) == ("k", "2023-06-01")


def test_errors_keep_their_words() -> None:
    refusing = Recorder(status=401)
    try:
        with pytest.raises(ModelError, match=r"^openai answered HTTP 401: refused$"):
            RemoteClient("openai", "openai", refusing.url, "k").post({}, deadline=time.monotonic() + 10)
    finally:
        refusing.close()
    with pytest.raises(ModelError, match=r"^Anthropic is unreachable \("):
        RemoteClient("anthropic", "Anthropic", "http://127.0.0.1:9", "k", show_url=False).post(
            {}, deadline=time.monotonic() + 10)
    with pytest.raises(ModelError, match=r"^ollama at http://127\.0\.0\.1:9 is unreachable \("):
        RemoteClient("openai", "ollama", "http://127.0.0.1:9", None).post({}, deadline=time.monotonic() + 10)


@pytest.mark.parametrize("secret", SECRETS + ["postgres://me:hunter2hunter2@db/x", "export GITHUB_TOKEN=abcdefgh123"])
def test_redacting_twice_sends_what_redacting_once_sends(secret: str) -> None:
    once = redact(f"text {secret} more").text
    assert redact(once).text == once
    assert json.dumps(once)  # stays plain text
