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

from engram.core import EngramError, Paths

from .service_files import ServiceInfo, read_info, token

logger = logging.getLogger(__name__)

MODERN_PROTOCOL = "2026-07-28"
_ERROR_PREFIX = "Error executing tool "


class ServiceUnavailable(EngramError):
    title = "Engram service unavailable"


class RemoteToolError(EngramError):
    """A tool error reported by the service; its message already carries its title."""

    title = ""


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
    """A ``ToolBackend`` that forwards calls to the data folder's service, starting it when needed."""

    def __init__(self, paths: Paths, *, start_timeout: float = 60.0) -> None:
        self.paths = paths
        self.start_timeout = start_timeout
        self._http: httpx2.AsyncClient | None = None
        self._secret = ""
        self._info: ServiceInfo | None = None
        self._lock = anyio.Lock()

    async def _client(self) -> httpx2.AsyncClient:
        """A pooled HTTP client carrying the current token (the first service start creates it)."""
        secret = token(self.paths.data_dir, create=False) or ""
        if self._http is None or self._secret != secret:
            if self._http is not None:
                await self._http.aclose()
            self._http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"},
                                            timeout=httpx2.Timeout(30.0, read=600.0))
            self._secret = secret
        return self._http

    async def _healthy(self, info: ServiceInfo) -> bool:
        try:
            reply = await (await self._client()).get(info.base_url + "/health", timeout=2.0)
            return reply.status_code == 200 and reply.json().get("pid") == info.pid
        except (httpx2.HTTPError, ValueError):
            return False

    async def ensure_service(self) -> ServiceInfo:
        """The running service, started (detached) and waited for when none answers.

        Raises:
            ServiceUnavailable: it did not answer within ``start_timeout`` seconds.
        """
        async with self._lock:
            if self._info is not None and await self._healthy(self._info):
                return self._info
            info = read_info(self.paths.data_dir)
            if info is None or not await self._healthy(info):
                start_detached(self.paths)
                deadline = time.monotonic() + self.start_timeout
                while info is None or not await self._healthy(info):
                    if time.monotonic() > deadline:
                        raise ServiceUnavailable(
                            f"The Engram service did not answer within {self.start_timeout:.0f} s. Its log is "
                            f"{self.paths.log_dir / 'service.out'}; `engram service` in a terminal shows the error.")
                    await anyio.sleep(0.05)
                    info = read_info(self.paths.data_dir)
            self._info = info
            return info

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        info = await self.ensure_service()
        try:
            http = await self._client()
            async with Client(streamable_http_client(info.url, http_client=http, terminate_on_close=False),
                              mode=MODERN_PROTOCOL) as client:
                result = await client.call_tool(tool, arguments)
        except Exception as exc:
            failure = _transport_failure(exc)
            if failure is None:
                raise
            self._info = None
            raise ServiceUnavailable(f"The Engram service stopped while answering ({failure}). "
                                     "Call again: the next call starts it anew.") from None
        text = "\n".join(c.text for c in result.content if c.type == "text")
        if result.is_error:
            raise RemoteToolError(text.removeprefix(f"{_ERROR_PREFIX}{tool}: "))
        return text

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
