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
import re
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Generator, Iterable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qs

import anyio
import uvicorn

from engram.core import Engine, EngramError, Paths, Settings

from .direct import DIRECT_PATH, DirectCalls
from .errors import ServiceUnavailable
from .handshake import HEALTH_PATH
from .server import EngineBackend, build_server, version
from .service_files import (
    CHALLENGE_PATTERN,
    MCP_PATH,
    InstanceLock,
    ServiceInfo,
    clear_info,
    new_token,
    proof,
    read_info,
    remove_info,
    write_info,
)

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


ONCE_ONLY = ("host", "origin", "authorization")
_AUTHORITY = re.compile(r"(\[::1\]|[A-Za-z0-9.]+)(?::([0-9]{1,5}))?")
_ORIGIN = re.compile(r"(?:http|https)://(.*)", re.IGNORECASE | re.DOTALL)


def _is_loopback_authority(value: str) -> bool:
    """Whether ``value`` is exactly ``host[:port]``: a ``LOOPBACK`` host (IPv6 in brackets), a port 1–65535.

    Anything more (user-info, a path, query or fragment, spaces) is refused rather than parsed: the
    MCP SDK, a proxy or a browser could read such a value differently than this check does.
    """
    match = _AUTHORITY.fullmatch(value)
    if match is None:
        return False
    host, port = match.groups()
    return host.lower().strip("[]") in LOOPBACK and (port is None or 1 <= int(port) <= 65535)


def _is_loopback_origin(value: str) -> bool:
    """Whether ``value`` is exactly ``http(s)://host[:port]`` with a loopback host; ``null`` and paths are not."""
    match = _ORIGIN.fullmatch(value)
    return match is not None and _is_loopback_authority(match[1])


def _request_headers(raw: Iterable[tuple[bytes, bytes]]) -> tuple[dict[str, str], str | None]:
    """The headers by lower-case name, and the first of ``ONCE_ONLY`` sent more than once (as ``Host``…) or None.

    Each name keeps its first value, the one the MCP SDK behind the guard reads.
    """
    headers: dict[str, str] = {}
    repeated: str | None = None
    for key, value in raw:
        name = key.decode("latin-1").lower()
        if name in headers and name in ONCE_ONLY and repeated is None:
            repeated = name.title()
        headers.setdefault(name, value.decode("latin-1"))
    return headers, repeated


class Guard:
    """ASGI middleware: bearer token, loopback Host and Origin, each header once; serves ``/health`` itself.

    ``/health?challenge=C`` needs no token: it answers with ``proof(token, C)``, so a client can tell the
    real service from a program that took its port before it sends the token (see ``service_files``).
    """

    def __init__(self, app: ASGIApp, secret: str, on_shutdown: Callable[[], None], direct: ASGIApp | None = None) -> None:
        self.app = app
        self._direct = direct
        self._secret = secret
        self._expected = f"Bearer {secret}".encode()
        self._on_shutdown = on_shutdown

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._shutdown_first(send))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers, repeated = _request_headers(scope.get("headers", []))
        if repeated is not None:  # the guard and the endpoint behind it could each read a different one
            await _reply(send, 400, {"error": f"the {repeated} header was sent more than once; send it once"})
            return
        if not _is_loopback_authority(headers.get("host", "")):
            await _reply(send, 421, {"error": "Host must be a loopback address"})
            return
        origin = headers.get("origin")
        if origin is not None and not _is_loopback_origin(origin):
            await _reply(send, 403, {"error": "Origin must be a loopback address"})
            return
        if scope["path"] == HEALTH_PATH:
            # Answered without the token: a client proves who listens here before it sends the token.
            await self._health(scope, send)
            return
        if not hmac.compare_digest(headers.get("authorization", "").encode("latin-1"), self._expected):
            await _reply(send, 401, {"error": "missing or wrong bearer token (see service.token in the data folder)"},
                         extra=[(b"www-authenticate", b"Bearer")])
            return
        if scope["path"] == DIRECT_PATH and self._direct is not None:
            await self._direct(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _health(self, scope: Scope, send: Any) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        challenge = query.get("challenge", [""])
        if len(challenge) != 1 or not re.fullmatch(CHALLENGE_PATTERN, challenge[0]):
            await _reply(send, 400, {"error": "send one challenge: ?challenge= with 22-128 URL-safe characters"})
            return
        await _reply(send, 200, {"status": "ok", "pid": os.getpid(), "version": version(),
                                 "proof": proof(self._secret, challenge[0])})


    def _shutdown_first(self, send: Any) -> Any:
        # uvicorn re-raises SIGTERM/SIGINT once it has shut down, which ends the process before code
        # after server.run() could clean up; so the cleanup runs as the last step of the lifespan.
        async def wrapped(message: Any) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await anyio.to_thread.run_sync(self._on_shutdown)
            await send(message)

        return wrapped


async def _reply(send: Any, status: int, body: dict[str, Any], extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": payload})


#: How long ``Service.close`` waits for the warm-up. A model load cannot be interrupted; one that ends
#: later is closed by the engine at once, so waiting longer only delays the shutdown.
WARM_UP_WAIT_S = 10.0


def _warm_up(engine: Engine) -> None:
    """Load the embedding model and open the default workspace ahead of the first tool call.

    Ends at the first refusal: a closed engine refuses both (and frees a model whose load ends after close).
    """
    try:
        engine.embedder_or_none()
        engine.open_workspace()
    except EngramError as exc:  # reported again to whoever calls a tool
        logger.warning("default workspace not opened: %s", exc.message)


def already_running_message(paths: Paths) -> str:
    info = read_info(paths.data_dir)
    where = f" (pid {info.pid}, {info.url})" if info else ""
    return f"An Engram service is already running for {paths.data_dir}{where}."


class ServiceRunning(EngramError):
    title = "Service already running"


NOT_STARTED = "Service not started"  # the title of the ``ServiceUnavailable`` that ``Service.open`` raises


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
        self._warming: threading.Thread | None = None
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
            # Whatever service.json is here was left by a service that died (it held the lock): withdraw it
            # before the new token exists, so no client pairs the new token with the old port.
            try:
                clear_info(self.paths.data_dir)
                secret = new_token(self.paths.data_dir)
            except OSError as exc:
                raise ServiceUnavailable(f"Cannot write the service token into {self.paths.data_dir} "
                                         f"({exc.strerror}); check that the folder is yours and writable.",
                                         title=NOT_STARTED) from exc
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
                    "with `engram config set service.port N` (0 picks a free one).", title=NOT_STARTED) from exc
            sock.listen(128)
            if self._engine is None:
                self._engine = Engine(self.paths, self.settings)
            app = build_server(EngineBackend(self._engine)).streamable_http_app(streamable_http_path=MCP_PATH,
                                                                               host="127.0.0.1")
            guard = Guard(app, secret, self.close, direct=DirectCalls(self._engine))
            self._server = _Server(uvicorn.Config(guard, log_config=None, lifespan="on",
                                                  timeout_graceful_shutdown=5),
                                   handle_signals=self._handle_signals)
            # Load the embedding model and open the default workspace while the first client connects.
            # Tracked: ``close`` waits for it, so that it never works on an engine closed under it.
            self._warming = threading.Thread(target=_warm_up, args=(self._engine,), name="warm-up", daemon=True)
            self._warming.start()
            # The editors' hooks leave capture jobs in the data folder; carry them out while serving.
            self._engine.start_capture()
            self._engine.start_watching()  # ingested folders kept current
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
        """Withdraw ``service.json``, close the socket and the owned engine, end the warm-up, release the lock.

        Safe to call twice. Waits up to ``WARM_UP_WAIT_S`` for the warm-up (the engine, closed first when
        owned, refuses what the warm-up still asks for and frees a model whose load ends late).
        """
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
            warming, self._warming = self._warming, None
            if warming is not None:
                warming.join(WARM_UP_WAIT_S)
                if warming.is_alive():
                    logger.warning("the warm-up did not end within %.0f s; the engine frees what it loads",
                                   WARM_UP_WAIT_S)
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
