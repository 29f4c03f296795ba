"""A stand-in for the Anthropic Messages API on a loopback port: the real Claude Code runs a session against it.

It answers every ``POST /v1/messages`` with one text reply (streamed when asked), ``count_tokens`` with a small
count, and keeps each request body so that a test can read what the model was sent (e.g. a hook's context).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class FakeAnthropic:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _json(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._json({})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    request = json.loads(raw)
                except ValueError:
                    request = {}
                if "count_tokens" in self.path:
                    self._json({"input_tokens": 10})
                    return
                fake.requests.append(request)
                message = {"id": f"msg_{len(fake.requests)}", "type": "message", "role": "assistant",
                           "model": request.get("model", "claude"), "content": [], "stop_reason": None,
                           "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
                if not request.get("stream"):
                    self._json({**message, "content": [{"type": "text", "text": fake.reply}],
                                "stop_reason": "end_turn"})
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                events = [
                    ("message_start", {"type": "message_start", "message": message}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": fake.reply}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                          "stop_sequence": None},
                                       "usage": {"output_tokens": 5}}),
                    ("message_stop", {"type": "message_stop"}),
                ]
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

        return Handler

    def sent_text(self) -> str:
        """Every text of every message sent to the model, joined."""
        parts: list[str] = []
        for request in self.requests:
            for message in request.get("messages", []):
                content = message.get("content")
                blocks = content if isinstance(content, list) else [{"text": content}]
                parts += [str(b.get("text", "")) for b in blocks if isinstance(b, dict)]
        return "\n".join(parts)


@contextmanager
def fake_anthropic(reply: str) -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(reply)
    thread = threading.Thread(target=fake._server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake._server.shutdown()
        fake._server.server_close()
