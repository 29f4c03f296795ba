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
    name = "fake"
    local = True

    def __init__(self, reply: Any) -> None:
        self.reply, self.calls = reply, []

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion:
        self.calls.append(messages[1]["content"])
        if isinstance(self.reply, Exception):
            raise self.reply
        items = self.reply(messages[1]["content"]) if callable(self.reply) else self.reply
        return Completion(json.dumps({"items": items}), 5, 5, "stop", 0.0, 0.0)


def tagged_engine(paths: Paths, model: Classifier, concurrency: int = 1) -> Engine:
    s = Settings()
    s.tagger.llm = True
    s.tagger.llm_concurrency = concurrency
    return Engine(paths, s, embedder=HashingEmbedder(), generator=model)


def test_the_model_classifies_a_note(paths: Paths) -> None:
    model = Classifier([{"type": "Decision", "domain": "Infrastructure", "topics": ["nginx", "TLS certs"]}])
    with tagged_engine(paths, model) as engine:
        out = engine.call("store", {"content": "We terminate TLS at nginx. token=ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"})
        memory = engine.call("get_memory", {"ids": [out.result.id]}).result.items[0]
    assert memory.type == "decision"
    assert set(memory.tags) == {"kind:note", "domain:infrastructure", "topic:nginx", "topic:tls-certs"}
    assert "ghp_" not in model.calls[0] and "[REDACTED:github-token]" in model.calls[0]


@pytest.mark.parametrize("reply", [DeadlineExceeded("slow"), [{"type": "x"}], []])
def test_a_failed_classification_keeps_the_deterministic_tags(paths: Paths, reply: Any) -> None:
    with tagged_engine(paths, Classifier(reply)) as engine:
        out = engine.call("store", {"content": "plain note"})
        memory = engine.call("get_memory", {"ids": [out.result.id]}).result.items[0]
    assert memory.tags == ["kind:note"] and memory.type == "note"


def test_ingested_text_is_classified_in_batches_of_the_concurrency(paths: Paths) -> None:
    def per_chunk(prompt: str) -> list[dict[str, Any]]:
        count = sum(1 for line in prompt.splitlines() if line[:1].isdigit() and ". " in line[:4])
        return [{"type": "note", "domain": "ops", "topics": [f"t{i}"]} for i in range(count)]

    model = Classifier(per_chunk)
    text = "\n\n".join(f"Paragraph {i}: " + "words about operations " * 40 for i in range(8))
    with tagged_engine(paths, model, concurrency=3) as engine:
        out = engine.call("ingest_content", {"content": text, "title": "ops notes"})
        chunks = engine.call("file_chunks", {"source": "content:ops notes"}).result.items
    assert out.result.chunks_written == len(chunks) > 3
    assert len(model.calls) == -(-len(chunks) // 3), "one request per batch of three chunks"
    assert all("domain:ops" in c.tags for c in chunks)
