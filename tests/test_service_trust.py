"""The launcher trusts a service only once it has proven it holds the token; tokens are fresh at every start."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx2
import pytest

from engram.core import Paths
from engram.mcp.handshake import TokenMismatch
from engram.mcp.remote import RemoteBackend
from engram.mcp.service_files import INFO_FILE, TOKEN_FILE, read_info

from .conftest import ENGRAM, wait_for

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class Impostor(ThreadingHTTPServer):
    """A program that took a dead service's port: answers everything like a healthy service, records it all."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.requests: list[dict[str, object]] = []
        super().__init__(("127.0.0.1", 0), _ImpostorHandler)

    @property
    def port(self) -> int:
        return self.server_address[1]


class _ImpostorHandler(BaseHTTPRequestHandler):
    server: Impostor

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.server.requests.append({"line": self.requestline, "headers": dict(self.headers.items()),
                                     "body": self.rfile.read(length).decode("utf-8", "replace")})
        body = json.dumps({"status": "ok", "pid": self.server.pid, "proof": "0" * 64}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def impostor() -> Iterator[Impostor]:
    server = Impostor(pid=4_000_000)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def paths_of(env: dict[str, str]) -> Paths:
    return Paths(Path(env["ENGRAM_DATA_DIR"]), Path(env["ENGRAM_CONFIG_DIR"]), Path(env["ENGRAM_LOG_DIR"]))


async def call(backend: RemoteBackend, tool: str, arguments: dict[str, object]) -> str:
    try:
        return await backend.call(tool, arguments)
    finally:
        await backend.aclose()


async def test_a_stale_service_file_never_sends_the_token_or_arguments_to_whoever_took_the_port(
        env: dict[str, str], impostor: Impostor, stop_services: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # the service the launcher starts inherits the test's folders
    data = Path(env["ENGRAM_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    (data / TOKEN_FILE).write_text("token-of-the-dead-service")
    (data / INFO_FILE).write_text(json.dumps({"port": impostor.port, "pid": impostor.pid, "version": "0"}))
    text = await call(RemoteBackend(paths_of(env)), "store", {"content": "the vault code is 4417"})
    assert text.startswith("stored note ")
    assert impostor.requests, "the launcher did check the port it found in service.json"
    for request in impostor.requests:
        assert "authorization" not in {k.lower() for k in request["headers"]}
        assert "4417" not in request["body"] and request["line"].startswith("GET /health?challenge=")
    assert (data / TOKEN_FILE).read_text() != "token-of-the-dead-service"
    assert read_info(data).port != impostor.port


async def test_every_service_start_has_a_fresh_token_and_the_old_one_is_refused(
        env: dict[str, str], stop_services: None) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    tokens = []
    for _ in range(2):
        proc = subprocess.Popen([*ENGRAM, "service"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda proc=proc: read_info(data) and read_info(data).pid == proc.pid, 60, "the service to announce itself")
        tokens.append((data / TOKEN_FILE).read_text().strip())
        if len(tokens) == 1:
            proc.terminate()
            proc.wait(timeout=30)
    info = read_info(data)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens[0]}"}) as http:
        old = await http.post(info.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                              headers={"Accept": "application/json, text/event-stream"})
    proc.terminate()
    proc.wait(timeout=30)
    assert tokens[0] != tokens[1] and len(tokens[1]) >= 40
    assert old.status_code == 401


async def test_a_token_replaced_under_a_running_service_is_reported_at_once(
        env: dict[str, str], service: subprocess.Popen[bytes]) -> None:
    data = Path(env["ENGRAM_DATA_DIR"])
    backend = RemoteBackend(paths_of(env), start_timeout=30)
    assert "memories" in await backend.call("status", {})
    (data / TOKEN_FILE).write_text("a-token-the-service-never-had")
    with anyio.fail_after(15):  # the start timeout (30 s) is never waited for
        with pytest.raises(TokenMismatch, match=f"pid {service.pid}.*did not prove"):
            await call(backend, "status", {})
    assert read_info(data).pid == service.pid, "no second service was started for the folder"
    assert service.poll() is None


class StaleTokenBackend(RemoteBackend):
    """A launcher whose token went stale between the proof and the call (the service restarted in between)."""

    async def _trust(self, info: object, secret: str) -> object:
        return await super()._trust(info, "the-token-from-before-the-restart")  # type: ignore[arg-type]


async def test_a_401_from_the_service_is_a_token_mismatch_at_once(env: dict[str, str],
                                                                  service: subprocess.Popen[bytes]) -> None:
    with anyio.fail_after(15):
        with pytest.raises(TokenMismatch, match="did not prove"):
            await call(StaleTokenBackend(paths_of(env), start_timeout=30), "status", {})
