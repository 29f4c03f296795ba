"""The headless service: one engine, served as MCP over Streamable HTTP on a loopback port.

Only requests that carry the data folder's bearer token and a loopback Host (and, when present,
a loopback Origin) get through; everything else is refused before the MCP endpoint sees it. One
service runs per data folder (an OS lock); a second start reports where the first one is.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio

from engram.core import Engine, EngramError, Paths, Settings

from .server import EngineBackend, build_server, version
from .service_files import MCP_PATH, InstanceLock, ServiceInfo, read_info, remove_info, token, write_info

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
HEALTH_PATH = "/health"


def _hostname(value: str) -> str:
    try:
        return (urlsplit("//" + value).hostname or "").lower()
    except ValueError:
        return ""


class Guard:
    """ASGI middleware: bearer token, loopback Host and Origin; serves ``/health`` itself."""

    def __init__(self, app: ASGIApp, secret: str, on_shutdown: Callable[[], None]) -> None:
        self.app = app
        self._expected = f"Bearer {secret}".encode()
        self._on_shutdown = on_shutdown

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._shutdown_first(send))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if _hostname(headers.get("host", "")) not in LOOPBACK:
            await _reply(send, 421, {"error": "Host must be a loopback address"})
            return
        origin = headers.get("origin")
        if origin is not None and _hostname(urlsplit(origin).netloc) not in LOOPBACK:
            await _reply(send, 403, {"error": "Origin must be a loopback address"})
            return
        if not hmac.compare_digest(headers.get("authorization", "").encode("latin-1"), self._expected):
            await _reply(send, 401, {"error": "missing or wrong bearer token (see service.token in the data folder)"},
                         extra=[(b"www-authenticate", b"Bearer")])
            return
        if scope["path"] == HEALTH_PATH:
            await _reply(send, 200, {"status": "ok", "pid": os.getpid(), "version": version()})
            return
        await self.app(scope, receive, send)


    def _shutdown_first(self, send: Any) -> Any:
        # uvicorn re-raises SIGTERM/SIGINT once it has shut down, which ends the process before code
        # after server.run() could clean up; so the cleanup runs as the last step of the lifespan.
        async def wrapped(message: Any) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await anyio.to_thread.run_sync(self._on_shutdown)
            await send(message)

        return wrapped


async def _reply(send: Any, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": payload})


def _warm_up(engine: Engine) -> None:
    engine.embedder_or_none()
    try:
        engine.store()
    except EngramError as exc:  # reported again to whoever calls a tool
        logger.warning("default workspace not opened: %s", exc.message)


def already_running_message(paths: Paths) -> str:
    info = read_info(paths.data_dir)
    where = f" (pid {info.pid}, {info.url})" if info else ""
    return f"An Engram service is already running for {paths.data_dir}{where}."


def run_service(paths: Paths, settings: Settings) -> int:
    """Serve until SIGINT/SIGTERM. Returns the process exit status (0 also when one already runs)."""
    import uvicorn

    lock = InstanceLock(paths.data_dir)
    if not lock.acquire():
        print(already_running_message(paths), file=sys.stderr)
        return 0
    secret = token(paths.data_dir, create=True)
    assert secret is not None
    engine = Engine(paths, settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # Replies go out as several writes (headers, body, SSE events); without TCP_NODELAY each one after the
        # first waits for the client's delayed ACK (~40 ms on Linux). Accepted sockets inherit the option.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", settings.service.port))
        sock.listen(128)
        port = sock.getsockname()[1]
        app = build_server(EngineBackend(engine)).streamable_http_app(streamable_http_path=MCP_PATH, host="127.0.0.1")

        def shut_down() -> None:
            remove_info(paths.data_dir, os.getpid())
            engine.close()
            logger.info("service stopped")

        server = uvicorn.Server(uvicorn.Config(Guard(app, secret, shut_down), log_config=None, lifespan="on",
                                               timeout_graceful_shutdown=5))
        # Load the embedding model and open the default workspace while the first client connects.
        threading.Thread(target=_warm_up, args=(engine,), name="warm-up", daemon=True).start()
        info = ServiceInfo(port=port, pid=os.getpid(), version=version())
        write_info(paths.data_dir, info)
        logger.info("serving MCP on %s for %s", info.url, paths.data_dir)
        server.run(sockets=[sock])
        return 0
    except OSError as exc:
        print(f"engram: Service not started: cannot listen on 127.0.0.1:{settings.service.port} ({exc.strerror}). "
              "Choose another port with `engram config set service.port N` (0 picks a free one).", file=sys.stderr)
        return 1
    finally:
        remove_info(paths.data_dir, os.getpid())
        sock.close()
        engine.close()
        lock.release()
