"""How a client decides whether the process on a service's port is the data folder's service.

The client sends ``GET /health?challenge=C`` without the token; the real service answers with its pid
and ``proof(token, C)``. Only an answer that proves the current token (and names the pid that
``service.json`` announced) is trusted with the token and with tool arguments. Both clients — the
stdio launcher (async) and the command line (sync) — judge the answer here.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

from engram.core import EngramError

from .service_files import ServiceInfo, proves

HEALTH_PATH = "/health"


class Proof(enum.Enum):
    """What the process on a service's port showed when challenged."""

    PROVEN = "proven"  # it holds this data folder's current token
    SILENT = "silent"  # nothing answered (no process, or not HTTP)
    WRONG = "wrong"  # something answered without the proof


class TokenMismatch(EngramError):
    title = "Service token mismatch"


def judge(status: int, body: bytes, info: ServiceInfo, secret: str | None, challenge: str) -> Proof:
    """The verdict on the reply (``status``, ``body``) to ``GET /health?challenge=<challenge>``."""
    try:
        answer: Any = json.loads(body)
    except ValueError:
        return Proof.WRONG
    if (status == 200 and secret is not None and isinstance(answer, dict) and answer.get("pid") == info.pid
            and proves(secret, challenge, answer.get("proof"))):
        return Proof.PROVEN
    return Proof.WRONG


def mismatch(data_dir: Path, info: ServiceInfo) -> TokenMismatch:
    """The error for a service that holds the folder but does not answer for its token (or refused it)."""
    return TokenMismatch(
        f"The Engram service for {data_dir} (pid {info.pid}, port {info.port}) did not prove that it holds this "
        "data folder's token: service.token was replaced while it ran, or another program answers on its port. "
        "Nothing was sent to it. Stop it (quit the Engram app, or end that process): the next editor call starts a "
        "fresh service.")
