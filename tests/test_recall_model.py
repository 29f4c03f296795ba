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
from engram.core.catalog import PLAN_TOOLS
from engram.core.models.generation import Completion, DeadlineExceeded, Rates
from engram.core.recall.assist import VERIFY, ModelPath, answer, plan_schema

from .conftest import HashingEmbedder, write_tree


class FakeModel:
    """A generator seam double: scripted replies for planning and answering (each a JSON-able value, a raw
    string, or an exception to raise), and optionally the speeds it reports."""

    name = "fake"

    def __init__(self, plan: Any = None, answer: Any = None, plan_delay: float = 0.0,
                 speeds: Rates | None = None) -> None:
        self.plan, self.plan_delay, self.speeds = plan, plan_delay, speeds
        self.answer = {"answer": "See [1].", "cites": [1]} if answer is None else answer
        self.calls: list[dict[str, Any]] = []

    def rates(self, deadline: float | None = None) -> Rates | None:
        return self.speeds

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None) -> Completion:
        phase = "plan" if messages[-1]["content"].startswith("Task: PLAN") else "answer"
        self.calls.append({"phase": phase, "deadline": deadline, "messages": messages, "schema": json_schema})
        reply = self.plan if phase == "plan" else self.answer
        if phase == "plan" and self.plan_delay:
            time.sleep(self.plan_delay)
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
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
                      answer={"answer": "Roll back with git revert [1]; backups run nightly [2].", "cites": [1, 2]})
    out = engine_call(make(model))
    text = out.text
    assert "answer:\nRoll back with git revert [1]; backups run nightly [2]." in text
    assert VERIFY in text and "cited evidence:\n[1] " in text and "\n[2] " in text
    assert out.result.cited == [1, 2] and "other evidence" in text
    evidence = model.calls[1]["messages"][1]["content"]
    assert "[1] " in evidence and "Question: " + QUESTION in evidence
    assert model.calls[0]["messages"][0] == model.calls[1]["messages"][0], "one fixed prefix for both tasks"
    cites = model.calls[1]["schema"]["properties"]["cites"]
    assert cites["minItems"] == 1 and cites["items"]["enum"] == list(range(1, len(out.result.items) + 1))


@pytest.mark.parametrize(("answer", "note"), [
    ({"answer": "Backups run nightly.", "cites": []}, "cited no evidence"),
    ({"answer": "Backups run nightly [99].", "cites": [1]}, "cited [99], which it was not shown"),
    ("Backups run nightly.", "was not the JSON asked for"),
    (DeadlineExceeded("slow"), "ran out of time while answering"),
])
def test_an_answer_that_fails_returns_the_planned_evidence_with_one_note(make: Any, answer: Any, note: str) -> None:
    """The plan's reads found more than a search of the question would: they are returned, with why there is no
    answer, rather than a fresh plain search."""
    model = FakeModel(plan={"steps": [{"tool": "search", "query": "backup schedule"}]}, answer=answer)
    out = engine_call(make(model))
    assert out.result.answer is None and out.result.planned is True and out.result.model["fell_back"]
    assert [s.args["query"] for s in out.result.steps] == [QUESTION, "backup schedule"]
    assert len(out.result.notes) == 1 and note in out.result.notes[0] and "here is the evidence" in out.result.notes[0]
    head, _, evidence = out.text.partition("\n[1] ")
    assert head.rstrip().endswith(out.result.notes[0]) and "Backups run nightly with restic" in evidence, "steps, note, evidence"


@pytest.mark.parametrize(("plan", "note"), [
    (DeadlineExceeded("slow"), "ran out of time while planning"),
    ("not json at all", "plan was unusable"),
    ({"steps": [{"tool": "store", "query": "x"}, {"tool": "get_memory"}]}, "none of the local model's 2 planned steps"),
])
def test_a_plan_that_fails_gives_the_plain_result_and_one_note(make: Any, plan: Any, note: str) -> None:
    model = FakeModel(plan=plan)
    out = engine_call(make(model))
    assert [c["phase"] for c in model.calls] == ["plan"], "no answer is asked for after a failed plan"
    assert out.result.planned is False and len(out.result.notes) == 1 and note in out.result.notes[0]


def test_invalid_planned_steps_are_dropped_and_counted(make: Any) -> None:
    plan = {"steps": [{"tool": "store", "query": "x"}, {"tool": "get_memory"}, {"tool": "search", "query": "backups"}]}
    out = engine_call(make(FakeModel(plan=plan)), condense=False)
    assert len(out.result.steps) == 2 and out.result.model["dropped_steps"] == 2
    assert "note: 2 of the local model's planned steps were invalid and dropped." in out.text


def test_a_callers_plan_keeps_its_evidence_when_the_answer_fails(make: Any) -> None:
    model = FakeModel(answer={"answer": "Nothing.", "cites": []})
    plan = [{"tool": "search", "args": {"query": "backups"}}, {"tool": "search", "args": {"query": "rollback"}}]
    out = engine_call(make(model), plan=plan)
    assert out.result.planned and out.result.plan_source == "caller" and len(out.result.steps) == 2
    assert out.result.notes == ["note: the local model's answer cited no evidence, so it was dropped; here is the "
                                "evidence."]


def test_the_model_reads_as_much_evidence_as_it_can_in_the_time_left(make: Any) -> None:
    # 50 tokens/s of reading and 80/s of writing in 30 s: about 1,100 tokens of evidence fit; at 5/s, none.
    model = FakeModel(plan={"steps": []}, speeds=Rates(50.0, 80.0, "calls"))
    engine = make(model)
    for i in range(6):
        engine.call("ingest_content", {"title": f"runbook {i}", "content": "\n\n".join(
            f"Step {j}: deploy, roll back, check backups and restore drills on host {i}-{j}." for j in range(30))})
    out = engine_call(engine, max_chars=12000)
    read, shown = out.result.model["read_blocks"], out.result.model["shown_blocks"]
    assert 0 < read < shown, (read, shown)
    asked = model.calls[-1]["messages"][1]["content"]
    assert f"[{read}] " in asked and f"[{read + 1}] " not in asked
    assert model.calls[-1]["schema"]["properties"]["cites"]["items"]["enum"] == list(range(1, read + 1))
    assert out.result.answer is not None and len(out.text) <= 12000
    slow = make(FakeModel(plan={"steps": []}, speeds=Rates(5.0, 4.0, "calls")))
    late = engine_call(slow)
    assert late.result.answer is None and "too little time" in late.result.notes[0]


def test_planning_takes_its_share_and_answering_gets_the_rest_of_one_deadline(make: Any) -> None:
    model = FakeModel(plan={"steps": []}, answer={"answer": "Nightly [1].", "cites": [1]}, plan_delay=0.3)
    engine = make(model, recall__llm_timeout_sec=10.0)
    started = time.monotonic()
    engine_call(engine)
    plan_call, answer_call = model.calls
    assert started + 9.5 < answer_call["deadline"] <= started + 10.1, "answering ends at the recall's deadline"
    assert started + 4.0 < plan_call["deadline"] <= started + 4.6, "planning may use 45% of it"


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
    engine = make(None, helper__provider="ollama", helper__base_url="http://10.20.30.40:11434")
    out = engine_call(engine)
    assert "runs on ollama at http://10.20.30.40:11434, not on this computer" in out.text
    assert not [a for a in opened if isinstance(a, tuple) and not str(a[0]).startswith(("127.", "::1"))]


def test_secrets_are_redacted_before_the_model_sees_them(make: Any) -> None:
    model = FakeModel(plan={"steps": []}, answer={"answer": "The key is in [1].", "cites": [1]})
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
    s.helper.local.model = "smollm2-135m-instruct"
    s.helper.local.n_ctx = 4096
    root = write_tree(tmp_path / "ops", DOCS)
    with Engine(paths, s, embedder=HashingEmbedder()) as engine:
        engine.call("ingest_path", {"path": str(root), "project": "ops"})
        out = engine.call("recall", {"question": QUESTION, "max_chars": 3000})
    result = out.result
    assert len(out.text) <= 3000 and result.model["plan_s"] is not None
    if result.model["fell_back"]:  # the plain result and the one line saying why
        assert len(result.notes) == 1 and "\n[1] " in out.text
        assert "not the JSON asked for" not in result.notes[0], "the schema makes the answer parse"
        return
    assert result.planned and result.steps[0].tool == "search" and result.steps[0].args["query"] == QUESTION
    assert result.answer is not None and result.cited
    assert all(1 <= n <= (result.model["read_blocks"] or 0) for n in result.cited), "cites only what it read"


@pytest.mark.slow
def test_the_real_test_model_answers_under_the_schema(paths: Paths) -> None:
    s = Settings()
    s.helper.local.model = "smollm2-135m-instruct"
    s.helper.local.n_ctx = 4096
    evidence = ("step 1 · search \"backups\" → 2 results\n\n[1] a1 · ops · backup.md:1-3\nBackups run nightly with "
                "restic to the NAS.\n\n[2] b2 · ops · deploy.md:1-7\nRoll back with git revert.\n\n— 2 of 2 results shown")
    with Engine(paths, s, embedder=HashingEmbedder()) as engine:
        provider = engine.provider("helper")
        path = ModelPath(provider=provider)
        text, cited = answer(provider, "When do backups run?", evidence, time.monotonic() + 120, path, PLAN_TOOLS)
        rates = provider.rates()
    assert rates is not None and rates.prompt_tps > 0 and rates.gen_tps > 0, "measured from its own calls"
    assert path.read_blocks == path.shown_blocks == 2
    if text is None:  # a small model may cite nothing or write past its length, but its reply is the JSON asked
        assert path.failed is not None and "not the JSON asked for" not in path.failed
    else:
        assert cited and set(cited) <= {1, 2}


def test_a_question_longer_than_search_accepts_gets_the_plain_result_and_a_note(make: Any) -> None:
    model = FakeModel(plan={"steps": [{"tool": "search", "query": "roll back"}]})
    engine = make(model)
    question = ("How do we roll back a deploy? " * 110)[:3000]
    out = engine.call("recall", {"question": question})
    assert model.calls == [], "the model was not asked"
    assert out.result.planned is False and out.result.search is not None and out.result.search.hits
    assert out.text.count("note: the question is longer than a search accepts (3,000 of 2,000 characters)") == 1
    off = make(None, recall__llm=False).call("recall", {"question": question})
    assert out.text.replace(out.result.notes[0], "").lstrip("\n") == off.text, "otherwise the plain deterministic result"


def test_recall_max_chars_sizes_a_recall_without_max_chars(make: Any) -> None:
    engine = make(None, recall__llm=False, recall__max_chars=1200, search__max_chars=12000)
    for i in range(6):
        engine.call("ingest_content", {"title": f"runbook {i}", "content": "\n\n".join(
            f"Step {j}: deploy, roll back, check backups and restore drills on host {i}-{j}." for j in range(30))})
    question = "deploy rollback backups restore systemd restic"
    assert len(engine.call("recall", {"question": question}).text) <= 1200
    assert len(engine.call("search", {"query": question}).text) > 1200
    assert len(engine.call("recall", {"question": question, "max_chars": 3000}).text) > 1200


def test_a_plain_question_is_planned_as_search_queries_and_named_ids_or_files_widen_the_schema() -> None:
    plain = plan_schema(QUESTION)
    assert list(plain["properties"]) == ["queries", "facts"] and plain["required"] == ["queries"], \
        "one short line: queries, and facts to look up when there are any"
    named = plan_schema("What did 81c17ed7aa20 say, and what is in docs/deploy.md?")
    tools = [s["properties"]["tool"]["const"] for s in named["properties"]["steps"]["items"]["anyOf"]]
    assert tools == ["search", "get_memory", "neighbors", "file_chunks", "file_summary"]
    assert [s["required"] for s in named["properties"]["steps"]["items"]["anyOf"]][:2] == [["tool", "query"],
                                                                                          ["tool", "ids"]]


def test_a_plan_of_queries_becomes_search_steps(make: Any) -> None:
    model = FakeModel(plan={"queries": ["roll back a deploy", "backup schedule"]})
    out = engine_call(make(model), condense=False)
    assert [s.args["query"] for s in out.result.steps] == [QUESTION, "roll back a deploy", "backup schedule"]
    assert model.calls[0]["schema"] == plan_schema(QUESTION, ["ops"])


def test_the_planner_reads_what_each_read_does_and_may_scope_a_search_or_look_up_facts(make: Any) -> None:
    model = FakeModel(plan={"queries": ["roll back a deploy", {"query": "backup schedule", "project": "ops"},
                                       {"query": "deploy host", "project": "nowhere"}],
                            "facts": [{"subject": "restic", "predicate": "backs up"}]})
    engine = make(model)
    engine.call("kg_edit", {"action": "add", "subject": "restic", "predicate": "backs up", "object": "the NAS"})
    out = engine_call(engine, condense=False)
    assert [(s.tool, s.args) for s in out.result.steps] == [
        ("search", {"query": QUESTION}), ("search", {"query": "roll back a deploy"}),
        ("search", {"query": "backup schedule", "project": "ops"}),
        ("search", {"query": "deploy host"}),  # a project the workspace does not have: searched everywhere
        ("kg_query", {"subject": "restic", "predicate": "backs up"})]
    system = model.calls[0]["messages"][0]["content"]
    assert "- search: Hybrid (semantic + lexical + graph) search" in system
    assert "- kg_query: Knowledge-graph facts (subject, predicate, object)" in system
    schema = model.calls[0]["schema"]
    scoped = schema["properties"]["queries"]["items"]["anyOf"][1]
    assert scoped["properties"]["project"] == {"enum": ["ops"]} and schema["properties"]["facts"]["maxItems"] == 2
    assert "restic —backs up→ the NAS" in out.text, "the fact is evidence"


def test_an_answer_with_raw_newlines_in_its_json_string_is_read(make: Any) -> None:
    # llama.cpp's JSON grammar lets a model write a line break inside a string without escaping it.
    model = FakeModel(plan={"queries": ["backup schedule"]},
                      answer='{"answer": "Backups run nightly.\nRoll back with git revert [1].", "cites": [1]}')
    out = engine_call(make(model))
    assert out.result.answer == "Backups run nightly.\nRoll back with git revert [1]." and out.result.cited == [1]
