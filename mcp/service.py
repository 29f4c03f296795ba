"""The headless service: one engine, served as MCP over Streamable HTTP on a loopback port.

Only requests that carry the data folder's bearer token and a loopback Host (and, when present,
a loopback Origin) get through; everything else is refused before the MCP endpoint sees it. One
service runs per data folder (an OS lock); a second start reports where the first one is.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import uvicorn

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


class ServiceRunning(EngramError):
    title = "Service already running"


class ServiceUnavailable(EngramError):
    title = "Service not started"


class _Server(uvicorn.Server):
    """uvicorn's server, optionally leaving SIGINT/SIGTERM to the host (the tray app handles them itself)."""

    def __init__(self, config: uvicorn.Config, *, handle_signals: bool) -> None:
        super().__init__(config)
        self._handle_signals = handle_signals

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if self._handle_signals:
            with super().capture_signals():
                yield
        else:
            yield


class Service:
    """One engine served as MCP over Streamable HTTP on a loopback port.

    ``engram service`` runs it on its own asyncio loop (``run_service``); the tray app runs the same
    class on the Qt event loop through qasync (``await service.serve()``). ``open`` takes the data
    folder's instance lock, binds the port and writes ``service.json``; ``serve`` answers until
    ``stop``; ``close`` undoes ``open`` (idempotent). The engine is closed by ``close`` only when the
    service created it.
    """

    def __init__(self, paths: Paths, settings: Settings, *, engine: Engine | None = None,
                 handle_signals: bool = True) -> None:
        self.paths = paths
        self.settings = settings
        self._engine = engine
        self._owns_engine = engine is None
        self._handle_signals = handle_signals
        self._lock: InstanceLock | None = None
        self._sock: socket.socket | None = None
        self._server: _Server | None = None
        self._closing = threading.Lock()
        self.info: ServiceInfo | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("the service is not open")
        return self._engine

    def open(self) -> ServiceInfo:
        """Take the instance lock, bind the port and publish ``service.json``.

        Raises:
            ServiceRunning: another process serves this data folder (the message says where).
            ServiceUnavailable: the port cannot be bound (the message says how to choose another).
        """
        lock = InstanceLock(self.paths.data_dir)
        if not lock.acquire():
            lock.release()
            raise ServiceRunning(already_running_message(self.paths))
        self._lock = lock
        try:
            secret = token(self.paths.data_dir, create=True)
            assert secret is not None
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._sock = sock
            # Replies go out as several writes (headers, body, SSE events); without TCP_NODELAY each one after
            # the first waits for the client's delayed ACK (~40 ms on Linux). Accepted sockets inherit it.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                sock.bind(("127.0.0.1", self.settings.service.port))
            except OSError as exc:
                raise ServiceUnavailable(
                    f"Cannot listen on 127.0.0.1:{self.settings.service.port} ({exc.strerror}). Choose another port "
                    "with `engram config set service.port N` (0 picks a free one).") from exc
            sock.listen(128)
            if self._engine is None:
                self._engine = Engine(self.paths, self.settings)
            app = build_server(EngineBackend(self._engine)).streamable_http_app(streamable_http_path=MCP_PATH,
                                                                               host="127.0.0.1")
            self._server = _Server(uvicorn.Config(Guard(app, secret, self.close), log_config=None, lifespan="on",
                                                  timeout_graceful_shutdown=5),
                                   handle_signals=self._handle_signals)
            # Load the embedding model and open the default workspace while the first client connects.
            threading.Thread(target=_warm_up, args=(self._engine,), name="warm-up", daemon=True).start()
            self.info = ServiceInfo(port=sock.getsockname()[1], pid=os.getpid(), version=version())
            write_info(self.paths.data_dir, self.info)
        except BaseException:
            self.close()
            raise
        logger.info("serving MCP on %s for %s", self.info.url, self.paths.data_dir)
        return self.info

    async def serve(self) -> None:
        """Answer MCP requests until ``stop`` (or, with ``handle_signals``, SIGINT/SIGTERM); then ``close``."""
        if self._server is None or self._sock is None:
            raise RuntimeError("open the service before serving it")
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            self.close()

    def run(self) -> None:
        """``serve`` on a new asyncio loop of its own (the headless service)."""
        if self._server is None or self._sock is None:
            raise RuntimeError("open the service before serving it")
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self.close()

    def stop(self) -> None:
        """Ask ``serve`` to finish its requests and return (thread-safe, returns at once)."""
        if self._server is not None:
            self._server.should_exit = True

    def close(self) -> None:
        """Withdraw ``service.json``, close the socket, the owned engine and the lock. Safe to call twice."""
        with self._closing:
            if self.info is not None:
                remove_info(self.paths.data_dir, self.info.pid)
                logger.info("service stopped")
                self.info = None
            if self._sock is not None:
                self._sock.close()
                self._sock = None
            if self._owns_engine and self._engine is not None:
                self._engine.close()
            if self._lock is not None:
                self._lock.release()
                self._lock = None


def run_service(paths: Paths, settings: Settings) -> int:
    """Serve until SIGINT/SIGTERM. Returns the process exit status (0 also when one already runs)."""
    service = Service(paths, settings)
    try:
        service.open()
    except ServiceRunning as exc:
        print(exc.message, file=sys.stderr)
        return 0
    except ServiceUnavailable as exc:
        print(f"engram: {exc.title}: {exc.message}", file=sys.stderr)
        return 1
    service.run()
    return 0
