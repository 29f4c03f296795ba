"""The hook path for real: `engram hook claude-code` processes against a running `engram service`."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ENGRAM, cli_in_process, wait_for

FIXTURE = Path(__file__).parent / "fixtures" / "capture" / "claude-code-session.jsonl"
SESSION = "4f0c2a1e-9b7d-4c52-8e61-0a3f5b7c9d21"
pytestmark = pytest.mark.slow


def _hook(env: dict[str, str], event: str, transcript: Path, **extra: object) -> tuple[subprocess.CompletedProcess[str], float]:
    given = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": "/home/ada/src/billing",
             "hook_event_name": event, **extra}
    started = time.monotonic()
    done = subprocess.run([*ENGRAM, "hook", "claude-code"], input=json.dumps(given), env=env, capture_output=True,
                          text=True, timeout=60)
    return done, time.monotonic() - started


def _exchanges(env: dict[str, str]) -> list[dict[str, object]]:
    out = cli_in_process(env, "search", "retry queue backoff", "--json", "--limit", "20")
    assert out.returncode == 0, out.stderr
    return [h for h in json.loads(out.stdout)["result"]["hits"] if h["kind"] == "exchange"]


def test_turns_are_searchable_after_the_stop_hook_and_the_next_session_starts_with_a_brief(
        env: dict[str, str], service: subprocess.Popen[bytes], tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "-home-ada-src-billing" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, transcript)
    done, _ = _hook(env, "Stop", transcript, stop_hook_active=False)
    assert (done.returncode, done.stdout) == (0, "")
    found = wait_for(lambda: len(_exchanges(env)) == 2 and _exchanges(env), 30, "the captured turns")
    assert {str(h["source"]) for h in found} == {f"session:claude-code/{SESSION}"}  # type: ignore[union-attr]

    for event in ("Stop", "PreCompact", "SessionEnd"):  # every hook again: nothing is stored twice
        assert _hook(env, event, transcript)[0].returncode == 0
    wait_for(lambda: not any((Path(env["ENGRAM_DATA_DIR"]) / "capture" / "inbox").iterdir()), 30, "the jobs")
    assert len(_exchanges(env)) == 2

    start, _ = _hook(env, "SessionStart", transcript, source="startup")
    assert start.returncode == 0, start.stderr
    brief = json.loads(start.stdout)["hookSpecificOutput"]
    assert brief["hookEventName"] == "SessionStart"
    assert "billing-slow" in brief["additionalContext"] and len(brief["additionalContext"]) <= 2500 + 200
    assert "sk-ant-api03" not in brief["additionalContext"]


def test_a_hook_with_no_service_starts_one_and_its_job_is_captured(env: dict[str, str], stop_services: None,
                                                                  tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(FIXTURE, transcript)
    done, _ = _hook(env, "Stop", transcript)
    assert done.returncode == 0 and done.stdout == ""
    log = Path(env["ENGRAM_LOG_DIR"]) / "hooks.log"
    assert "which was started" in log.read_text(encoding="utf-8")
    wait_for(lambda: len(_exchanges(env)) == 2, 60, "the started service to capture the session")
