"""The service's front door, driven as an ASGI app: one Host, Origin and Authorization each, all loopback."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engram.mcp.service import Guard
from engram.mcp.service_files import MCP_PATH

pytestmark = pytest.mark.anyio

SECRET = "s3cret-token"
TOKEN = (b"authorization", f"Bearer {SECRET}".encode())
HOST = (b"host", b"127.0.0.1:8765")


class Endpoint:
    """The app behind the guard: records each request that reached it and answers 200."""

    def __init__(self) -> None:
        self.reached: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"endpoint"})


async def request(headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes, list[str]]:
    """Send one POST to the MCP path through a fresh guard; returns (status, body, paths that reached the endpoint)."""
    endpoint = Endpoint()
    guard = Guard(endpoint, SECRET, on_shutdown=lambda: None)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await guard({"type": "http", "method": "POST", "path": MCP_PATH, "headers": headers}, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]), endpoint.reached


def refused(status: int, error: str) -> tuple[int, bytes, list[str]]:
    """What ``request`` returns for a request the guard refuses: the status, its JSON error, nothing reached."""
    return status, json.dumps({"error": error}).encode(), []


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8765", "localhost", "localhost:1", "LocalHost:65535",
                                  "[::1]", "[::1]:8765"])
async def test_a_loopback_host_with_the_token_reaches_the_endpoint(host: str) -> None:
    assert await request([(b"host", host.encode()), TOKEN]) == (200, b"endpoint", [MCP_PATH])


@pytest.mark.parametrize("origin", ["http://localhost:3000", "https://127.0.0.1", "http://127.0.0.1:8765",
                                    "http://[::1]:8080", "HTTPS://LOCALHOST"])
async def test_a_loopback_origin_reaches_the_endpoint(origin: str) -> None:
    assert await request([HOST, (b"origin", origin.encode()), TOKEN]) == (200, b"endpoint", [MCP_PATH])


@pytest.mark.parametrize(("headers", "name"), [
    ([HOST, (b"host", b"evil.example"), TOKEN], "Host"),
    ([(b"host", b"evil.example"), HOST, TOKEN], "Host"),
    ([HOST, HOST, TOKEN], "Host"),
    ([HOST, (b"origin", b"http://localhost:3000"), (b"origin", b"http://evil.example"), TOKEN], "Origin"),
    ([HOST, (b"origin", b"http://evil.example"), (b"origin", b"http://localhost:3000"), TOKEN], "Origin"),
    ([HOST, TOKEN, (b"authorization", b"Bearer wrong")], "Authorization"),
    ([HOST, (b"authorization", b"Bearer wrong"), TOKEN], "Authorization"),
    ([HOST, TOKEN, TOKEN], "Authorization"),
    ([HOST, (b"Authorization", TOKEN[1]), TOKEN], "Authorization"),
])
async def test_a_repeated_host_origin_or_authorization_header_is_refused_with_400(
        headers: list[tuple[bytes, bytes]], name: str) -> None:
    assert await request(headers) == refused(400, f"the {name} header was sent more than once; send it once")


@pytest.mark.parametrize("host", [
    "", " ", "127.0.0.1 ", " 127.0.0.1", "127.0.0.1\t", "evil.com@127.0.0.1", "user:pw@localhost:8765",
    "127.0.0.1@evil.com", "127.0.0.1/path", "127.0.0.1:8765/mcp", "localhost/", "127.0.0.1?x=1", "127.0.0.1#top",
    "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:123456", "127.0.0.1:+80", "127.0.0.1:8o",
    "127.0.0.1:80:80", "::1", "[::1", "[::1]x", "[0:0:0:0:0:0:0:1]", "localhost.", "127.0.0.2", "evil.example:80",
    "localhost.evil.example", "127.0.0.1.nip.io",
])
async def test_a_host_that_is_not_exactly_a_loopback_host_and_port_is_refused_with_421(host: str) -> None:
    assert await request([(b"host", host.encode()), TOKEN]) == refused(421, "Host must be a loopback address")


async def test_a_request_without_a_host_is_refused_with_421() -> None:
    assert await request([TOKEN]) == refused(421, "Host must be a loopback address")


@pytest.mark.parametrize("origin", [
    "null", "", "localhost:3000", "//localhost:3000", "http://localhost:3000/", "http://localhost:3000/app",
    "http://localhost:3000?x=1", "http://localhost:3000#top", "http://evil.com@localhost:3000",
    "http://localhost@evil.com", "http://localhost:0", "http://localhost:65536", "http://localhost:", "ftp://localhost",
    "file://", "chrome-extension://abcdefgh", "ws://localhost:3000", "http://evil.example", "http://127.0.0.1 ",
    "http:// 127.0.0.1", "http://[::1", "http://localhost.",
])
async def test_an_origin_that_is_not_exactly_a_loopback_origin_is_refused_with_403(origin: str) -> None:
    assert await request([HOST, (b"origin", origin.encode()), TOKEN]) == refused(403,
                                                                              "Origin must be a loopback address")


@pytest.mark.parametrize("authorization", [None, "", "Bearer wrong", f"bearer {SECRET}", f"Bearer  {SECRET}",
                                           f"Bearer {SECRET} "])
async def test_a_missing_or_wrong_token_is_refused_with_401(authorization: str | None) -> None:
    headers = [HOST] + ([(b"authorization", authorization.encode())] if authorization is not None else [])
    assert await request(headers) == refused(
        401, "missing or wrong bearer token (see service.token in the data folder)")
