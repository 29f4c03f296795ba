"""How a client decides whether the process on a service's port is the data folder's service.

The client sends ``GET /health?challenge=C`` without the token; the real service answers with its pid
and ``proof(token, C)``. Only an answer that proves the current token (and names the pid that
``service.json`` announced) is trusted with the token and with tool arguments. Both clients — the
stdio launcher (async) and the command line (sync) — send the challenge and judge the answer here, over the
same HTTP library (the MCP SDK's ``httpx2``).
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import httpx2

from engram.core import EngramError

from .service_files import ServiceInfo, new_challenge, proves

HEALTH_PATH = "/health"
#: Seconds a challenged process has to answer; a port that stays silent longer is no service.
PROBE_TIMEOUT = 2.0


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


def challenge(http: httpx2.Client, info: ServiceInfo, secret: str | None) -> Proof:
    """Challenge the process on ``info``'s port (a fresh challenge, without the token); the verdict for ``secret``.

    ``http`` must carry no token (it goes only to a process that proved it holds it). Raises nothing: a
    connection that fails or times out is ``SILENT``.
    """
    sent = new_challenge()
    try:
        reply = http.get(info.base_url + HEALTH_PATH, params={"challenge": sent}, timeout=PROBE_TIMEOUT)
    except httpx2.HTTPError:
        return Proof.SILENT
    return judge(reply.status_code, reply.content, info, secret, sent)


async def challenge_async(http: httpx2.AsyncClient, info: ServiceInfo, secret: str | None) -> Proof:
    """``challenge`` on an async client: the same request, the same verdict."""
    sent = new_challenge()
    try:
        reply = await http.get(info.base_url + HEALTH_PATH, params={"challenge": sent}, timeout=PROBE_TIMEOUT)
    except httpx2.HTTPError:
        return Proof.SILENT
    return judge(reply.status_code, reply.content, info, secret, sent)


def mismatch(data_dir: Path, info: ServiceInfo) -> TokenMismatch:
    """The error for a service that holds the folder but does not answer for its token (or refused it)."""
    return TokenMismatch(
        f"The Engram service for {data_dir} (pid {info.pid}, port {info.port}) did not prove that it holds this "
        "data folder's token: service.token was replaced while it ran, or another program answers on its port. "
        "Nothing was sent to it. Stop it (quit the Engram app, or end that process): the next editor call starts a "
        "fresh service.")
