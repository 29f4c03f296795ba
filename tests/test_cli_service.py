"""The command line uses the running service (one model, one writer) and opens the folder itself only without one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from engram.mcp.service_files import TOKEN_FILE, read_info

from .conftest import ENGRAM, wait_for, write_tree

pytestmark = pytest.mark.slow  # a real service process: the full run only


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ENGRAM, *args], env=env, capture_output=True, text=True, timeout=300)


def service_log(env: dict[str, str]) -> str:
    return (Path(env["ENGRAM_LOG_DIR"]) / "service.log").read_text()


def test_tool_commands_run_in_the_service_while_it_runs(env: dict[str, str], service: subprocess.Popen[bytes],
                                                        tmp_path: Path) -> None:
    stored = cli(env, "remember", "the backup key lives in the blue safe", "--json")
    assert stored.returncode == 0, stored.stderr
    note = json.loads(stored.stdout)
    assert note["tool"] == "store" and set(note["result"]) >= {"id", "workspace", "entities"}
    found = cli(env, "search", "where is the backup key", "--json")
    hits = json.loads(found.stdout)["result"]["hits"]
    assert hits[0]["id"] == note["result"]["id"] and "blue safe" in hits[0]["content"]
    docs = write_tree(tmp_path / "docs", {f"d{i}.md": f"# D{i}\n\nalpha beta {i}" for i in range(30)})
    ingest = cli(env, "ingest", str(docs))
    assert ingest.returncode == 0, ingest.stderr
    assert "ingest: 30/30 files" in ingest.stderr, "progress comes from the service's ingest"
    recall = cli(env, "recall", "backup key?", "--search", "backup key", "--json")
    assert recall.returncode == 0 and json.loads(recall.stdout)["pack"]["items"]
    log = service_log(env)
    for tool in ("store", "search", "ingest_path", "recall"):
        assert f"direct call of {tool}" in log
    assert "direct call of a context pack" in log


def test_refusals_from_the_service_read_and_exit_as_in_process(env: dict[str, str], tmp_path: Path,
                                                               stop_services: None) -> None:
    local = [cli(env, *args) for args in (["search", "x", "--limit", "99"], ["get", "000000000000"])]
    proc = subprocess.Popen([*ENGRAM, "service"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: read_info(Path(env["ENGRAM_DATA_DIR"])), 60, "the service")
        remote = [cli(env, *args) for args in (["search", "x", "--limit", "99"], ["get", "000000000000"])]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    errors = lambda runs: [(r.returncode, r.stderr.splitlines()[-1]) for r in runs]  # noqa: E731
    assert errors(remote) == errors(local) and [r.returncode for r in remote] == [2, 1]
    # The service answers with its own settings: an override in the caller's environment is named, not lost silently.
    assert all("ENGRAM_EMBED_THREADS in this environment does not apply" in r.stderr for r in remote)
    assert all("does not apply" not in r.stderr for r in local)
    assert "direct call of search" in service_log(env)


def test_a_service_that_cannot_prove_its_token_is_an_error_not_a_second_writer(
        env: dict[str, str], service: subprocess.Popen[bytes]) -> None:
    (Path(env["ENGRAM_DATA_DIR"]) / TOKEN_FILE).write_text("a-token-the-service-never-had")
    done = cli(env, "status")
    assert done.returncode == 1
    assert "Service token mismatch" in done.stderr and f"pid {service.pid}" in done.stderr
    assert "direct call" not in service_log(env)
