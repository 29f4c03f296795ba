"""The one way to the service (mcp/locator.py): the wait's decisions on a clock of the test's, and the sync and
async looks over real files, a real instance lock and a real HTTP server on loopback."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from engram.core import Paths
from engram.mcp.errors import ServiceStopped, ServiceUnavailable
from engram.mcp.handshake import Proof, TokenMismatch
from engram.mcp.locator import WRONG_PROOF_GRACE, Found, Search, Sighting, Step, locate, locate_async
from engram.mcp.service_files import InstanceLock, ServiceInfo, proof, write_info

INFO = ServiceInfo(port=41_234, pid=4_321, version="1.0")


class Clock:
    """A monotonic clock that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths(tmp_path / "data", tmp_path / "config", tmp_path / "logs")


def seen(proof: Proof, *, running: bool = True, info: ServiceInfo | None = INFO,
         secret: str | None = "tok") -> Sighting:
    return Sighting(running=running, info=info, secret=secret, proof=proof)


# ------------------------------------------------------------------ decisions


@pytest.mark.parametrize("starts", [True, False])
def test_a_service_that_proves_the_token_is_found(paths: Paths, starts: bool) -> None:
    search = Search(paths, patience=5, starts=starts, clock=Clock())
    assert search.next(seen(Proof.PROVEN)) == Found(INFO, "tok")


def test_the_command_line_finds_no_service_in_a_folder_no_process_holds(paths: Paths) -> None:
    """A service.json left by a killed service (its port silent, or another program's) is no service, and
    its port is not even asked."""
    search = Search(paths, patience=5, starts=False, clock=Clock())
    assert not search.worth_challenging(running=False)
    assert search.next(seen(Proof.SILENT, running=False)) is Step.ABSENT
    assert search.next(seen(Proof.WRONG, running=False)) is Step.ABSENT
    assert search.next(seen(Proof.SILENT, running=False, info=None, secret=None)) is Step.ABSENT


def test_the_launcher_starts_one_service_past_stale_files_and_waits_for_it(paths: Paths) -> None:
    clock = Clock()
    search = Search(paths, patience=5, starts=True, clock=clock)
    assert search.worth_challenging(running=False)
    assert search.next(seen(Proof.WRONG, running=False)) is Step.START  # a squatter on a dead service's port
    clock.now += 1
    assert search.next(seen(Proof.SILENT, running=False)) is Step.WAIT  # started once, not again
    assert search.next(seen(Proof.SILENT, running=True, info=None)) is Step.WAIT


@pytest.mark.parametrize("starts", [True, False])
def test_a_holder_of_the_folder_without_the_proof_is_a_token_mismatch_after_the_grace(paths: Paths,
                                                                                       starts: bool) -> None:
    clock = Clock()
    search = Search(paths, patience=60, starts=starts, clock=clock)
    assert search.next(seen(Proof.WRONG)) is Step.WAIT
    clock.now += WRONG_PROOF_GRACE
    assert search.next(seen(Proof.WRONG)) is Step.WAIT  # a service that is starting: new token, old service.json
    clock.now += 0.01
    with pytest.raises(TokenMismatch, match=r"\(pid 4321, port 41234\) did not prove .*Nothing was sent to it"):
        search.next(seen(Proof.WRONG))


def test_the_launcher_gives_up_after_its_start_timeout(paths: Paths) -> None:
    clock = Clock()
    search = Search(paths, patience=30, starts=True, clock=clock)
    assert search.next(seen(Proof.SILENT, running=False, info=None)) is Step.START
    clock.now += 30
    assert search.next(seen(Proof.SILENT, info=None)) is Step.WAIT
    clock.now += 0.01
    with pytest.raises(ServiceUnavailable) as caught:
        search.next(seen(Proof.SILENT, info=None))
    assert caught.value.message == (f"The Engram service did not answer within 30 s. Its log is "
                                    f"{paths.log_dir / 'service.out'}; `engram service` in a terminal shows the "
                                    "error.")


def test_the_command_line_gives_up_on_a_silent_holder_after_its_wait(paths: Paths) -> None:
    clock = Clock()
    search = Search(paths, patience=10, starts=False, clock=clock)
    assert search.next(seen(Proof.SILENT)) is Step.WAIT
    clock.now += 10.01
    with pytest.raises(ServiceStopped) as caught:
        search.next(seen(Proof.SILENT))
    assert caught.value.message == (f"An Engram service holds {paths.data_dir} but did not answer within 10 s. "
                                    f"Its log is in {paths.log_dir}; quit the Engram app or stop the service, "
                                    "then run the command again.")


# ------------------------------------------------------------------ looks over real files and HTTP


class Health(ThreadingHTTPServer):
    """``GET /health`` on loopback: proves ``token`` when given one (as the service does), records each request."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.headers_seen: list[dict[str, str]] = []
        super().__init__(("127.0.0.1", 0), _HealthHandler)


class _HealthHandler(BaseHTTPRequestHandler):
    server: Health

    def do_GET(self) -> None:
        self.server.headers_seen.append(dict(self.headers.items()))
        challenge = parse_qs(urlsplit(self.path).query).get("challenge", [""])[0]
        answer = proof(self.server.token, challenge) if self.server.token else "0" * 64
        body = json.dumps({"status": "ok", "pid": os.getpid(), "proof": answer}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def serve(token: str | None) -> Iterator[Health]:
    server = Health(token)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def service() -> Iterator[Health]:
    yield from serve("the-real-token")


@pytest.fixture
def squatter() -> Iterator[Health]:
    yield from serve(None)


@pytest.fixture
def held(paths: Paths) -> Iterator[Paths]:
    """``paths`` with its instance lock held, as by a running service."""
    lock = InstanceLock(paths.data_dir)
    assert lock.acquire()
    try:
        yield paths
    finally:
        lock.release()


def announce(paths: Paths, server: Health, token: str) -> ServiceInfo:
    info = ServiceInfo(port=server.server_address[1], pid=os.getpid(), version="1.0")
    write_info(paths.data_dir, info)
    (paths.data_dir / "service.token").write_text(token, encoding="utf-8")
    return info


def test_the_sync_look_finds_the_proven_service_sending_no_token(held: Paths, service: Health) -> None:
    info = announce(held, service, "the-real-token")
    assert locate(Search(held, patience=5, starts=False)) == Found(info, "the-real-token")
    assert service.headers_seen and all("authorization" not in {k.lower() for k in h} for h in service.headers_seen)


@pytest.mark.anyio
async def test_the_async_look_finds_the_proven_service(held: Paths, service: Health) -> None:
    info = announce(held, service, "the-real-token")
    async with httpx2.AsyncClient(trust_env=False) as probe:
        assert await locate_async(Search(held, patience=5, starts=True), probe) == Found(info, "the-real-token")


def test_stale_files_in_a_folder_no_process_holds_are_no_service(paths: Paths, service: Health) -> None:
    announce(paths, service, "the-real-token")  # a killed service's files; its port answers, but nobody holds the lock
    assert locate(Search(paths, patience=5, starts=False)) is None
    assert service.headers_seen == [], "the port of a folder no process holds is not asked"


def test_a_squatter_never_gets_the_token_and_the_wait_ends_with_its_message(held: Paths, squatter: Health) -> None:
    announce(held, squatter, "the-real-token")
    with pytest.raises(ServiceStopped, match="did not answer within 0 s"):
        locate(Search(held, patience=0.3, starts=False))
    assert squatter.headers_seen, "it was challenged"
    assert not any("the-real-token" in str(h) for h in squatter.headers_seen)
