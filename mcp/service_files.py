"""The files a running service leaves in the data folder: where it listens, its token, its lock.

- ``service.json``: port, pid, version and URL of the running service (removed when it stops).
- ``service.token``: a random bearer token, created once and kept, readable only by the user
  (mode 0600 on POSIX; on Windows the per-user data folder is private to the user).
- ``service.lock``: held (an OS file lock) for the service's lifetime: one service per data folder.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from engram.core.fileio import atomic_write_bytes

INFO_FILE = "service.json"
TOKEN_FILE = "service.token"
LOCK_FILE = "service.lock"
MCP_PATH = "/mcp"


@dataclass(frozen=True)
class ServiceInfo:
    port: int
    pid: int
    version: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.base_url + MCP_PATH


def _private_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if os.name == "posix":
        os.chmod(folder, 0o700)


def write_info(data_dir: Path, info: ServiceInfo) -> None:
    _private_folder(data_dir)
    payload = {**asdict(info), "url": info.url}
    atomic_write_bytes(data_dir / INFO_FILE, json.dumps(payload, indent=2).encode(), mode=0o600)


def read_info(data_dir: Path) -> ServiceInfo | None:
    """The service that last announced itself here, or ``None`` (it may have died since)."""
    try:
        raw = json.loads((data_dir / INFO_FILE).read_text(encoding="utf-8"))
        return ServiceInfo(port=int(raw["port"]), pid=int(raw["pid"]), version=str(raw["version"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove_info(data_dir: Path, pid: int) -> None:
    info = read_info(data_dir)
    if info is not None and info.pid == pid:
        (data_dir / INFO_FILE).unlink(missing_ok=True)


def token(data_dir: Path, *, create: bool) -> str | None:
    """The bearer token of this data folder; with ``create``, made (once) when missing."""
    path = data_dir / TOKEN_FILE
    try:
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    except OSError:
        pass
    if not create:
        return None
    _private_folder(data_dir)
    value = secrets.token_urlsafe(32)
    atomic_write_bytes(path, value.encode(), mode=0o600)
    return value


class InstanceLock:
    """An exclusive OS lock on ``service.lock``, held until ``release`` (or process exit)."""

    def __init__(self, data_dir: Path) -> None:
        _private_folder(data_dir)
        self._handle: IO[bytes] | None = open(data_dir / LOCK_FILE, "a+b")  # noqa: SIM115 (held for life)

    def acquire(self) -> bool:
        """Take the lock without waiting; ``False`` when another process holds it."""
        assert self._handle is not None
        try:
            if sys.platform == "win32":
                import msvcrt

                self._handle.seek(0)
                msvcrt.locking(self._handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file drops the lock on every platform
            self._handle = None
