"""Reaching the service from a launcher: find it, start it when it is not answering, call its tools.

Each call is one stateless MCP request (protocol 2026-07-28) over a shared HTTP connection pool,
so nothing is lost when the service restarts between calls. A service that dies mid-call gives
that call an error; the next call starts a new service.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2

from engram.core import Paths

from .errors import ServiceUnavailable, remote_tool_error
from .handshake import mismatch
from .locator import Search, locate_async
from .service_files import ServiceInfo

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


class RemoteBackend:
    """A ``ToolBackend`` that forwards calls to the data folder's service, starting it when needed.

    The service is found, proven and waited for by ``locator``: the token goes only to a process that
    first proved it holds it, as a ``service.json`` left by a service that died may name a port another
    program took since.
    """

    def __init__(self, paths: Paths, *, start_timeout: float = 60.0) -> None:
        self.paths = paths
        self.start_timeout = start_timeout
        self._http: httpx2.AsyncClient | None = None
        self._probe: httpx2.AsyncClient | None = None
        self._secret = ""
        self._refused = False  # the service answered 401 to the token in use
        self._lock = anyio.Lock()

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
            if self._probe is None:
                # No token, no proxy from the environment: the service is on loopback.
                self._probe = httpx2.AsyncClient(trust_env=False)
            found = await locate_async(Search(self.paths, patience=self.start_timeout, starts=True), self._probe)
            assert found is not None, "a search that starts a service never finds none"
            return await self._trust(found.info, found.secret)

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
