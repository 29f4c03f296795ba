"""Capture: editors' session files read as turns, stored once each as exchanges, within caps, forgotten by session."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.app.hook import run_hook
from engram.core import Engine, Paths, Settings
from engram.core.capture.claude_code import read_transcript
from engram.core.capture.codex import read_rollout
from engram.core.capture.inbox import inbox_dir, pending
from engram.core.capture.ledger import Ledger
from engram.core.capture.storing import session_source
from engram.core.capture.turns import exchange_text, turn_heading
from engram.core.capture.worker import CaptureWorker, status_lines
from engram.core.store import inspection
from standins.embedder import HashingEmbedder

FIXTURES = Path(__file__).parent / "fixtures" / "capture"
CLAUDE = FIXTURES / "claude-code-session.jsonl"
CODEX = next(FIXTURES.glob("rollout-*.jsonl"))
SESSION = "4f0c2a1e-9b7d-4c52-8e61-0a3f5b7c9d21"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "editor" / src.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return dst


def _append(path: Path, *lines: dict[str, object]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")


def _claude_line(kind: str, uuid: str, content: object, ts: str = "2026-11-30T10:00:00.000Z") -> dict[str, object]:
    return {"type": kind, "uuid": uuid, "sessionId": SESSION, "timestamp": ts, "cwd": "/home/ada/src/billing",
            "isSidechain": False, "message": {"role": kind, "content": content}}


def _captured(engine: Engine) -> list[dict[str, object]]:
    rows = inspection.table(engine.store(), "memories").to_arrow().to_pylist()
    return sorted((r for r in rows if r["kind"] == "exchange"), key=lambda r: str(r["created_at"]))


# ----------------------------------------------------------------------------------------------- readers


def test_a_claude_code_transcript_reads_as_the_persons_turns_with_tools_in_one_line() -> None:
    reading = read_transcript(CLAUDE)
    assert [t.turn_id for t in reading.turns] == ["u1", "u5"], "tool results, meta lines and sub-agents are no turns"
    first, second = (exchange_text(t) for t in reading.turns)
    assert first.startswith("User: Why do invoice retries fail")
    assert "Tools: read billing/retry.py; ran `pytest -q tests/test_retry.py`; edited billing/retry.py" in first
    assert "sk-ant-api03" not in first and "[REDACTED:anthropic-key]" in first
    heading = turn_heading(reading.turns[0])
    assert heading.startswith("Claude Code, ") and " on 30 November, 2026" in heading, heading
    assert "secret plan" not in first and "3 failed" not in first, "no thinking, no tool output"
    assert "sub-agent chatter" not in second and "billing-slow" in second
    assert reading.last_open and reading.turns[1].started is not None


def test_a_captured_turn_is_titled_by_who_spoke_and_when_never_by_a_secret() -> None:
    from datetime import UTC, datetime

    from engram.core.capture.turns import Turn

    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).astimezone()  # the heading gives this computer's time
    said = Turn("claude-code", "s", "u1", 1, when, "/x", "Caroline: I went to a support group yesterday.", "")
    assert turn_heading(said) == (f"Caroline, {when.hour % 12 or 12}:56 {'pm' if when.hour >= 12 else 'am'} on "
                                  f"{when.day} May, 2023")
    secret = Turn("codex", "s", "u2", 2, None, "/x", "sk-ant-api03-" + "A" * 90 + ": is this key valid?", "")
    assert turn_heading(secret) == "Codex", "a secret at the start is no speaker's name"
    plain = Turn("claude-code", "s", "u3", 3, when, "/x", "Why do invoice retries fail?", "")
    assert turn_heading(plain).startswith("Claude Code, ")


def test_reading_again_from_the_offset_finds_only_the_open_turn_and_whole_lines(tmp_path: Path) -> None:
    path = _copy(CLAUDE, tmp_path)
    first = read_transcript(path)
    _append(path, _claude_line("user", "u9", "Now add a test for it"))
    with path.open("ab") as handle:  # a line Claude Code is still writing
        handle.write(b'{"type": "assistant", "uuid": "a9", "message": {"role": "assist')
    again = read_transcript(path, first.offset, first_number=2)
    assert [(t.number, t.turn_id) for t in again.turns] == [(2, "u5"), (3, "u9")]
    assert again.turns[1].answer == "", "the half-written line waits for the next read"
    assert exchange_text(again.turns[1]) == "Now add a test for it", "a prompt with no answer yet is its words alone"


def test_a_codex_session_reads_as_turns_without_the_context_codex_adds() -> None:
    reading = read_rollout(CODEX)
    assert [t.prompt for t in reading.turns] == ["Add a --since flag to the export command",
                                                  "What date format does --since accept?"]
    first = exchange_text(reading.turns[0])
    assert 'ran `rg -n "def export" src`' in first and "edited src/cli.py" in first
    assert "Looking at the CLI" not in first and "exit_code" not in first
    assert {t.cwd for t in reading.turns} == {"/home/ada/src/ledger"}
    later = read_rollout(CODEX, reading.offset, first_number=2)
    assert [t.turn_id for t in later.turns] == [reading.turns[1].turn_id]
    assert later.turns[0].cwd == "/home/ada/src/ledger", "a later read still knows the session's folder"


def test_codex_files_of_each_format_read_without_compaction_summaries_or_injected_context() -> None:
    """A real Codex 0.171 session (written offline against a local fake model server: two resumes and two
    compactions), a resumed 2025 session with a compaction, and a file from before the line envelope."""
    folder = FIXTURES / "codex"
    real = read_rollout(next(folder.glob("rollout-2026-*.jsonl")))
    assert [t.prompt for t in real.turns] == ["List the files here and add hello.txt",
                                               "A second question: what does hello.txt say?",
                                               "Third: check the files again"]
    assert "edited hello.txt" in real.turns[0].tools[-1] and real.turns[0].cwd.endswith("work2")
    assert "SUMMARY" not in real.turns[1].answer, "a compaction's summary is not the turn's answer"
    resumed = read_rollout(next(folder.glob("rollout-2025-10-06*.jsonl")))
    assert len(resumed.turns) == 3 and all("Summary so far" not in t.answer for t in resumed.turns)
    assert resumed.turns[1].started is not None and resumed.turns[1].started.day == 8, "resumed two days later"
    legacy = read_rollout(next(folder.glob("rollout-2025-05-07*.jsonl")))
    assert [t.prompt for t in legacy.turns] == ["What does `make dist` do?"]
    assert "AGENTS.md" not in exchange_text(legacy.turns[0])


# ----------------------------------------------------------------------------------------------- storing


def test_a_capture_stores_each_turn_once_and_a_grown_turn_in_place(engine: Engine, tmp_path: Path) -> None:
    path = _copy(CLAUDE, tmp_path)
    report = engine.capture_file("claude-code", path, session_id=SESSION)
    assert (report.project, report.stored.new) == ("billing", 2)
    assert engine.capture_file("claude-code", path, session_id=SESSION).stored.new == 0
    _append(path, _claude_line("assistant", "a6", [{"type": "text", "text": "The queue is set in celery.py."}]))
    grown = engine.capture_file("claude-code", path, session_id=SESSION).stored
    assert (grown.new, grown.replaced) == (0, 1)
    _append(path, _claude_line("user", "u7", "Thanks, ship it"))
    assert engine.capture_file("claude-code", path, session_id=SESSION).stored.new == 1
    rows = _captured(engine)
    assert len(rows) == 3 and "The queue is set in celery.py." in str(rows[1]["content"])
    assert {r["source"] for r in rows} == {session_source("claude-code", SESSION)}
    assert all({"captured", "claude-code"} <= set(r["tags"]) for r in rows)  # type: ignore[call-overload]
    hits = engine.call("search", {"query": "which celery queue runs the retry job"}).result.hits
    assert hits and hits[0].source.startswith("session:claude-code/")


def test_a_lost_ledger_or_a_rewritten_file_stores_nothing_twice(engine: Engine, paths: Paths, tmp_path: Path) -> None:
    path = _copy(CLAUDE, tmp_path)
    engine.capture_file("claude-code", path, session_id=SESSION)
    shutil.rmtree(paths.data_dir / "capture")
    assert engine.capture_file("claude-code", path, session_id=SESSION).stored.new == 0
    path.write_text(path.read_text(encoding="utf-8").splitlines()[1] + "\n", encoding="utf-8")  # shorter now
    again = engine.capture_file("claude-code", path, session_id=SESSION).stored
    assert (again.new, again.unchanged) == (0, 1)
    assert len(_captured(engine)) == 2


def test_forgetting_a_session_forgets_its_turns(engine: Engine, tmp_path: Path) -> None:
    engine.capture_file("claude-code", _copy(CLAUDE, tmp_path), session_id=SESSION)
    engine.call("store", {"content": "A note of my own", "project": "billing"})
    sources = engine.call("list_sources", {}).result
    assert any(s.source == session_source("claude-code", SESSION) and s.chunk_count == 2 for s in sources.items)
    engine.call("delete", {"source": session_source("claude-code", SESSION)})
    rows = inspection.table(engine.store(), "memories").to_arrow().to_pylist()
    assert [r["content"] for r in rows] == ["A note of my own"]


def test_caps_leave_turns_out_and_say_so(paths: Paths, tmp_path: Path) -> None:
    settings = Settings.model_validate({"capture": {"turns_per_session": 1}})
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        report = engine.capture_file("claude-code", _copy(CLAUDE, tmp_path), session_id=SESSION)
        assert (report.stored.new, report.stored.capped) == (1, 1)
        lines = status_lines(engine.capture_ledger(), settings)
    assert "1 turns stored" in lines[0] and "1 left out over a cap" in lines[1]
    assert lines[2] == "capture per session: at most 1 turns; the longest so far 1; 1 sessions reached it"


def test_an_editor_turned_off_is_not_read(paths: Paths, tmp_path: Path) -> None:
    settings = Settings.model_validate({"capture": {"codex": False}})
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        report = engine.capture_file("codex", _copy(CODEX, tmp_path))
        assert report.note == "capture.codex is off" and report.stored.new == 0
        assert _captured(engine) == []


# ----------------------------------------------------------------------------------------------- the hook


def _hook_env(paths: Paths) -> dict[str, str]:
    return {"ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir),
            "ENGRAM_LOG_DIR": str(paths.log_dir), "HOME": str(paths.data_dir.parent)}


def test_a_stop_hook_leaves_a_job_the_worker_captures(engine: Engine, paths: Paths, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Path] = []
    monkeypatch.setattr("engram.app.hook._start_service", lambda p: started.append(p.data_dir))
    path = _copy(CLAUDE, tmp_path)
    given = {"session_id": SESSION, "transcript_path": str(path), "cwd": "/home/ada/src/billing",
             "hook_event_name": "Stop", "stop_hook_active": False}
    out = io.StringIO()
    assert run_hook(["claude-code"], stdin=io.StringIO(json.dumps(given)), stdout=out, environ=_hook_env(paths)) == 0
    assert out.getvalue() == "" and started == [paths.data_dir], "no service ran: one is started"
    [(_, job)] = pending(paths.data_dir)
    assert job is not None and (job.event, job.transcript) == ("Stop", str(path))
    worker = CaptureWorker(paths, lambda: engine.internals().scope(""), lambda: engine.settings)
    [report] = worker.take_jobs()
    assert report.stored.new == 2 and pending(paths.data_dir) == []
    assert run_hook(["claude-code"], stdin=io.StringIO(json.dumps(given)), stdout=out, environ=_hook_env(paths)) == 0
    assert worker.take_jobs()[0].stored.new == 0, "a hook run again stores nothing twice"


def test_a_stop_hook_imports_nothing_heavy(paths: Paths, tmp_path: Path) -> None:
    """What a Stop hook loads is what it costs the editor at every turn: no logging, no pydantic, no store."""
    given = json.dumps({"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "hook_event_name": "Stop"})
    script = ("import io, os, sys; from engram.mcp import service_files; service_files.lock_held = lambda d: True\n"
              "from engram.app.hook import run_hook\n"
              f"run_hook(['claude-code'], stdin=io.StringIO({given!r}), stdout=io.StringIO(), environ=os.environ)\n"
              "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('logging', 'pydantic', 'lancedb', 'pyarrow', 'numpy', 'httpx2', 'engram'))))")
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, **_hook_env(paths)}, text=True,
                          capture_output=True, timeout=60, check=True)
    loaded = set(done.stdout.split())
    assert pending(paths.data_dir), "the job was left"
    assert not {m for m in loaded if not m.startswith("engram")}, loaded
    assert {m for m in loaded if m.startswith("engram.core.")} <= {
        "engram.core.capture", "engram.core.capture.inbox", "engram.core.paths", "engram.core.privacy",
        "engram.core.fileio"}, loaded


@pytest.mark.parametrize("given", ["", "not json", "[]", '{"session_id": "x"}', '{"transcript_path": 3}'])
def test_a_hook_given_bad_input_exits_0_and_logs_why(paths: Paths, given: str) -> None:
    out = io.StringIO()
    assert run_hook(["claude-code"], stdin=io.StringIO(given), stdout=out, environ=_hook_env(paths)) == 0
    assert out.getvalue() == "" and not inbox_dir(paths.data_dir).exists()
    assert "hook claude-code" in (paths.log_dir / "hooks.log").read_text(encoding="utf-8")


def test_the_hook_log_is_rotated_and_a_home_that_cannot_be_read_still_exits_0(paths: Paths,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.app import hook

    monkeypatch.setattr(hook._HookLog, "MAX_BYTES", 200)
    for _ in range(6):
        run_hook(["claude-code"], stdin=io.StringIO("not json"), stdout=io.StringIO(), environ=_hook_env(paths))
    log = paths.log_dir / "hooks.log"
    assert log.stat().st_size <= 400 and (paths.log_dir / "hooks.log.1").exists()

    def unreadable(environ: object) -> object:
        raise OSError("no home folder")

    monkeypatch.setattr(hook.Paths, "from_environ", unreadable)
    assert run_hook(["claude-code"], stdin=io.StringIO("{}"), stdout=io.StringIO(), environ={}) == 0


def test_a_job_that_is_not_one_is_removed_and_an_unknown_editor_refused(engine: Engine, paths: Paths) -> None:
    folder = inbox_dir(paths.data_dir)
    folder.mkdir(parents=True)
    (folder / "00000000000000000001-1-aa.json").write_text("{broken")
    (folder / "00000000000000000002-1-bb.json").write_text(json.dumps(
        {"editor": "vim", "event": "Stop", "session_id": "s", "transcript": "/x", "cwd": "", "at": 1.0}))
    assert CaptureWorker(paths, lambda: engine.internals().scope(""), lambda: engine.settings).take_jobs() == []
    assert pending(paths.data_dir) == []


def test_the_ledger_counts_today_and_keeps_a_month(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    ledger = Ledger(tmp_path)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for day in range(40):
        ledger.add_today(2, 100, 0, now=start + timedelta(days=day))
    assert len(ledger.days()) == 31
    assert ledger.today(start + timedelta(days=39)).turns == 2
    ledger.days_file.write_text("{not json")
    assert ledger.today() .turns == 0, "an unreadable tally starts again, it does not stop capture"


def test_the_plugin_runs_one_hook_command_for_every_event_and_writes_nothing_when_unchanged(tmp_path: Path) -> None:
    from engram.mcp.claude_plugin import HOOK_EVENTS, plugin_documents, write_plugin

    engram = ["/opt/Engram App/engram"]
    env = {"ENGRAM_DATA_DIR": "/home/ada/my data"}
    docs = plugin_documents(engram, env, "1.2.3")
    hooks = docs["engram/hooks/hooks.json"]["hooks"]
    assert sorted(hooks) == sorted(HOOK_EVENTS)
    commands = {h["command"] for event in hooks.values() for group in event for h in group["hooks"]}
    assert commands == {"ENGRAM_DATA_DIR='/home/ada/my data' '/opt/Engram App/engram' hook claude-code"}
    assert docs["engram/.mcp.json"]["mcpServers"]["engram"] == {"command": engram[0], "args": ["mcp"], "env": env}
    assert docs[".claude-plugin/marketplace.json"]["plugins"][0]["source"] == "./engram"
    assert write_plugin(tmp_path, engram, env, "1.2.3").changed
    assert not write_plugin(tmp_path, engram, env, "1.2.3").changed
    assert write_plugin(tmp_path, engram, env, "1.2.4").changed


@pytest.mark.slow
def test_a_session_end_writes_a_summary_with_the_real_model_only_when_summaries_are_on(
        paths: Paths, tmp_path: Path) -> None:
    """SmolLM2 (the small real test model) through llama.cpp: what it says is its own; that it is stored, linked,
    replaced rather than doubled, and forgotten with its session is Engram's."""
    from engram.core.capture.inbox import Job, post
    from engram.core.capture.summary import SUMMARY_TYPE, summary_id

    path = _copy(CLAUDE, tmp_path)
    end = Job(editor="claude-code", event="SessionEnd", session_id=SESSION, transcript=str(path), cwd="", at=1.0)
    for summaries in (False, True):
        settings = Settings.model_validate({"capture": {"summaries": summaries}, "helper": {"local": {
            "model": "smollm2-135m-instruct", "n_ctx": 4096, "threads": 2}}})
        with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
            post(paths.data_dir, end)
            CaptureWorker(paths, lambda engine=engine: engine.internals().scope(""), lambda engine=engine: engine.settings).take_jobs()
            rows = inspection.table(engine.store(), "memories").to_arrow().to_pylist()
            summaries_found = [r for r in rows if r["type"] == SUMMARY_TYPE]
            if not summaries:
                assert summaries_found == [] and engine.model_pool().loaded() == {}, "no model loaded while off"
                continue
            [summary] = summaries_found
            assert summary["id"] == summary_id("claude-code", SESSION) and summary["project"] == "billing"
            assert summary["source"] == session_source("claude-code", SESSION) and summary["content"].strip()
            assert "sk-ant-api03" not in summary["content"]
            [entry] = engine.capture_ledger().sessions()
            assert entry.summarized == 2
            post(paths.data_dir, end)  # the same session ending again, with no new turn: no second summary
            CaptureWorker(paths, lambda engine=engine: engine.internals().scope(""), lambda engine=engine: engine.settings).take_jobs()
            rows = inspection.table(engine.store(), "memories").to_arrow().to_pylist()
            assert len([r for r in rows if r["type"] == SUMMARY_TYPE]) == 1
            engine.call("delete", {"source": session_source("claude-code", SESSION)})
            assert inspection.table(engine.store(), "memories").count_rows() == 0


def test_a_turn_repeated_in_another_session_is_counted_once_and_read_again_stays_counted(
        engine: Engine, tmp_path: Path) -> None:
    def session(name: str, answer: str) -> Path:
        path = tmp_path / f"{name}.jsonl"
        lines = [_claude_line("user", f"{name}-u1", "Run the linter on the billing package"),
                 _claude_line("assistant", f"{name}-a1", [{"type": "text", "text": answer}])]
        _append(path, *({**line, "sessionId": name} for line in lines))
        return path

    first, second = session("s1", "Ruff found no problems."), session("s2", "Ruff found no problems.")
    assert engine.capture_file("claude-code", first, session_id="s1").stored.new == 1
    stored = engine.capture_file("claude-code", second, session_id="s2").stored
    assert (stored.new, stored.duplicates) == (0, 1)
    (row,) = _captured(engine)
    assert row["seen_count"] == 2
    again = engine.capture_file("claude-code", second, session_id="s2").stored
    assert (again.new, again.duplicates, again.unchanged) == (0, 0, 1)  # not counted a third time
    assert _captured(engine)[0]["seen_count"] == 2
    # The kept turn is a turn of both sessions: the second session's source lists it.
    edges = inspection.table(engine.store(), "edges").to_arrow().to_pylist()
    assert {e["dst"] for e in edges if e["src"] == row["id"] and e["relation"] == "part_of"} == {
        "s:" + session_source("claude-code", "s1"), "s:" + session_source("claude-code", "s2")}
    # The repeated turn goes on differently: it is a turn of its own now.
    _append(second, {**_claude_line("assistant", "s2-a2", [{"type": "text", "text": "Then I fixed the imports in "
                                                            "invoice.py and ran the tests again."}]),
                     "sessionId": "s2"})
    grown = engine.capture_file("claude-code", second, session_id="s2").stored
    assert grown.new == 1 and len(_captured(engine)) == 2
