"""``engram mcp``: what editors start. MCP over stdio, answered by the shared service.

The launcher serves the tool list itself (it is the same code as the service's), so ``initialize``
and ``tools/list`` answer without waiting for anything, while the service is found or started in
the background. Each tool call is forwarded to the service. ``--standalone`` runs the engine in
this process instead. Stdout carries protocol messages only.
"""

from __future__ import annotations

import logging

import anyio

from engram.core import Engine, Paths, Settings

from .remote import RemoteBackend
from .server import EngineBackend, build_server

logger = logging.getLogger(__name__)


async def _warm_up(backend: RemoteBackend) -> None:
    try:
        await backend.ensure_service()
    except Exception:  # top-level of a background task: the first call reports the failure to the client
        logger.exception("could not start the Engram service")


async def serve_stdio(paths: Paths, settings: Settings, *, standalone: bool) -> None:
    """Serve MCP on stdin/stdout until the client closes it."""
    if standalone:
        with Engine(paths, settings) as engine:
            await build_server(EngineBackend(engine), stdio=True).run_stdio_async()
        return
    backend = RemoteBackend(paths, start_timeout=settings.service.start_timeout_sec)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_warm_up, backend)
            await build_server(backend, stdio=True).run_stdio_async()
            tasks.cancel_scope.cancel()
    finally:
        await backend.aclose()


def run_launcher(paths: Paths, settings: Settings, *, standalone: bool) -> int:
    anyio.run(lambda: serve_stdio(paths, settings, standalone=standalone))
    return 0
