"""The files a running service leaves in the data folder: where it listens, its token, its lock.

- ``service.json``: port, pid, version and URL of the running service (removed when it stops; one left
  by a service that died is removed by the next one before it writes anything else).
- ``service.token``: a random bearer token, new at every service start, readable only by the user
  (mode 0600 on POSIX; on Windows the per-user data folder is private to the user). A token that
  leaked stops working when the service restarts.
- ``service.lock``: held (an OS file lock) for the service's lifetime: one service per data folder.

Before a client sends the token anywhere, the process listening on the port proves that it holds it:
the client sends a random challenge and checks the answer against ``proof(token, challenge)``. A
stale ``service.json`` whose port another program took gets no token and no tool arguments.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from engram.core.fileio import atomic_write_bytes
from engram.core.privacy import private_folder

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


def write_info(data_dir: Path, info: ServiceInfo) -> None:
    private_folder(data_dir)
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


def clear_info(data_dir: Path) -> None:
    """Remove ``service.json`` whoever wrote it (only the holder of the instance lock may: any other is dead)."""
    (data_dir / INFO_FILE).unlink(missing_ok=True)


def read_token(data_dir: Path) -> str | None:
    """The bearer token of the service that last started here, or ``None``."""
    try:
        return (data_dir / TOKEN_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def new_token(data_dir: Path) -> str:
    """Write a fresh random bearer token (0600) and return it; the previous one stops being valid.

    Raises:
        OSError: the data folder cannot be written.
    """
    private_folder(data_dir)
    value = secrets.token_urlsafe(32)
    atomic_write_bytes(data_dir / TOKEN_FILE, value.encode(), mode=0o600)
    return value


#: Domain separation: an answer to a challenge is good for nothing but this proof.
_PROOF_CONTEXT = b"engram-service-proof-v1\x00"
CHALLENGE_PATTERN = r"[A-Za-z0-9_-]{22,128}"


def new_challenge() -> str:
    return secrets.token_urlsafe(24)


def proof(secret: str, challenge: str) -> str:
    """What a service holding ``secret`` answers to ``challenge`` (hex HMAC-SHA256)."""
    return hmac.new(secret.encode(), _PROOF_CONTEXT + challenge.encode(), hashlib.sha256).hexdigest()


def proves(secret: str, challenge: str, answer: object) -> bool:
    """Whether ``answer`` is the proof of ``secret`` for ``challenge`` (constant-time)."""
    return isinstance(answer, str) and hmac.compare_digest(answer.encode(), proof(secret, challenge).encode())


def lock_held(data_dir: Path) -> bool:
    """Whether a live process holds this data folder's instance lock (a service is running or starting).

    Probes with a shared lock for an instant; a service starting in that instant retries its lock.
    """
    path = data_dir / LOCK_FILE
    try:
        handle = open(path, "rb")
    except OSError:
        return False
    try:
        if sys.platform == "win32":
            import msvcrt

            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBRLCK, 1)
            except OSError:
                return True
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
            return False
        import fcntl

        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False
    finally:
        handle.close()


class InstanceLock:
    """An exclusive OS lock on ``service.lock``, held until ``release`` (or process exit)."""

    def __init__(self, data_dir: Path) -> None:
        private_folder(data_dir)
        self._handle: IO[bytes] | None = open(data_dir / LOCK_FILE, "a+b")

    def acquire(self, patience: float = 1.0) -> bool:
        """Take the lock, retrying for ``patience`` seconds; ``False`` when another process holds it.

        The retries cover a client's instant probe (``lock_held``), never a live service.
        """
        assert self._handle is not None
        deadline = time.monotonic() + patience
        while True:
            try:
                if sys.platform == "win32":
                    import msvcrt

                    self._handle.seek(0)
                    msvcrt.locking(self._handle.fileno(), msvcrt.LK_NBLCK, 1)
                else:
                    import fcntl

                    fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.05)

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file drops the lock on every platform
            self._handle = None
