"""Reaching the service from a launcher: find it, start it when it is not answering, call its tools.

Each call is one stateless MCP request (protocol 2026-07-28) over a shared HTTP connection pool,
so nothing is lost when the service restarts between calls. A service that dies mid-call gives
that call an error; the next call starts a new service.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx2

from engram.core import Paths

from .errors import ServiceUnavailable, remote_tool_error
from .handshake import HEALTH_PATH, Proof, judge, mismatch
from .service_files import ServiceInfo, lock_held, new_challenge, read_info, read_token

logger = logging.getLogger(__name__)

MODERN_PROTOCOL = "2026-07-28"

_TRANSPORT_ERRORS = (httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)


def _transport_failure(exc: BaseException) -> str | None:
    """The name of the connection failure inside ``exc`` (task groups wrap it), or ``None``."""
    if isinstance(exc, _TRANSPORT_ERRORS):
        return exc.__class__.__name__
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _transport_failure(inner)) is not None:
                return found
    return None


def service_command() -> list[str]:
    """How to start ``engram service`` from this installation (also from a frozen bundle)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "service"]
    return [sys.executable, "-m", "engram.app", "service"]


def start_detached(paths: Paths) -> None:
    """Start a headless service for ``paths`` that outlives this process; its output goes to the log folder."""
    paths.log_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir),
           "ENGRAM_LOG_DIR": str(paths.log_dir)}
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = (subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
                                   | subprocess.CREATE_NO_WINDOW)
    else:
        kwargs["start_new_session"] = True
    with open(paths.log_dir / "service.out", "ab") as out:
        subprocess.Popen(service_command(), stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                         close_fds=True, **kwargs)
    logger.info("started a headless service for %s", paths.data_dir)


class RemoteBackend:
    """A ``ToolBackend`` that forwards calls to the data folder's service, starting it when needed.

    The token goes only to a process that first proved it holds it (``handshake``): a
    ``service.json`` left by a service that died may name a port another program took since.
    """

    def __init__(self, paths: Paths, *, start_timeout: float = 60.0) -> None:
        self.paths = paths
        self.start_timeout = start_timeout
        self._http: httpx2.AsyncClient | None = None
        self._probe: httpx2.AsyncClient | None = None
        self._secret = ""
        self._refused = False  # the service answered 401 to the token in use
        self._lock = anyio.Lock()

    async def _challenge(self, info: ServiceInfo, secret: str | None) -> Proof:
        """Challenge the process on ``info``'s port, without the token; PROVEN only if it answers for ``secret``."""
        if self._probe is None:
            # No proxy from the environment: the service is on loopback, and the token must not travel elsewhere.
            self._probe = httpx2.AsyncClient(timeout=httpx2.Timeout(2.0), trust_env=False)
        challenge = new_challenge()
        try:
            reply = await self._probe.get(info.base_url + HEALTH_PATH, params={"challenge": challenge})
        except httpx2.HTTPError:
            return Proof.SILENT
        return judge(reply.status_code, reply.content, info, secret, challenge)

    async def _trust(self, info: ServiceInfo, secret: str) -> ServiceInfo:
        """Use ``info``'s service, with ``secret`` as the bearer token from now on."""
        if self._http is None or self._secret != secret:
            if self._http is not None:
                await self._http.aclose()
            self._http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"},
                                            timeout=httpx2.Timeout(30.0, read=600.0), trust_env=False,
                                            event_hooks={"response": [self._note_refusal]})
            self._secret = secret
        self._refused = False  # the service just proved it holds this token: an earlier 401 is history
        return info

    async def _note_refusal(self, response: httpx2.Response) -> None:
        # The MCP client turns an HTTP error into a generic JSON-RPC error; the status is noted here.
        if response.status_code == 401:
            self._refused = True

    async def ensure_service(self) -> ServiceInfo:
        """The running service, proven, or one started (detached) and waited for when none runs.

        Raises:
            TokenMismatch: a service runs for this data folder but cannot prove it holds its token.
            ServiceUnavailable: no service answered within ``start_timeout`` seconds.
        """
        async with self._lock:
            data = self.paths.data_dir
            deadline = time.monotonic() + self.start_timeout
            started = False
            wrong_since: float | None = None
            while True:
                info, secret = read_info(data), read_token(data)
                proof = await self._challenge(info, secret) if info is not None else Proof.SILENT
                if proof is Proof.PROVEN and info is not None and secret is not None:
                    return await self._trust(info, secret)
                running = lock_held(data)
                if proof is Proof.WRONG and info is not None and running:
                    # A service holds the folder but does not answer for its token. Give one that is just
                    # starting (token written, service.json not yet) a moment, then say so at once.
                    wrong_since = wrong_since or time.monotonic()
                    if time.monotonic() - wrong_since > 2.0:
                        raise mismatch(self.paths.data_dir, info)
                elif not running and not started:
                    start_detached(self.paths)
                    started = True
                if time.monotonic() > deadline:
                    raise ServiceUnavailable(
                        f"The Engram service did not answer within {self.start_timeout:.0f} s. Its log is "
                        f"{self.paths.log_dir / 'service.out'}; `engram service` in a terminal shows the error.")
                await anyio.sleep(0.05)

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        info = await self.ensure_service()
        assert self._http is not None
        try:
            async with Client(streamable_http_client(info.url, http_client=self._http, terminate_on_close=False),
                              mode=MODERN_PROTOCOL) as client:
                result = await client.call_tool(tool, arguments)
        except Exception as exc:
            if self._refused:
                raise mismatch(self.paths.data_dir, info) from None
            failure = _transport_failure(exc)
            if failure is None:
                raise
            raise ServiceUnavailable(f"The Engram service stopped while answering ({failure}). "
                                     "Call again: the next call starts it anew.") from None
        if result.is_error:
            raise remote_tool_error(result)
        return "\n".join(c.text for c in result.content if c.type == "text")

    async def aclose(self) -> None:
        for client in (self._http, self._probe):
            if client is not None:
                await client.aclose()
        self._http = self._probe = None
