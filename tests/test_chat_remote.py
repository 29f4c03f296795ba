"""Chat through remote providers' function calling, against OpenAI- and Anthropic-shaped servers on loopback:
calls come back as the loop's calls, results go back in each API's shape, secrets never leave redacted."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from engram.core import Engine
from engram.core.chat.remote import RemoteChatModel
from engram.core.errors import ModelError

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a GitHub token's shape


class Scripted:
    """An HTTP endpoint answering each POST with the next reply its script makes from the request body."""

    def __init__(self, script: list[Callable[[dict[str, Any]], dict[str, Any]]], status: int = 200) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                fake.paths.append(self.path)
                answer = script.pop(0)(body)
                if body.get("stream") and status < 400:  # the same answer as the API streams it
                    events = (_anthropic_events(answer) if self.path == "/v1/messages"
                              else _openai_events(answer, usage=bool(body.get("stream_options"))))
                    reply = "".join(f"data: {json.dumps(e)}\n\n" if e != "[DONE]" else "data: [DONE]\n\n"
                                    for e in events).encode()
                    content_type = "text/event-stream"
                else:
                    reply, content_type = json.dumps(answer).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _halves(text: str) -> list[str]:
    return [text[: len(text) // 2], text[len(text) // 2:]] if text else []


def _openai_events(answer: dict[str, Any], *, usage: bool) -> list[Any]:
    """A chat completion as OpenAI streams it: text deltas, each call's name then its arguments in pieces, the
    finish reason, the usage (when asked for), [DONE]."""
    choice = answer["choices"][0]
    message = choice["message"]
    events: list[Any] = [{"choices": [{"index": 0, "delta": {"content": piece}}]}
                         for piece in _halves(message.get("content") or "")]
    for n, call in enumerate(message.get("tool_calls") or []):
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": n, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}]}}]})
        events += [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": n, "function": {"arguments": piece}}]}}]}
                   for piece in _halves(call["function"]["arguments"])]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason", "stop")}]})
    if usage and answer.get("usage"):
        events.append({"choices": [], "usage": answer["usage"]})
    return [*events, "[DONE]"]


def _anthropic_events(answer: dict[str, Any]) -> list[Any]:
    """A message as Anthropic streams it: message_start, each block's start and deltas, message_delta, stop."""
    usage = answer.get("usage") or {}
    events: list[Any] = [{"type": "message_start", "message": {"usage": {"input_tokens": usage.get("input_tokens", 0),
                                                                         "output_tokens": 1}}}]
    for n, block in enumerate(answer["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": n, "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": n, "delta": {"type": "text_delta", "text": piece}}
                       for piece in _halves(block["text"])]
        else:
            events.append({"type": "content_block_start", "index": n, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
            events += [{"type": "content_block_delta", "index": n,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}
                       for piece in _halves(json.dumps(block["input"]))]
        events.append({"type": "content_block_stop", "index": n})
    events.append({"type": "message_delta", "delta": {"stop_reason": answer.get("stop_reason")},
                   "usage": {"output_tokens": usage.get("output_tokens", 0)}})
    return [*events, {"type": "message_stop"}]


@pytest.fixture
def stocked(engine: Engine) -> Iterator[Engine]:
    engine.call("store", {"content": f"Deploys need the token {SECRET} and happen on Tuesdays.", "title": "Deploy"})
    yield engine


def _id_in(text: str) -> str:
    found = re.search(r"\b([0-9a-f]{12})\b", text)
    assert found, text
    return found.group(1)


def test_openai_function_calling_runs_the_loop_and_never_sends_a_secret(stocked: Engine) -> None:
    def first(body: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"message": {"content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_memory",
                                                          "arguments": json.dumps({"ids": ["nope"]})}}]},
            "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 900, "completion_tokens": 12}}

    def second(body: dict[str, Any]) -> dict[str, Any]:
        seeded = next(m for m in body["messages"] if m["role"] == "tool")
        return {"choices": [{"message": {"content": f"On Tuesdays [{_id_in(seeded['content'])}]."},
                             "finish_reason": "stop"}], "usage": {"prompt_tokens": 1000, "completion_tokens": 9}}

    server = Scripted([first, second])
    try:
        model = RemoteChatModel("openai", "vllm", server.url, "served-model", None, 8192)
        turn = stocked.chat("When do we deploy?", model=model)
    finally:
        server.close()
    assert turn.answer.startswith("On Tuesdays [") and len(turn.cited) == 1
    assert [s.name for s in turn.steps] == ["search", "get_memory"] and turn.steps[1].error, "an unknown id"
    assert turn.tokens == 900 + 12 + 1000 + 9
    sent = json.dumps(server.bodies)
    assert SECRET not in sent and "[REDACTED:github-token]" in sent, "the secret is redacted in every request"
    body = server.bodies[1]
    assert server.paths == ["/v1/chat/completions"] * 2 and body["model"] == "served-model"
    assert {t["function"]["name"] for t in body["tools"]} >= {"search", "get_memory"}
    call = next(m for m in body["messages"] if m.get("tool_calls") and m["tool_calls"][0]["id"] == "call00002")
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"ids": ["nope"]}, "JSON-string arguments"
    result = next(m for m in body["messages"] if m.get("tool_call_id") == "call00002")
    assert result["role"] == "tool" and "nope" in result["content"]


def test_anthropic_tool_use_runs_the_loop_with_alternating_turns(stocked: Engine) -> None:
    def first(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "Reading it."},
                            {"type": "tool_use", "id": "tu1", "name": "search", "input": {"query": "deploy day"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 800, "output_tokens": 20}}

    def second(body: dict[str, Any]) -> dict[str, Any]:
        results = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
        return {"content": [{"type": "text", "text": f"Tuesdays [{_id_in(results[0]['content'])}]."}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 900, "output_tokens": 8}}

    server = Scripted([first, second])
    try:
        model = RemoteChatModel("anthropic", "anthropic", server.url, "claude-test", "key-1", 200_000)
        turn = stocked.chat("When do we deploy?", model=model)
    finally:
        server.close()
    assert turn.answer.startswith("Tuesdays [") and turn.cited
    body = server.bodies[1]
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:])), f"turns alternate: {roles}"
    assert body["system"].startswith("You are Engram's chat") and body["tools"][0]["input_schema"]["type"] == "object"
    uses = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert [u["name"] for u in uses] == ["search", "search"] and uses[1]["input"] == {"query": "deploy day"}
    assert SECRET not in json.dumps(server.bodies)


def test_a_refusing_or_unreachable_provider_is_a_clear_error_and_the_reply_is_the_evidence(stocked: Engine) -> None:
    server = Scripted([lambda body: {"error": "bad key"}] * 2, status=401)
    try:
        model = RemoteChatModel("openai", "openai", server.url, "gpt-test", "sk-wrong", 8192)
        turn = stocked.chat("When do we deploy?", model=model)
    finally:
        server.close()
    assert turn.ended == "model_error" and turn.fallback and "Tuesdays" in turn.answer
    assert any("HTTP 401" in n for n in turn.notes)
    stocked.settings.chat.provider = "ollama"
    with pytest.raises(ModelError, match="chat.remote_model"):
        stocked.chat_model()


def test_replies_are_streamed_as_they_arrive_and_a_stop_ends_the_stream() -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"message": {"content": "We deploy on Tuesdays after the review.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search",
                                                          "arguments": json.dumps({"query": "deploy day"})}}]},
            "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 50, "completion_tokens": 7}}

    server = Scripted([answer, answer, answer])
    try:
        pieces: list[str] = []
        model = RemoteChatModel("openai", "vllm", server.url, "m", None, 8192)
        got = model.reply([{"role": "user", "content": "deploy?"}], None, deadline=time.monotonic() + 30,
                          max_tokens=64, on_text=pieces.append)
        assert pieces == ["We deploy on Tuesda", "ys after the review."], "the text as it came, in two pieces"
        assert got.text == ("We deploy on Tuesdays after the review.<tool_call>\n"
                            '{"name": "search", "arguments": {"query": "deploy day"}}\n</tool_call>')
        assert (got.prompt_tokens, got.tokens, got.stopped) == (50, 7, "stop")
        assert server.bodies[0]["stream"] is True and server.bodies[0]["stream_options"] == {"include_usage": True}
        ollama = RemoteChatModel("openai", "ollama", server.url, "m", None, 8192)
        counted = ollama.reply([{"role": "user", "content": "deploy?"}], None, deadline=time.monotonic() + 30,
                               max_tokens=64)
        assert "stream_options" not in server.bodies[1] and counted.tokens > 0, "estimated without usage"
        stopped = model.reply([{"role": "user", "content": "deploy?"}], None, deadline=time.monotonic() + 30,
                              max_tokens=64, stop=lambda: True)
        assert stopped.stopped == "cancelled" and stopped.text == "We deploy on Tuesda"
    finally:
        server.close()
