"""Engram's Claude Code plugin with the real Claude Code (from npm): validated, installed from its local
marketplace in an isolated HOME, and run in real sessions against a stand-in model server on loopback. The
session's turns are searchable after its hooks ran, without the agent storing anything, and the next session
starts with a brief that reaches the model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ENGRAM, cli_in_process, wait_for
from tests.fake_anthropic import fake_anthropic

NPM = shutil.which("npm")
pytestmark = [pytest.mark.skipif(NPM is None, reason="Node.js (npm) is not installed"), pytest.mark.slow]
#: The version whose plugin commands and hook inputs were checked (docs/capture.md).
CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.332"
REPLY = "The invoice retry job runs on the billing-slow Celery queue."


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real Claude Code, installed once for the module from the npm registry, as a user's `npm install` would."""
    prefix = tmp_path_factory.mktemp("claude-code")
    assert NPM is not None
    subprocess.run([NPM, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                    CLAUDE_CODE], check=True, capture_output=True, timeout=600)
    entry = prefix / "node_modules" / ".bin" / "claude"
    assert entry.exists(), f"npm installed no claude under {prefix}"
    return entry


@pytest.fixture
def claude_env(env: dict[str, str], claude: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """An isolated HOME where `claude` is on the PATH, telemetry and updates are off."""
    home = tmp_path / "home"
    home.mkdir()
    yield {**env, "HOME": str(home), "PATH": f"{claude.parent}{os.pathsep}{env.get('PATH', '')}",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"}
    for pid_file in Path(env["ENGRAM_DATA_DIR"]).glob("service.json"):  # the service a hook or `mcp` started
        try:
            os.kill(json.loads(pid_file.read_text())["pid"], 15)
        except (OSError, ValueError, KeyError):
            pass


def _run(env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_setup_writes_a_plugin_claude_code_validates_installs_and_connects(claude_env: dict[str, str],
                                                                            claude: Path) -> None:
    assert _run(claude_env, *ENGRAM, "setup", "claude-code").returncode == 0  # the plain entry first
    done = _run(claude_env, *ENGRAM, "setup", "claude-code", "--plugin")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Successfully installed plugin: engram@engram-local" in done.stdout
    assert "Removed the plain engram entry" in done.stdout, "two entries would start two servers"
    root = Path(claude_env["ENGRAM_DATA_DIR"]) / "claude-code-plugin"
    for folder in (root, root / "engram"):
        checked = _run(claude_env, str(claude), "plugin", "validate", str(folder), "--strict")
        assert checked.returncode == 0 and "Validation passed" in checked.stdout, checked.stdout + checked.stderr
    listed = _run(claude_env, str(claude), "plugin", "list")
    assert "engram@engram-local" in listed.stdout and "enabled" in listed.stdout
    again = _run(claude_env, *ENGRAM, "setup", "claude-code", "--plugin")
    assert again.returncode == 0 and "already" in again.stdout, "a second setup changes nothing"
    servers = _run(claude_env, str(claude), "mcp", "list", timeout=180)
    assert "plugin:engram:engram" in servers.stdout and "Connected" in servers.stdout, servers.stdout

    removed = _run(claude_env, *ENGRAM, "setup", "claude-code", "--plugin", "--remove")
    assert removed.returncode == 0 and not root.exists(), removed.stdout + removed.stderr
    assert "engram@engram-local" not in _run(claude_env, str(claude), "plugin", "list").stdout


def test_a_real_session_is_remembered_by_its_hooks_and_the_next_one_starts_with_a_brief(
        claude_env: dict[str, str], claude: Path, tmp_path: Path) -> None:
    assert _run(claude_env, *ENGRAM, "setup", "claude-code", "--plugin").returncode == 0
    project = tmp_path / "billing"
    project.mkdir()
    question = "Which queue does the invoice retry job run on?"
    with fake_anthropic(REPLY) as model:
        session = {**claude_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"}
        first = _run(session, str(claude), "-p", "--model", "claude-sonnet-4-5", question, cwd=project)
        assert first.returncode == 0 and REPLY in first.stdout, first.stdout + first.stderr

        def captured() -> list[dict[str, object]]:
            out = cli_in_process(claude_env, "search", "invoice retry queue", "--json")
            return [h for h in json.loads(out.stdout)["result"]["hits"] if h["kind"] == "exchange"] \
                if out.returncode == 0 else []

        hits = wait_for(captured, 60, "the session's turn to be captured")
        [hit] = hits  # type: ignore[misc]
        assert hit["project"] == "billing" and str(hit["source"]).startswith("session:claude-code/")
        assert question in str(hit["content"]) and REPLY in str(hit["content"])

        second = _run(session, str(claude), "-p", "--model", "claude-sonnet-4-5", "What did we find out?",
                      cwd=project)
        assert second.returncode == 0, second.stdout + second.stderr
        sent = model.sent_text()
        assert "Engram remembers this project (billing)" in sent, "the brief reached the model"
        assert "billing-slow" in sent.split("Engram remembers this project", 1)[1]
    log = (Path(claude_env["ENGRAM_LOG_DIR"]) / "hooks.log").read_text(encoding="utf-8")
    assert "SessionStart" in log and "Stop" in log and "SessionEnd" in log and "WARNING" not in log, log
