"""Tags: deterministic ones on every memory; the helper model's classification when tagger.llm is on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.ingest.tagging import deterministic_tags, layer
from engram.core.models.generation import Completion, DeadlineExceeded

from .conftest import HashingEmbedder, write_tree


@pytest.mark.parametrize(("source", "expected"), [
    ("/p/docs/guide.md", "docs"), ("/p/src/app.py", "code"), ("/p/tests/test_app.py", "tests"),
    ("/p/app_test.go", "tests"), ("/p/pyproject.toml", "config"), ("/p/logo.svg", "other"),
])
def test_layers_from_paths(source: str, expected: str) -> None:
    assert layer(source) == expected


def test_deterministic_tags_are_namespaced() -> None:
    assert deterministic_tags("chunk", "python", "/p/src/app.py") == ["kind:chunk", "lang:python", "layer:code"]
    assert deterministic_tags("note") == ["kind:note"]


def test_every_memory_gets_them_and_answers_do_not_print_them(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"src/app.py": "def serve():\n    '''Serve the app.'''\n"})
    engine.call("ingest_path", {"path": str(root)})
    stored = engine.call("store", {"content": "serve behind nginx", "tags": ["ops"]})
    hits = {h.kind: h for h in engine.call("search", {"query": "serve"}).result.hits}
    assert set(hits["chunk"].tags) == {"kind:chunk", "lang:python", "layer:code"}
    assert hits["note"].tags == ["ops", "kind:note"]
    text = engine.call("search", {"query": "serve"}).text
    assert "#ops" in text and "kind:" not in text and "layer:" not in text
    only_code = engine.call("search", {"query": "serve", "tags": ["layer:code"]}).result.hits
    assert [h.kind for h in only_code] == ["chunk"] and stored


class Classifier:
    """A helper-model double: one reply per request (a classification object, raw text, or an error), recording
    each request's single message."""

    def __init__(self, reply: Any, name: str = "local") -> None:
        self.reply, self.calls, self.name = reply, [], name
        self.thinking: list[bool] = []

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None, thinking: bool = True) -> Completion:
        assert json_schema is None and len(messages) == 1, "one message, not held to a grammar"
        self.calls.append(messages[0]["content"])
        self.thinking.append(thinking)
        reply = self.reply(messages[0]["content"]) if callable(self.reply) else self.reply
        if isinstance(reply, Exception):
            raise reply
        return Completion(reply if isinstance(reply, str) else json.dumps(reply), 5, 5, "stop", 0.0, 0.0)


def tagged_engine(paths: Paths, model: Classifier, concurrency: int = 1) -> Engine:
    s = Settings()
    s.tagger.llm = True
    s.tagger.llm_concurrency = concurrency
    return Engine(paths, s, embedder=HashingEmbedder(), generator=model)


def test_the_model_classifies_a_note_its_project_first_and_the_instructions_last(paths: Paths) -> None:
    model = Classifier({"type": "Decision", "domain": "Infrastructure", "topics": ["nginx", "TLS certs"]})
    with tagged_engine(paths, model) as engine:
        out = engine.call("store", {"content": "We terminate TLS at nginx. token=ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
                                    "project": "web"})
        memory = engine.call("get_memory", {"ids": [out.result.id]}).result.items[0]
    assert memory.type == "decision"
    assert set(memory.tags) == {"kind:note", "domain:infrastructure", "topic:nginx", "topic:tls-certs"}
    (sent,) = model.calls
    assert sent.startswith("Project: web\nFrom: a note\n\nMemory:\nWe terminate TLS at nginx.")
    assert sent.endswith('Reply with one line of JSON and nothing else: {"type": "…", "domain": "…", "topics": ["…"]}')
    assert "ghp_" not in sent and "[REDACTED:github-token]" in sent
    assert model.thinking == [False], "a server that can think is asked not to"


@pytest.mark.parametrize("reply", [DeadlineExceeded("slow"), {"type": "x"}, "not JSON at all", "{broken"])
def test_a_failed_classification_keeps_the_deterministic_tags(paths: Paths, reply: Any) -> None:
    with tagged_engine(paths, Classifier(reply)) as engine:
        out = engine.call("store", {"content": "plain note"})
        memory = engine.call("get_memory", {"ids": [out.result.id]}).result.items[0]
    assert memory.tags == ["kind:note"] and memory.type == "note"


def test_a_reply_is_read_like_a_remote_one_whatever_surrounds_its_json() -> None:
    from engram.core.ingest.tagging import read_reply

    found = read_reply('Sure! {"oops"} Here it is:\n{\n  "type": "fact",\n  "domain": "ops",\n  "topics": ["a"]\n}')
    assert found is not None and (found.type, found.domain, found.topics) == ("fact", "ops", ["a"])
    assert read_reply('{"type": "fact"}') is None and read_reply("") is None


def test_ingested_text_is_classified_one_request_per_chunk_with_its_source(paths: Paths) -> None:
    model = Classifier(lambda prompt: {"type": "note", "domain": "ops", "topics": ["t"]})
    text = "\n\n".join(f"Paragraph {i}: " + "words about operations " * 40 for i in range(8))
    with tagged_engine(paths, model, concurrency=3) as engine:
        out = engine.call("ingest_content", {"content": text, "title": "ops notes", "project": "ops"})
        chunks = engine.call("file_chunks", {"source": "content:ops notes"}).result.items
    assert out.result.chunks_written == len(chunks) > 3
    assert len(model.calls) == len(chunks), "one request per chunk"
    assert all(c.startswith("Project: ops\nFrom: ops notes\n") for c in model.calls)
    assert all("domain:ops" in c.tags for c in chunks)


def test_a_remote_provider_gets_the_concurrency_at_once_and_the_local_model_one_at_a_time() -> None:
    import threading
    import time

    from engram.core.ingest.tagging import ToClassify, classify

    def most_at_once(name: str) -> int:
        inside, most, lock = [0], [0], threading.Lock()

        def reply(prompt: str) -> dict[str, Any]:
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.05)
            with lock:
                inside[0] -= 1
            return {"type": "note", "domain": "d", "topics": []}

        found = classify(Classifier(reply, name=name), [ToClassify(f"text {i}", "p") for i in range(6)],
                         deadline=time.monotonic() + 30, concurrency=3)
        assert all(f is not None for f in found)
        return most[0]

    assert most_at_once("local") == 1 and most_at_once("ollama") == 3
