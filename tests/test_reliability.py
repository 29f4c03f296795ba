"""A day of faults in one suite: kill -9 mid-ingest, many editors at once, no network beyond loopback.

(A service killed mid-call whose next call restarts it: tests/test_mcp_processes.py.)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from engram.core import Engine, Paths, Settings
from engram.core.store import filters as sql
from engram.mcp.remote import RemoteBackend

from .conftest import HashingEmbedder, write_tree
from .test_mcp_processes import stdio

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]


def document(i: int, version: int) -> str:
    sections = "\n\n".join(f"## Part {k}\n\n" + f"File {i} version {version} part {k} talks about topic{i % 9}. " * 12
                           for k in range(3))
    return f"# Document {i}\n\n{sections}\n"


def test_twenty_kills_during_ingest_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    files = 96
    corpus = write_tree(tmp_path / "corpus", {f"f{i:03d}.md": document(i, 0) for i in range(files)})
    notes: list[str] = []
    kill_points = []

    def worker(note: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "tests.reliability_worker", str(tmp_path), str(corpus), note],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    for round_ in range(20):
        for i in rng.sample(range(files), 24):  # every run finds work: a quarter of the files changed
            (corpus / f"f{i:03d}.md").write_text(document(i, round_ + 1))
        proc = worker(f"note of round {round_}")
        kill_after = rng.choice(["stored", "batch 1", "batch 2", "batch 3", "batch 4"])
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("stored "):
                notes.append(line.split()[1])
            if line.strip() in (kill_after, "done"):
                break
        proc.kill()
        proc.wait(timeout=30)
        kill_points.append(kill_after)
    final = worker("note of the last round")
    out, _ = final.communicate(timeout=300)
    assert final.returncode == 0 and out.rstrip().endswith("done")
    notes.append(out.split()[1])

    data = tmp_path / "data"
    with Engine(Paths(data, tmp_path / "config", tmp_path / "logs"), Settings(), embedder=HashingEmbedder()) as engine:
        store = engine.store()
        memories = store.scan(store.memories, None, ["id", "source", "kind", "content"])
        ids = [m["id"] for m in memories]
        assert len(ids) == len(set(ids)), "no memory was written twice"
        sources = {r["source"]: r for r in store.scan(store.sources, None)}
        assert set(sources) == {(corpus / f"f{i:03d}.md").resolve().as_posix() for i in range(files)}
        for source, row in sources.items():
            chunks = [m for m in memories if m["source"] == source]
            text = Path(source).read_text()
            assert row["content_hash"] == hashlib.sha256(text.encode()).hexdigest(), f"{source} is current"
            assert len(chunks) == row["chunk_count"] and all(c["content"] in text for c in chunks), source
        kept = {m["id"] for m in memories if m["kind"] == "exchange"}
        assert kept == set(notes) and len(notes) == 21, "every note whose store returned is still there"
        edges = store.scan(store.edges, sql.in_list("relation", ["part_of"]), ["id", "src"])
        assert len(edges) == len({e["id"] for e in edges}) == sum(r["chunk_count"] for r in sources.values())
    assert len(set(kill_points)) >= 3, kill_points


async def test_eight_editors_making_two_thousand_calls_lose_no_write_and_see_no_error(
        env: dict[str, str], service: subprocess.Popen[bytes]) -> None:
    paths = Paths(Path(env["ENGRAM_DATA_DIR"]), Path(env["ENGRAM_CONFIG_DIR"]), Path(env["ENGRAM_LOG_DIR"]))
    stored: dict[str, str] = {}
    facts: list[str] = []
    errors: list[str] = []

    async def editor(n: int) -> None:
        rng = random.Random(n)
        backend = RemoteBackend(paths, start_timeout=60)
        try:
            for i in range(250):
                action = rng.choices(["store", "search", "get", "status", "fact", "sources", "recall"],
                                     weights=[5, 4, 1, 1, 1, 1, 1])[0]
                try:
                    if action == "store":
                        marker = f"editor{n}call{i}"
                        text = await backend.call("store", {"content": f"{marker}: we decided to use plan {i % 7}"})
                        stored[text.split()[2]] = marker
                    elif action == "search":
                        await backend.call("search", {"query": f"plan {rng.randrange(7)}", "limit": 5})
                    elif action == "get" and stored:
                        await backend.call("get_memory", {"ids": rng.sample(sorted(stored), min(3, len(stored)))})
                    elif action == "fact":
                        text = await backend.call("kg_edit", {"action": "add", "subject": f"editor{n}",
                                                              "predicate": "made", "object": f"call {i}"})
                        facts.append(text.split()[1].rstrip(":"))
                    elif action == "sources":
                        await backend.call("list_sources", {})
                    elif action == "recall":
                        await backend.call("recall", {"question": "which plan did we decide on?",
                                                      "plan": [{"tool": "search", "args": {"query": "plan"}}]})
                    else:
                        await backend.call("status", {})
                except Exception as exc:
                    errors.append(f"editor {n} call {i} ({action}): {type(exc).__name__}: {exc}")
        finally:
            await backend.aclose()

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tasks:
            for n in range(8):
                tasks.start_soon(editor, n)
    assert errors == []
    check = RemoteBackend(paths)
    try:
        ids = sorted(stored)
        for start in range(0, len(ids), 20):
            text = await check.call("get_memory", {"ids": ids[start:start + 20], "max_chars": 12000})
            for memory_id in ids[start:start + 20]:
                assert stored[memory_id] in text, f"the write of {stored[memory_id]} was lost"
        status = await check.call("status", {})
        found = await check.call("kg_query", {"predicate": "made", "limit": 200})
    finally:
        await check.aclose()
    assert f"{len(stored)} memories" in status
    assert len(facts) > 50 and all(fact in found for fact in facts[-50:])


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
               "ENGRAM_TAGGER_LOCAL_MODEL": "smollm2-135m-instruct", "ENGRAM_TAGGER_LOCAL_N_CTX": "4096",
               "ENGRAM_TAGGER_LLM": "true", "ENGRAM_TAGGER_LOCAL_THREADS": "2"}
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
