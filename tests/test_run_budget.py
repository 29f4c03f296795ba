"""The durable run budget: each rule of recall.run_budget as a behaviour, on real SQLite ledgers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram.core import Engine, Paths, Settings
from engram.core.budget import Allowance, RunBudget, RunLedger, fit_tokens
from engram.core.budget.ledger import LEDGER_FILE
from engram.core.errors import LedgerError, ModelError

from .conftest import HashingEmbedder, write_tree

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FailingEmbedder(HashingEmbedder):
    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        raise self.exc


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_a_batch_fits_in_full_or_none_of_it_is_prepared(folder: Path) -> None:
    budget, embedder = RunBudget("alice"), HashingEmbedder()
    first = budget.prepare(folder, "run-1", ["deploy steps", "rollback", "backups"], embedder, Allowance())
    assert first.withheld is None and first.prepared_now == 3 and embedder.texts_embedded == 3
    second = budget.prepare(folder, "run-1", ["restore drill", "on-call rota"], embedder, Allowance())
    assert second.withheld is not None and "2 queries do not fit" in second.withheld and "1 of 4" in second.withheld
    assert second.handles == {} and embedder.texts_embedded == 3  # none of the batch was embedded
    third = budget.prepare(folder, "run-1", ["restore drill"], embedder, Allowance())
    assert third.withheld is None and embedder.texts_embedded == 4


def test_rounds_and_query_counts_are_limited(folder: Path) -> None:
    budget, embedder = RunBudget("alice"), HashingEmbedder()
    wide = Allowance(max_queries=10, max_rounds=2)
    assert budget.prepare(folder, "r", ["a"], embedder, wide).withheld is None
    assert budget.prepare(folder, "r", ["b"], embedder, wide).withheld is None
    third = budget.prepare(folder, "r", ["c"], embedder, wide)
    assert "used its 2 preparation rounds" in (third.withheld or "")
    narrow = Allowance(max_queries=2, max_rounds=5)
    assert budget.prepare(folder, "s", ["a", "b"], embedder, narrow).withheld is None
    assert "do not fit" in (budget.prepare(folder, "s", ["c"], embedder, narrow).withheld or "")
    state = budget.ledger(folder).state("s")
    assert (state.queries, state.rounds, state.tokens) == (2, 1, 2 * 256)


def test_a_query_prepared_before_costs_nothing_when_repeated(folder: Path) -> None:
    budget, embedder = RunBudget("alice"), HashingEmbedder()
    budget.prepare(folder, "r", ["rollback"], embedder, Allowance(max_rounds=1))
    again = budget.prepare(folder, "r", ["rollback"], embedder, Allowance(max_rounds=1))
    assert again.withheld is None and again.prepared_now == 0 and again.vector_for("rollback") is not None
    assert embedder.texts_embedded == 1 and budget.ledger(folder).state("r").rounds == 1


def test_the_deadline_starts_at_the_first_reservation_and_handles_expire_with_it(folder: Path) -> None:
    clock = Clock(1_000.0)
    budget, embedder = RunBudget("alice", clock=clock), HashingEmbedder()
    allowance = Allowance(max_queries=10, max_rounds=10, deadline_sec=10.0)
    ledger = budget.ledger(folder)
    assert ledger.state("r").deadline_at is None  # reading state starts nothing
    clock.now = 1_500.0
    first = budget.prepare(folder, "r", ["a"], embedder, allowance)
    assert ledger.state("r").deadline_at == 1_510.0
    clock.now = 1_509.0
    assert budget.prepare(folder, "r", ["b"], embedder, allowance).withheld is None
    assert first.vector_for("a") is not None
    clock.now = 1_510.0
    assert first.vector_for("a") is None  # expired at the run deadline
    late = budget.prepare(folder, "r", ["a"], embedder, allowance)  # the expired handle is not reused
    assert "10 s preparation deadline has passed" in (late.withheld or "") and late.vector_for("a") is None
    assert embedder.texts_embedded == 2


def test_each_query_is_cut_to_the_token_cap(folder: Path) -> None:
    budget, embedder = RunBudget("alice"), HashingEmbedder()
    long_query = " ".join(f"word{i}" for i in range(50))
    budget.prepare(folder, "r", [long_query], embedder, Allowance(max_tokens_per_query=8))
    (row,) = budget.ledger(folder).reservations("r")
    assert row["tokens"] == 8 and row["tokens_used"] == 8 and row["state"] == "done"


def test_the_real_tokenizer_cuts_at_the_cap_and_the_models_own_limit(real_embedder: Any) -> None:
    text = " ".join(["deployment rollback procedure"] * 200)
    cut, n = fit_tokens(real_embedder, text, 32)
    assert n <= 32 and real_embedder.count_tokens(cut) <= 32 and text.startswith(cut) and len(cut) > 40
    cut, n = fit_tokens(real_embedder, text, 5000)  # the model reads 256 tokens at most
    assert n <= real_embedder.max_tokens == 256 and real_embedder.count_tokens(cut) <= 256
    short, n = fit_tokens(real_embedder, "rollback", 32)
    assert short == "rollback" and n == real_embedder.count_tokens("rollback")


def test_no_provider_work_when_the_reservation_cannot_be_saved(folder: Path) -> None:
    (folder / LEDGER_FILE).mkdir()  # the ledger's path is taken: SQLite cannot open it
    budget, embedder = RunBudget("alice"), HashingEmbedder()
    out = budget.prepare(folder, "r", ["rollback"], embedder, Allowance())
    assert out.withheld == "the run's allowance could not be recorded, so nothing was prepared"
    assert embedder.texts_embedded == 0


def test_a_failing_write_inside_the_reservation_means_no_embedding(folder: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    budget, embedder = RunBudget("alice"), HashingEmbedder()

    def refuse(*_: Any, **__: Any) -> None:
        raise LedgerError("disk full")

    monkeypatch.setattr(RunLedger, "reserve", refuse)
    out = budget.prepare(folder, "r", ["rollback"], embedder, Allowance())
    assert out.withheld is not None and embedder.texts_embedded == 0


def test_failures_and_cancellations_consume_the_reservation(folder: Path) -> None:
    budget = RunBudget("alice")
    failed = budget.prepare(folder, "r", ["a", "b"], FailingEmbedder(ModelError("model crashed")), Allowance())
    assert failed.withheld == "semantic preparation failed: model crashed" and failed.handles == {}
    with pytest.raises(KeyboardInterrupt):
        budget.prepare(folder, "r", ["c"], FailingEmbedder(KeyboardInterrupt()), Allowance())
    ledger = budget.ledger(folder)
    assert [r["state"] for r in ledger.reservations("r")] == ["failed", "cancelled"]
    state = ledger.state("r")
    assert (state.queries, state.rounds) == (3, 2)
    assert "rounds" in (budget.prepare(folder, "r", ["d"], HashingEmbedder(), Allowance()).withheld or "")


_HANGING_RUN = textwrap.dedent("""
    import sys, time
    import numpy as np
    from pathlib import Path
    from engram.core.budget import Allowance, RunBudget

    class Hanging:
        model_id, dimensions = "m", 4
        def embed(self, texts):
            print("embedding", flush=True)
            time.sleep(120)
            return np.ones((len(texts), 4), dtype=np.float32)

    RunBudget("alice").prepare(Path(sys.argv[1]), "run-9", ["a", "b", "c"], Hanging(), Allowance())
""")


def test_kill_9_between_reservation_and_work_does_not_reset_the_allowance(folder: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _HANGING_RUN, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "embedding"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    budget, embedder = RunBudget("alice"), HashingEmbedder()  # "after the restart"
    assert [r["state"] for r in budget.ledger(folder).reservations("run-9")] == ["reserved"]
    out = budget.prepare(folder, "run-9", ["d", "e"], embedder, Allowance())
    assert "1 of 4" in (out.withheld or "") and embedder.texts_embedded == 0
    assert budget.prepare(folder, "run-9", ["d"], embedder, Allowance()).withheld is None


_RACER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from engram.core.budget import Allowance, RunBudget
    from tests.conftest import HashingEmbedder

    folder, start = Path(sys.argv[1]), float(sys.argv[2])
    budget = RunBudget("alice")
    budget.ledger(folder).state("shared")  # open the ledger before the start line
    while time.time() < start:
        time.sleep(0.001)
    ok = sum(budget.prepare(folder, "shared", [f"{sys.argv[3]}-{i}"], HashingEmbedder(),
                            Allowance(max_queries=5, max_rounds=50)).withheld is None for i in range(6))
    print(ok)
""")


@pytest.mark.slow
def test_two_processes_on_one_run_share_one_allowance(folder: Path) -> None:
    RunLedger(folder, "alice").state("shared")  # create the file before the race
    start = str(time.time() + 2.0)
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(folder), start, name], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT) for name in ("p", "q")]
    granted = [int(p.communicate(timeout=120)[0].strip()) for p in procs]
    assert sum(granted) == 5, granted
    assert RunLedger(folder, "alice").state("shared").queries == 5


def test_a_query_never_borrows_another_querys_vector(folder: Path) -> None:
    budget, embedder = RunBudget("alice"), HashingEmbedder()
    out = budget.prepare(folder, "r", ["deploy steps", "rollback plan"], embedder, Allowance())
    deploy, rollback = out.vector_for("deploy steps"), out.vector_for("rollback plan")
    assert deploy is not None and rollback is not None
    assert np.allclose(deploy, embedder.embed(["deploy steps"])[0]) and not np.allclose(deploy, rollback)
    assert out.vector_for("deploy steps ") is None and out.vector_for("Deploy steps") is None
    out.handles["restore"] = out.handles["deploy steps"]  # a handle under another query's text
    assert out.vector_for("restore") is None


def test_owners_and_workspaces_keep_separate_allowances(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    alice, bob, embedder = RunBudget("alice"), RunBudget("bob"), HashingEmbedder()
    full = Allowance(max_queries=2)
    assert alice.prepare(one, "r", ["a", "b"], embedder, full).withheld is None
    assert alice.prepare(one, "r", ["c"], embedder, full).withheld is not None
    assert bob.prepare(one, "r", ["a", "b"], embedder, full).withheld is None  # bob's run "r" is his own
    assert bob.prepare(one, "r", ["a"], embedder, full).vector_for("a") is not None
    assert alice.prepare(two, "r", ["c", "d"], embedder, full).withheld is None  # another workspace
    assert alice.ledger(one).state("r").queries == 2 and bob.ledger(one).state("r").queries == 2


def test_the_ledger_holds_no_query_text(folder: Path) -> None:
    RunBudget("alice").prepare(folder, "task-42", ["secret rollback incantation"], HashingEmbedder(), Allowance())
    raw = (folder / LEDGER_FILE).read_bytes()
    for wal in folder.glob(LEDGER_FILE + "-*"):
        raw += wal.read_bytes()
    assert b"rollback" not in raw and b"incantation" not in raw and b"task-42" not in raw


# ----------------------------------------------------------------- through the engine's tools


DOCS = {"deploy.md": "# Deploy\n\nWe deploy with systemd units. Roll back with git revert, then restart the unit.",
        "backup.md": "# Backups\n\nBackups run nightly with restic to the NAS.",
        "oncall.md": "# On call\n\nThe on-call rota changes every Monday; page through the phone tree."}


@pytest.fixture
def budgeted(paths: Paths, tmp_path: Path) -> Iterator[tuple[Engine, HashingEmbedder]]:
    settings = Settings()
    settings.recall.run_budget.enabled = True
    embedder = HashingEmbedder()
    with Engine(paths, settings, embedder=embedder) as engine:
        engine.call("ingest_path", {"path": str(write_tree(tmp_path / "ops", DOCS)), "project": "ops"})
        embedder.calls.clear()
        yield engine, embedder


def test_searches_past_the_allowance_answer_from_lexical_and_graph_with_a_warning(budgeted: Any) -> None:
    engine, embedder = budgeted
    for query in ["deploy", "rollback"]:  # a lone search is one round; a run has two
        assert not engine.call("search", {"query": query, "run": "task-1"}).result.warnings
    assert embedder.texts_embedded == 2
    sparse = engine.call("search", {"query": "systemd units", "run": "task-1", "max_chars": 1200})
    r = sparse.result
    assert r.hits and all("semantic" not in h.channels for h in r.hits) and embedder.texts_embedded == 2
    assert len(r.warnings) == 1 and r.warnings[0].startswith("semantic preparation withheld (the run has used its 2 ")
    assert sparse.text.count("semantic preparation withheld") == 1 and len(sparse.text) <= 1200
    other = engine.call("search", {"query": "systemd units", "run": "task-2"})
    assert not other.result.warnings and any("semantic" in h.channels for h in other.result.hits)


def test_a_recall_prepares_its_plan_as_one_batch(budgeted: Any) -> None:
    engine, embedder = budgeted
    plan = [{"tool": "search", "args": {"query": q}} for q in ("deploy", "rollback", "backups")]
    first = engine.call("recall", {"question": "how do we deploy and back up?", "plan": plan, "run": "t"})
    assert embedder.calls == [3] and "withheld" not in first.text
    bigger = [{"tool": "search", "args": {"query": q}} for q in ("on call", "rota")]
    second = engine.call("recall", {"question": "who is on call?", "plan": bigger, "run": "t"})
    assert embedder.calls == [3] and second.result.items
    assert second.text.count("semantic preparation withheld (2 queries do not fit") == 1


def test_plan_steps_cannot_name_a_run(budgeted: Any) -> None:
    engine, _ = budgeted
    from engram.core.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="run"):
        engine.call("recall", {"question": "q", "plan": [{"tool": "search", "args": {"query": "x", "run": "other"}}]})


def test_a_restarted_engine_keeps_the_runs_allowance(paths: Paths, budgeted: Any) -> None:
    engine, _ = budgeted
    engine.call("search", {"query": "deploy", "run": "long-task"})
    engine.call("search", {"query": "rollback", "run": "long-task"})
    settings = Settings()
    settings.recall.run_budget.enabled = True
    engine.close()
    with Engine(paths, settings, embedder=HashingEmbedder()) as again:
        out = again.call("search", {"query": "backups", "run": "long-task"})
        assert "used its 2 preparation rounds" in out.result.warnings[0]


def test_without_a_run_or_with_the_budget_off_nothing_is_counted(paths: Paths, budgeted: Any) -> None:
    engine, embedder = budgeted
    for query in ["a", "b", "c", "d", "e"]:
        assert not engine.call("search", {"query": query}).result.warnings
    assert embedder.texts_embedded == 5 and not (paths.workspace_dir("default") / LEDGER_FILE).exists()


def test_a_context_pack_spends_the_run_it_names(budgeted: Any) -> None:
    engine, _ = budgeted
    for query in ("deploy", "rollback"):
        assert not engine.context_pack({"query": query, "budget_tokens": 500, "run": "p"}).warnings
    pack = engine.context_pack({"query": "backups", "budget_tokens": 500, "run": "p"})
    assert pack.items and any("semantic preparation withheld" in w for w in pack.warnings)


def test_status_says_when_the_budget_is_on(budgeted: Any, engine: Engine) -> None:
    on, _ = budgeted
    assert "semantic run budget: 4 queries in 2 rounds per run, within 10 s" in on.call("status").text
    assert "run budget" not in engine.call("status").text


def test_the_settings_are_refused_with_what_they_accept(paths: Paths) -> None:
    from engram.core.errors import SettingsError
    from engram.core.settings_file import load_settings, set_value

    with pytest.raises(SettingsError, match="recall.run_budget.max_queries"):
        set_value(paths.config_dir / "settings.toml", "recall.run_budget.max_queries", "0")
    loaded = load_settings(paths.config_dir / "none.toml", {"ENGRAM_RECALL_RUN_BUDGET_ENABLED": "true"})
    assert loaded.settings.recall.run_budget.enabled is True
    assert json.dumps(Settings().recall.run_budget.model_dump()) == (
        '{"enabled": false, "max_queries": 4, "max_rounds": 2, "deadline_sec": 10.0, "max_tokens_per_query": 256}')
