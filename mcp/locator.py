"""The one way to a data folder's service: found from its files, proven by the challenge, waited for.

Both clients use it: the stdio launcher (async; it starts a headless service when none runs) and the
command line (sync; it never starts one, and opens the folder itself when none runs). ``Search`` makes
every decision of the wait from what one look at the folder and the port showed (``Sighting``); it reads
no file and sends nothing. ``locate`` and ``locate_async`` take those looks, over one HTTP library
(``httpx2``, the MCP SDK's), and act on the decisions.

What the decisions keep true: the token goes only to a process that proved it holds it (``handshake``);
a ``service.json`` left by a service that was killed, or whose port another program took, is waited past
(the launcher starts a service, the command line finds none); a service that holds the folder but cannot
prove it holds its token is an error after a short grace, never a reason to start a second one.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2

from engram.core import EngramError, Paths

from .errors import ServiceStopped, ServiceUnavailable
from .handshake import Proof, challenge, challenge_async, mismatch
from .service_files import ServiceInfo, lock_held, read_info, read_token
from .service_spawn import start_detached

logger = logging.getLogger(__name__)

#: Seconds between two looks while a service is starting.
POLL_INTERVAL = 0.05
#: Seconds a service that holds the folder may answer without the proof before it is a token mismatch (one
#: that is starting has written its new token, and not yet its service.json).
WRONG_PROOF_GRACE = 2.0


@dataclass(frozen=True)
class Sighting:
    """One look at a data folder: its instance lock, its service files, and how the announced port answered."""

    running: bool  # a live process holds the instance lock
    info: ServiceInfo | None
    secret: str | None
    proof: Proof  # SILENT when nothing was challenged


@dataclass(frozen=True)
class Found:
    """A service that proved it holds ``secret``, the data folder's current token."""

    info: ServiceInfo
    secret: str


class Step(enum.Enum):
    """What to do after a look that found no proven service."""

    WAIT = "wait"  # look again after POLL_INTERVAL
    START = "start"  # start a headless service, then look again after POLL_INTERVAL
    ABSENT = "absent"  # no service runs, and this search does not start one


class Search:
    """The wait for the service of ``paths``: the launcher's (``starts``) or the command line's.

    ``starts``: start a service when none runs, and wait up to ``patience`` seconds for it to answer.
    Otherwise: a folder that no process holds has no service (``Step.ABSENT``), and a service that holds
    it is waited for up to ``patience`` seconds. ``clock`` is ``time.monotonic`` but in tests.
    """

    def __init__(self, paths: Paths, *, patience: float, starts: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.paths = paths
        self.patience = patience
        self.starts = starts
        self._clock = clock
        self._deadline = clock() + patience
        self._started = False
        self._wrong_since: float | None = None

    def worth_challenging(self, running: bool) -> bool:
        """Whether to challenge the announced port after finding the instance lock ``running`` (or not): the
        command line asks nothing of a port when no process holds the folder."""
        return running or self.starts

    def next(self, seen: Sighting) -> Found | Step:
        """What to do after the look ``seen``.

        Raises:
            TokenMismatch: a process holds the folder, and its port answered without the proof for
                ``WRONG_PROOF_GRACE`` seconds.
            ServiceUnavailable: (``starts``) no service answered within ``patience`` seconds.
            ServiceStopped: (not ``starts``) a service holds the folder but did not answer within ``patience``.
        """
        if seen.proof is Proof.PROVEN and seen.info is not None and seen.secret is not None:
            return Found(seen.info, seen.secret)
        now = self._clock()
        if not seen.running and not self.starts:
            return Step.ABSENT  # none runs, or it stopped meanwhile: the caller opens the folder itself
        step = Step.WAIT
        if seen.proof is Proof.WRONG and seen.info is not None and seen.running:
            if self._wrong_since is None:
                self._wrong_since = now
            if now - self._wrong_since > WRONG_PROOF_GRACE:
                raise mismatch(self.paths.data_dir, seen.info)
        elif not seen.running and not self._started:
            self._started = True
            step = Step.START
        if step is Step.WAIT and now > self._deadline:
            raise self._timed_out()
        return step

    def _timed_out(self) -> EngramError:
        if self.starts:
            return ServiceUnavailable(
                f"The Engram service did not answer within {self.patience:.0f} s. Its log is "
                f"{self.paths.log_dir / 'service.out'}; `engram service` in a terminal shows the error.")
        return ServiceStopped(f"An Engram service holds {self.paths.data_dir} but did not answer within "
                              f"{self.patience:.0f} s. Its log is in {self.paths.log_dir}; quit the Engram app or "
                              "stop the service, then run the command again.")


def _folder(data_dir: Path) -> tuple[bool, ServiceInfo | None, str | None]:
    return lock_held(data_dir), read_info(data_dir), read_token(data_dir)


def locate(search: Search) -> Found | None:
    """The service ``search`` looks for, proven; ``None`` when none runs and ``search`` does not start one.

    The probe's HTTP client is made only when there is a port to challenge (a folder no service holds costs
    the command line nothing).

    Raises:
        TokenMismatch, ServiceUnavailable, ServiceStopped: as ``Search.next``.
    """
    probe: httpx2.Client | None = None
    try:
        while True:
            running, info, secret = _folder(search.paths.data_dir)
            proof = Proof.SILENT
            if info is not None and search.worth_challenging(running):
                if probe is None:
                    probe = httpx2.Client(trust_env=False)  # no proxy: the service is on loopback
                proof = challenge(probe, info, secret)
            step = search.next(Sighting(running, info, secret, proof))
            if isinstance(step, Found):
                return step
            if step is Step.ABSENT:
                return None
            if step is Step.START:
                start_detached(search.paths)
            time.sleep(POLL_INTERVAL)
    finally:
        if probe is not None:
            probe.close()


async def locate_async(search: Search, probe: httpx2.AsyncClient) -> Found | None:
    """``locate`` for the event loop, challenging over ``probe`` (a client that carries no token).

    Raises:
        TokenMismatch, ServiceUnavailable, ServiceStopped: as ``Search.next``.
    """
    while True:
        running, info, secret = _folder(search.paths.data_dir)
        proof = Proof.SILENT
        if info is not None and search.worth_challenging(running):
            proof = await challenge_async(probe, info, secret)
        step = search.next(Sighting(running, info, secret, proof))
        if isinstance(step, Found):
            return step
        if step is Step.ABSENT:
            return None
        if step is Step.START:
            start_detached(search.paths)
        await anyio.sleep(POLL_INTERVAL)


