"""The capture inbox: where an editor's hook leaves work for the service, in a few milliseconds.

A hook must return fast and never fail the editor, so it does not capture anything itself: it writes one small
JSON file (a ``Job``: which editor, which event, the session and its transcript) into
``<data>/capture/inbox/`` and returns. The service (or the tray app) takes the jobs in the order they were
written, captures the transcript's new turns and removes each job when it is done; a job left by a hook
while no service ran waits there for the next one. A job is written to a temporary name and renamed, so the
service never reads half of one. This module imports only the standard library and ``fileio``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..fileio import atomic_write_bytes

INBOX = ("capture", "inbox")
#: A job file larger than this is not a hook's (a job holds a few paths and ids).
_MAX_JOB_BYTES = 64_000


@dataclass(frozen=True)
class Job:
    """One hook's request: capture ``transcript``'s new turns (``event`` says why: ``Stop``, ``SessionEnd`` …)."""

    editor: str
    event: str
    session_id: str
    transcript: str
    cwd: str
    #: When the hook ran (seconds since the epoch).
    at: float


def inbox_dir(data_dir: Path) -> Path:
    return data_dir.joinpath(*INBOX)


def post(data_dir: Path, job: Job) -> Path:
    """Leave ``job`` in the inbox (atomically: written under a temporary name, then renamed); its path.

    Raises:
        OSError: the inbox cannot be created or written.
    """
    folder = inbox_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Named by time first, so the jobs sort in the order the hooks ran.
    path = folder / f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.json"
    atomic_write_bytes(path, json.dumps(asdict(job)).encode("utf-8"))
    return path


def _job(raw: bytes) -> Job | None:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    text = ("editor", "event", "session_id", "transcript", "cwd")
    if not all(isinstance(data.get(k), str) for k in text) or not isinstance(data.get("at"), (int, float)):
        return None
    return Job(**{k: data[k] for k in text}, at=float(data["at"]))


def pending(data_dir: Path) -> list[tuple[Path, Job | None]]:
    """The inbox's jobs, oldest first; ``None`` for a file that is not a job (it is to be removed, and logged)."""
    folder = inbox_dir(data_dir)
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
    except FileNotFoundError:
        return []
    jobs: list[tuple[Path, Job | None]] = []
    for path in names:
        try:
            raw = path.read_bytes() if path.stat().st_size <= _MAX_JOB_BYTES else b""
        except FileNotFoundError:  # taken by another reader
            continue
        jobs.append((path, _job(raw)))
    return jobs


def done(path: Path) -> None:
    """Remove a job that was carried out (or refused); one already gone is fine."""
    path.unlink(missing_ok=True)
