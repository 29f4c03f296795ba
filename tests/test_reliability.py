"""A day of faults in one suite: kill -9 mid-ingest, many editors at once, no network beyond loopback.

(A service killed mid-call whose next call restarts it: tests/test_mcp_processes.py.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from benchmark.reliability import editors_at_once, kills_during_ingest
from engram.core import Paths

from .conftest import write_tree
from .test_mcp_processes import stdio

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def env(env: dict[str, str]) -> dict[str, str]:
    """The service's environment, looking for exact duplicates only: the editors' notes are unique by construction
    but for a marker, and counted as near duplicates of one another they would leave no note to read back."""
    return {**env, "ENGRAM_UPKEEP_DUPLICATES": "exact"}


def test_kills_during_ingest_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    """The scenario of `python -m benchmark reliability` (20 kills of 96 files there), at a test's size."""
    report = kills_during_ingest(tmp_path, kills=6, files=32, seed=20261130)
    assert report["written_twice"] == 0, "no memory was written twice"
    assert report["sources_missing"] == report["sources_unexpected"] == []
    assert report["sources_not_current"] == [] and report["sources_with_wrong_chunks"] == []
    assert report["notes_acknowledged"] == 7 and report["notes_lost"] == [], "every note whose store returned stays"
    assert report["notes_unacknowledged_kept"] == []
    assert report["part_of_edges_duplicated"] == 0
    assert report["part_of_edges"] == report["part_of_edges_expected"]
    assert sum(1 for n in report["kill_points"].values() if n) >= 3, report["kill_points"]


async def test_editors_at_once_lose_no_write_and_see_no_error(env: dict[str, str],
                                                               service: subprocess.Popen[bytes]) -> None:
    """The load of `python -m benchmark reliability` (8 editors × 250 calls there), at a test's size."""
    paths = Paths(Path(env["ENGRAM_DATA_DIR"]), Path(env["ENGRAM_CONFIG_DIR"]), Path(env["ENGRAM_LOG_DIR"]))
    report = await editors_at_once(paths, editors=4, calls=60, limit_s=400)
    assert report["errors"] == []
    assert report["stores_acknowledged"] > 60 and report["stores_lost"] == []
    assert report["status_counts_every_store"]
    assert report["facts_added"] > 5 and report["last_facts_missing"] == []


SITE_GUARD = '''
import json, os, socket, sys
_log = os.environ["ENGRAM_TEST_NETLOG"]
_LOOPBACK = ("127.", "::1", "localhost", "0.0.0.0")


def _record(event, host):
    with open(_log, "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "event": event, "host": str(host)}) + "\\n")


def _hook(event, args):
    if event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(address, tuple) and not str(host).startswith(_LOOPBACK):
            _record(event, host)
    elif event == "socket.getaddrinfo":
        host = args[0]
        if host is not None and not str(host if not isinstance(host, bytes) else host.decode()).startswith(_LOOPBACK):
            _record(event, host)


sys.addaudithook(_hook)
'''


async def test_recall_with_the_local_model_sends_nothing_beyond_loopback(env: dict[str, str], tmp_path: Path,
                                                                         stop_services: None) -> None:
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(SITE_GUARD)
    netlog = tmp_path / "net.log"
    netlog.write_text("")
    guarded = {**env, "PYTHONPATH": os.pathsep.join([str(guard), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               "ENGRAM_TEST_NETLOG": str(netlog), "ENGRAM_RECALL_LLM": "true", "ENGRAM_RECALL_LLM_TIMEOUT_SEC": "60",
               "ENGRAM_HELPER_LOCAL_MODEL": "smollm2-135m-instruct", "ENGRAM_HELPER_LOCAL_N_CTX": "4096",
               "ENGRAM_TAGGER_LLM": "true", "ENGRAM_HELPER_LOCAL_THREADS": "2"}
    probe = "import socket\ntry:\n    socket.create_connection(('10.255.255.1', 9), timeout=0.2)\nexcept OSError:\n    pass\n"
    subprocess.run([sys.executable, "-c", probe], env=guarded, timeout=60, check=True)
    assert "10.255.255.1" in netlog.read_text(), "the guard sees a connection beyond loopback"
    netlog.write_text("")
    docs = write_tree(Path(env["HOME"]) / "ops", {
        "deploy.md": "# Deploy\n\nWe deploy with systemd units.\n\n## Rollback\n\nRoll back with git revert."})
    async with Client(stdio(guarded), mode="legacy") as client:
        for tool, arguments in (("ingest_path", {"path": str(docs)}),
                                ("store", {"content": "Rollbacks need the on-call lead's approval."}),
                                ("recall", {"question": "How do we roll back a deploy, and who approves it?"})):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content[0].text
    recall = result.content[0].text
    # The local model ran: it planned (and answered), or it planned and its answer fell back with a note naming it.
    # Which of the two depends on how much evidence this machine's speed lets it read before the deadline.
    ran = recall.startswith("step 1 · search") or re.match(r"note: the local model .* while answering", recall)
    assert ran, recall[:300]
    lines = [json.loads(line) for line in netlog.read_text().splitlines()]
    assert lines == [], f"connections beyond loopback: {lines}"
