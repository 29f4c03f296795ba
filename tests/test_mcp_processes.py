"""The real processes: `engram mcp` over real stdio, `engram service` over Streamable HTTP, shared by launchers."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from engram.core.catalog import TOOLS
from engram.mcp.service_files import new_challenge, proves, read_info

from .conftest import ENGRAM, wait_for, write_tree

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def stdio(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=ENGRAM[0], args=[*ENGRAM[1:], "mcp", *args], env=env)


def http_client(env: dict[str, str], **headers: str) -> Client:
    data = Path(env["ENGRAM_DATA_DIR"])
    info = read_info(data)
    token = (data / "service.token").read_text().strip()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers}, timeout=60)
    return Client(streamable_http_client(info.url, http_client=http))


async def exercise_every_tool(client: Client, folder: Path) -> dict[str, str]:
    """Call each of the 20 tools once with valid arguments; returns their texts by tool."""
    write_tree(folder, {"deploy.md": "# Deploy\n\nRoll back with ``git revert`` then redeploy.",
                        "tasks.py": "def git_revert():\n    pass\n"})
    texts: dict[str, str] = {}

    async def call(tool: str, arguments: dict) -> str:
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, f"{tool}: {result.content[0].text}"
        texts[tool] = result.content[0].text
        return texts[tool]

    await call("ingest_path", {"path": str(folder), "project": "ops"})
    await call("ingest_content", {"content": "Standup notes: revert first, ask later.", "title": "standup"})
    note = (await call("store", {"content": "We roll back with git revert", "type": "decision"})).split()[2]
    source = (folder / "deploy.md").resolve().as_posix()
    await call("search", {"query": "how do we roll back", "max_chars": 2000})
    await call("get_memory", {"ids": [note]})
    await call("neighbors", {"id": note})
    await call("file_chunks", {"source": source})
    await call("file_summary", {"source": source})
    await call("list_sources", {"project": "ops"})
    fact = (await call("kg_edit", {"action": "add", "subject": "deploys", "predicate": "use", "object": "git"}))
    await call("kg_query", {"subject": "deploys"})
    await call("kg_edit", {"action": "end", "fact_id": fact.split()[1].rstrip(":")})
    await call("graph_scope", {})
    await call("status", {})
    await call("device_context", {})
    await call("wake_up", {})
    newer = (await call("store", {"content": "We no longer roll back with git revert", "type": "decision"})).split()[2]
    assert f"it may update {note} ('no longer' added)" in texts["store"], texts["store"]
    await call("review", {"project": "ops"})
    await call("tidy", {"action": "keep_both", "id": newer, "others": [note]})
    await call("recall", {"question": "how do we roll back?", "plan": [
        {"tool": "search", "args": {"query": "roll back"}}, {"tool": "file_summary", "args": {"source": source}}]})
    await call("forget", {"project": "ops", "kind": "chunk"})  # the preview: nothing goes
    await call("delete", {"ids": [note, newer]})
    assert set(texts) == set(TOOLS)
    return texts


async def test_standalone_launcher_serves_every_tool_over_real_stdio(env: dict[str, str], tmp_path: Path) -> None:
    root = write_tree(tmp_path / "notes", {"ops.md": "# Ops\n\nBackups run nightly with restic."})
    async with Client(stdio(env, "--standalone"), mode="legacy") as client:
        assert len((await client.list_tools()).tools) == 20
        ingest = await client.call_tool("ingest_path", {"path": str(root), "project": "ops"})
        assert not ingest.is_error, ingest.content[0].text
        found = await client.call_tool("search", {"query": "when do backups run"})
        assert "ops.md:" in found.content[0].text and not found.is_error
        bad = await client.call_tool("search", {"query": "x", "limit": 99})
        assert bad.is_error and "argument 'limit' got 99" in bad.content[0].text
        other = await client.call_tool("search", {"query": "backups", "workspace": "elsewhere"})
        assert other.is_error and "does not exist yet" in other.content[0].text
        again = await client.call_tool("status", {})
        assert "1 memories" in again.content[0].text


async def test_each_mcp_session_is_a_run_with_its_own_allowance(env: dict[str, str], tmp_path: Path,
                                                                stop_services: None) -> None:
    budgeted = {**env, "ENGRAM_RECALL_RUN_BUDGET_ENABLED": "true"}
    root = write_tree(tmp_path / "notes", {"ops.md": "# Ops\n\nBackups run nightly with restic to the NAS."})
    withheld = "semantic preparation withheld (the run has used its 2 preparation rounds)"
    async with Client(stdio(budgeted), mode="legacy") as first:
        assert not (await first.call_tool("ingest_path", {"path": str(root), "project": "ops"})).is_error
        texts = [(await first.call_tool("search", {"query": q})).content[0].text for q in ("backups", "restic", "NAS")]
        assert withheld not in texts[0] and withheld not in texts[1] and withheld in texts[2], texts[2]
        named = await first.call_tool("search", {"query": "NAS", "run": "my-task"})
        assert "withheld" not in named.content[0].text
        async with Client(stdio(budgeted), mode="legacy") as second:  # another editor: its own session, its own run
            assert "withheld" not in (await second.call_tool("search", {"query": "NAS"})).content[0].text


async def test_every_tool_over_stdio_and_over_streamable_http(env: dict[str, str], tmp_path: Path,
                                                              service: subprocess.Popen[bytes]) -> None:
    async with Client(stdio(env, "--standalone"), mode="legacy") as client:
        over_stdio = await exercise_every_tool(client, tmp_path / "a")
    async with http_client(env) as client:
        over_http = await exercise_every_tool(client, tmp_path / "b")
    assert over_stdio["device_context"] == over_http["device_context"]


async def test_service_over_streamable_http_with_its_token(env: dict[str, str], service: subprocess.Popen[bytes]) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    if os.name == "posix":
        for name in ("service.json", "service.token"):
            assert stat.S_IMODE((data / name).stat().st_mode) == 0o600
    async with http_client(env) as client:
        assert len((await client.list_tools()).tools) == 20
        stored = await client.call_tool("store", {"content": "the staging database is db-2", "workspace": "work"})
        assert not stored.is_error
        found = await client.call_tool("search", {"query": "staging database", "workspace": "work"})
        assert "db-2" in found.content[0].text
        isolated = await client.call_tool("search", {"query": "staging database"})
        assert "db-2" not in isolated.content[0].text
        refused = await client.call_tool("delete", {"ids": ["000000000000"], "workspace": "work"})
        assert refused.is_error and "nothing was deleted" in refused.content[0].text


@pytest.mark.parametrize(("token", "headers", "status"), [
    (None, {}, 401),
    ("wrong", {}, 401),
    ("right", {"Host": "evil.example:80"}, 421),
    ("right", {"Origin": "http://evil.example"}, 403),
    ("right", {"Origin": "http://localhost:3000"}, 200),
])
async def test_requests_without_token_or_from_outside_loopback_are_refused(
        env: dict[str, str], service: subprocess.Popen[bytes], token: str | None, headers: dict[str, str],
        status: int) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    info = read_info(data)
    secret = (data / "service.token").read_text().strip() if token == "right" else token
    auth = {"Authorization": f"Bearer {secret}"} if secret else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx2.AsyncClient() as http:
        to_mcp = await http.post(info.url, json=body, headers={**auth, **headers,
                                                                "Accept": "application/json, text/event-stream"})
        health = await http.get(info.base_url + "/health", params={"challenge": new_challenge()}, headers=headers)
    if status != 200:  # (a lone tools/list without a session is the endpoint's own 400: past the guard)
        assert to_mcp.status_code == status
    assert health.status_code == (status if status in (421, 403) else 200)


async def test_the_service_proves_it_holds_the_token_without_receiving_it(
        env: dict[str, str], service: subprocess.Popen[bytes]) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    info = read_info(data)
    secret = (data / "service.token").read_text().strip()
    challenge = new_challenge()
    async with httpx2.AsyncClient() as http:
        answer = (await http.get(info.base_url + "/health", params={"challenge": challenge})).json()
        unchallenged = await http.get(info.base_url + "/health")
        twice = await http.get(info.base_url + f"/health?challenge={challenge}&challenge={challenge}")
    assert answer["pid"] == info.pid and proves(secret, challenge, answer["proof"])
    assert not proves(secret, new_challenge(), answer["proof"]) and not proves("another-token", challenge, answer["proof"])
    assert unchallenged.status_code == 400 and twice.status_code == 400


async def test_a_second_service_says_where_the_first_one_runs(env: dict[str, str],
                                                             service: subprocess.Popen[bytes]) -> None:
    second = subprocess.run([*ENGRAM, "service"], env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0
    assert f"already running for {env['ENGRAM_DATA_DIR']} (pid {service.pid}, http://127.0.0.1:" in second.stderr


async def test_two_launchers_share_one_service_started_by_the_first(env: dict[str, str], stop_services: None) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    assert read_info(data) is None
    async with Client(stdio(env), mode="legacy") as first, Client(stdio(env)) as second:
        a = await first.call_tool("store", {"content": "written through the first editor"})
        b = await second.call_tool("search", {"query": "first editor"})
        assert not a.is_error and "written through the first editor" in b.content[0].text
        pid = read_info(data).pid
    logs = (Path(env["ENGRAM_LOG_DIR"]) / "service.log").read_text()
    assert logs.count("serving MCP on") == 1, "exactly one service (one model, one writer) served both"
    assert read_info(data).pid == pid


async def test_killing_the_service_mid_call_errors_and_the_next_launcher_restarts_it(
        env: dict[str, str], tmp_path: Path, stop_services: None) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    corpus = write_tree(tmp_path / "big", {f"doc{i:03d}.md": f"# Doc {i}\n\n" + f"sentence {i} about topic. " * 40
                                           for i in range(400)})
    async with Client(stdio(env), mode="legacy") as client:
        warm = await client.call_tool("status", {})
        assert not warm.is_error
        pid = read_info(data).pid
        results: list = []

        async def long_call() -> None:
            results.append(await client.call_tool("ingest_path", {"path": str(corpus)}))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(long_call)
            log = Path(env["ENGRAM_LOG_DIR"]) / "service.log"
            await anyio.to_thread.run_sync(lambda: wait_for(lambda: "tool ingest_path called" in log.read_text(), 60,
                                                            "the call to reach the service"))
            os.kill(pid, signal.SIGKILL)
        assert results[0].is_error and "stopped while answering" in results[0].content[0].text
    async with Client(stdio(env), mode="legacy") as client:
        after = await client.call_tool("status", {})
    assert not after.is_error
    assert read_info(data).pid != pid


def test_stdout_of_the_launcher_carries_only_protocol_messages(env: dict[str, str]) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "1"}}}
    proc = subprocess.run([*ENGRAM, "-v", "mcp", "--standalone"], env=env, input=json.dumps(request) + "\n",
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "engram"
