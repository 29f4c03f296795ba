"""Recall's model path with a fake model at the generator seam — and one real round trip with the test model."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.models.generation import Completion, DeadlineExceeded
from engram.core.recall.assist import VERIFY

from .conftest import HashingEmbedder, write_tree


class FakeModel:
    """A generator seam double: scripted replies for planning (JSON schema asked) and answering."""

    name = "fake"

    def __init__(self, plan: Any = None, answer: Any = "See [1].", plan_delay: float = 0.0) -> None:
        self.plan, self.answer, self.plan_delay = plan, answer, plan_delay
        self.calls: list[dict[str, Any]] = []

    @property
    def local(self) -> bool:
        return True

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion:
        phase = "plan" if json_schema is not None else "answer"
        self.calls.append({"phase": phase, "deadline": deadline, "messages": messages})
        reply = self.plan if phase == "plan" else self.answer
        if phase == "plan" and self.plan_delay:
            time.sleep(self.plan_delay)
        if isinstance(reply, Exception):
            raise reply
        text = json.dumps(reply) if phase == "plan" and not isinstance(reply, str) else reply
        return Completion(text, 10, 50, "stop", 0.01, 0.001)


DOCS = {"deploy.md": "# Deploy\n\nWe deploy with systemd units on the home server.\n\n## Rollback\n\n"
                     "Roll back with git revert, then restart the unit.",
        "backup.md": "# Backups\n\nBackups run nightly with restic to the NAS.",
        "restore.md": "# Restore drills\n\nEvery month we restore a backup to check the deploy still starts."}


@pytest.fixture
def make(paths: Paths, tmp_path: Path) -> Iterator[Any]:
    engines: list[Engine] = []
    root = write_tree(tmp_path / "ops", DOCS)

    def build(model: FakeModel | None, **settings: Any) -> Engine:
        s = Settings()
        s.recall.llm = True
        for key, value in settings.items():
            group, name = key.split("__")
            setattr(getattr(s, group), name, value)
        engine = Engine(paths, s, embedder=HashingEmbedder(), generator=model)
        engines.append(engine)
        engine.call("ingest_path", {"path": str(root), "project": "ops"})
        return engine

    yield build
    for engine in engines:
        engine.close()


QUESTION = "How do we roll back a deploy, and when do backups run?"


def test_the_model_plans_and_the_plain_search_stays_step_one(make: Any) -> None:
    model = FakeModel(plan={"steps": [{"tool": "search", "query": "roll back a deploy"},
                                      {"tool": "search", "query": "backup schedule"}]})
    out = engine_call(make(model), condense=False)
    lines = out.text.splitlines()
    assert lines[0].startswith(f'step 1 · search "{QUESTION[:59]}')
    assert lines[1].startswith('step 2 · search "roll back a deploy"') and lines[2].startswith('step 3 · search')
    assert out.result.plan_source == "model" and out.result.answer is None
    assert [c["phase"] for c in model.calls] == ["plan"], "condense=false asks the model nothing more"


def engine_call(engine: Engine, **args: Any) -> Any:
    return engine.call("recall", {"question": QUESTION, **args})


def test_a_cited_answer_comes_back_condensed(make: Any) -> None:
    model = FakeModel(plan={"steps": [{"tool": "search", "query": "backup schedule"}]},
                      answer="Roll back with git revert [1]; backups run nightly [2].")
    out = engine_call(make(model))
    text = out.text
    assert "answer:\nRoll back with git revert [1]; backups run nightly [2]." in text
    assert VERIFY in text and "cited evidence:\n[1] " in text and "\n[2] " in text
    assert out.result.cited == [1, 2] and "other evidence" in text
    evidence = model.calls[1]["messages"][1]["content"]
    assert "[1] " in evidence and "Question: " + QUESTION in evidence


@pytest.mark.parametrize(("answer", "note"), [
    ("Backups run nightly.", "cited no evidence"),
    ("Backups run nightly [99].", "cited [99], which was not shown"),
])
def test_an_untraceable_answer_is_dropped_for_the_evidence(make: Any, answer: str, note: str) -> None:
    out = engine_call(make(FakeModel(plan={"steps": []}, answer=answer)))
    assert out.result.answer is None and any(note in n for n in out.result.notes)
    assert "\n[1] " in out.text and "answer:" not in out.text


def test_a_planning_timeout_falls_back_to_the_plain_search(make: Any) -> None:
    out = engine_call(make(FakeModel(plan=DeadlineExceeded("slow"))), condense=False)
    assert out.result.plan_source == "question" and len(out.result.steps) == 1
    assert "note: the local model ran out of time while planning; recall searched the question." in out.text


def test_invalid_planned_steps_are_dropped_and_counted(make: Any) -> None:
    plan = {"steps": [{"tool": "store", "query": "x"}, {"tool": "get_memory"}, {"tool": "search", "query": "backups"}]}
    out = engine_call(make(FakeModel(plan=plan)), condense=False)
    assert len(out.result.steps) == 2 and out.result.model["dropped_steps"] == 2
    assert "note: 2 of the local model's planned steps were invalid and dropped." in out.text
    garbage = engine_call(make(FakeModel(plan="not json at all")), condense=False)
    assert "plan was unusable" in garbage.text and garbage.result.plan_source == "question"


def test_an_answer_timeout_returns_the_evidence(make: Any) -> None:
    out = engine_call(make(FakeModel(plan={"steps": []}, answer=DeadlineExceeded("slow"))))
    assert "note: the local model ran out of time while answering; here is the evidence." in out.text
    assert "\n[1] " in out.text


def test_planning_and_answering_share_one_deadline(make: Any) -> None:
    model = FakeModel(plan={"steps": []}, answer="Nightly [1].", plan_delay=0.3)
    engine = make(model, recall__llm_timeout_sec=5.0)
    started = time.monotonic()
    engine_call(engine)
    plan_call, answer_call = model.calls
    assert plan_call["deadline"] == answer_call["deadline"]
    assert started + 4.5 < plan_call["deadline"] <= started + 5.1


def test_a_missing_model_gives_the_plain_path_and_says_how_to_get_one(make: Any) -> None:
    out = engine_call(make(None))  # the real helper model (qwen3.5-4b) is not downloaded here
    assert out.result.planned is False
    assert "engram models download qwen3.5-4b" in out.text.splitlines()[0]


def test_a_remote_provider_is_never_called(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Any] = []
    real_connect = socket.socket.connect

    def watch(sock: socket.socket, address: Any) -> Any:
        opened.append(address)
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", watch)
    engine = make(None, tagger__llm_provider="ollama", tagger__base_url="http://10.20.30.40:11434")
    out = engine_call(engine)
    assert "runs on ollama at http://10.20.30.40:11434, not on this computer" in out.text
    assert not [a for a in opened if isinstance(a, tuple) and not str(a[0]).startswith(("127.", "::1"))]


def test_secrets_are_redacted_before_the_model_sees_them(make: Any) -> None:
    model = FakeModel(plan={"steps": []}, answer="The key is in [1].")
    engine = make(model)
    engine.call("store", {"content": "deploy credentials: AKIAIOSFODNN7EXAMPLE for the backup bucket"})
    engine.call("recall", {"question": "which credentials does the backup bucket use?"})
    seen = "\n".join(m["content"] for call in model.calls for m in call["messages"])
    assert "AKIAIOSFODNN7EXAMPLE" not in seen and "[REDACTED:aws-access-key]" in seen


@pytest.mark.slow
def test_a_real_model_round_trip_is_valid_whatever_it_says(paths: Paths, tmp_path: Path) -> None:
    s = Settings()
    s.recall.llm = True
    s.recall.llm_timeout_sec = 60
    s.tagger.local.model = "smollm2-135m-instruct"
    s.tagger.local.n_ctx = 4096
    root = write_tree(tmp_path / "ops", DOCS)
    with Engine(paths, s, embedder=HashingEmbedder()) as engine:
        engine.call("ingest_path", {"path": str(root), "project": "ops"})
        out = engine.call("recall", {"question": QUESTION, "max_chars": 3000})
    result = out.result
    assert result.planned and result.steps[0].tool == "search" and result.steps[0].args["query"] == QUESTION
    assert len(out.text) <= 3000
    assert result.model["plan_s"] is not None
    if result.answer is not None:
        assert result.cited and all(1 <= n <= len(result.items) for n in result.cited)
    else:
        assert result.notes and "\n[1] " in out.text
