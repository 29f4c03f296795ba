"""One tray app per data folder: a second start hands over to the first one and exits.

A local socket (``QLocalServer``) named after the data folder: the first app listens on it; a later
start connects, asks the first one to show its window, and quits. A stale socket file left by a
crashed app is removed when nothing answers on it.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtNetwork import QLocalServer, QLocalSocket

logger = logging.getLogger(__name__)
SHOW = b"show\n"
_WAIT_MS = 1500


def instance_name(data_dir: Path) -> str:
    """The socket name for ``data_dir`` (per user and folder; short enough for every OS)."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"engram-tray-{digest}"


def _connect(name: str) -> QLocalSocket | None:
    sock = QLocalSocket()
    sock.connectToServer(name)
    return sock if sock.waitForConnected(_WAIT_MS) else None


def ask_running_instance(data_dir: Path) -> bool:
    """Ask a running tray app of ``data_dir`` to show its window. ``True`` when one answered."""
    sock = _connect(instance_name(data_dir))
    if sock is None:
        return False
    sock.write(SHOW)
    sock.flush()
    sock.waitForBytesWritten(_WAIT_MS)
    sock.disconnectFromServer()
    return True


class InstanceServer:
    """Listens for later starts of the app and calls ``on_show`` when one asks."""

    def __init__(self, data_dir: Path, on_show: Callable[[], None]) -> None:
        self._server = QLocalServer()
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._on_show = on_show
        self._server.newConnection.connect(self._accept)
        self.name = instance_name(data_dir)

    def listen(self) -> bool:
        """Start listening; ``False`` when another live app holds the name."""
        # Ask first: with UserAccessOption, Qt on Unix binds in a private folder and renames the socket
        # over the old path, so listen() alone would silently take the name from a live app.
        live = _connect(self.name)
        if live is not None:
            live.abort()
            return False
        if sys.platform != "win32":
            QLocalServer.removeServer(self.name)  # a crashed app's socket file: nobody answers on it
        return self._server.listen(self.name)

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            conn = self._server.nextPendingConnection()
            conn.readyRead.connect(lambda c=conn: self._read(c))
            conn.disconnected.connect(conn.deleteLater)

    def _read(self, conn: QLocalSocket) -> None:
        if bytes(conn.readAll().data()).startswith(SHOW.strip()):
            logger.info("a second start asked for the window")
            self._on_show()

