"""The MCP service inside the app: opened off the Qt thread, served on the Qt (qasync) loop, stopped on quit.

It is the same ``Service`` class as ``engram service`` on the app's own engine, so the editors and the
window share one engine, one model copy and one writer. Opening takes the instance lock, binds the port
and writes the token: file and socket work, done on a worker thread. When another process already serves
this data folder, the app works beside it (the editors are served by that one) and says so.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, Signal

from engram.core import Engine, Paths
from engram.mcp.errors import ServiceUnavailable
from engram.mcp.service import Service, ServiceRunning

logger = logging.getLogger(__name__)

STOP_TIMEOUT_S = 10.0


class ServiceController(QObject):
    """Starts and stops the app's MCP service; ``note`` says in a sentence where editors are served."""

    changed = Signal(str)  # the note, once the service serves or could not open
    failed = Signal(object)  # an EngramError: the service could not open here

    def __init__(self, paths: Paths, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.paths = paths
        self.engine = engine
        self.service: Service | None = None
        self.note = "Service not started."
        self._opening: asyncio.Task[None] | None = None
        self._serving: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        """Open the service and serve it on the running loop; the task returned ends once it serves, or once
        it could not open (``failed`` then carries why)."""
        self._opening = asyncio.ensure_future(self._open())
        return self._opening

    async def _open(self) -> None:
        service = Service(self.paths, self.engine.settings, engine=self.engine, handle_signals=False)
        try:
            info = await asyncio.to_thread(service.open)
        except ServiceRunning as exc:
            self.note = f"{exc.message} Your AI tools are served by it; this window works on the same data."
            logger.info(self.note)
        except ServiceUnavailable as exc:
            self.note = f"{exc.title}: {exc.message}"
            self.failed.emit(exc)
        else:
            self.service = service
            self._serving = asyncio.ensure_future(service.serve())
            self.note = f"Serving editors at {info.url}"
        self.changed.emit(self.note)

    async def stop(self) -> None:
        """Let a service still opening finish, then stop serving and close it (each wait bounded)."""
        if self._opening is not None and not self._opening.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._opening), STOP_TIMEOUT_S)
            except (TimeoutError, asyncio.CancelledError):
                logger.warning("the service did not open within %.0f s", STOP_TIMEOUT_S)
        if self.service is None:
            return
        self.service.stop()
        if self._serving is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._serving), STOP_TIMEOUT_S)
            except (TimeoutError, asyncio.CancelledError):
                logger.warning("the service did not stop within %.0f s", STOP_TIMEOUT_S)
            except Exception:  # the service's own failure: logged, the app still quits
                logger.exception("the service stopped with an error")
        self.service.close()
