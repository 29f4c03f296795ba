"""Trying a shared workspace's commit again when another machine's commit won the race for the same version.

LanceDB commits a version with a conditional PUT (``If-None-Match: *``); of two machines committing at once one
wins and the other's commit fails, having written nothing. LanceDB rebases and retries some of those itself (two
appends); others it reports, e.g. two machines creating the same index, or a write that kept losing for its
whole retry window. Such a failure is safe to try again once the winner's version is there.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from .bucket_errors import is_commit_conflict

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: A commit that keeps losing races is tried this many times in all.
ATTEMPTS = 8
#: The first pause before trying again; it doubles each time (with jitter, so two losers do not collide again).
BACKOFF_SEC = 0.05


def retrying_lost_races(fn: Callable[[], T], what: str, *, attempts: int = ATTEMPTS,
                        also: Callable[[BaseException], bool] | None = None,
                        sleep: Callable[[float], None] = time.sleep) -> T:
    """``fn()``, called again after a short, growing pause while it fails with a commit conflict (or a failure
    ``also`` accepts: another machine's work in progress that the next attempt will find done).

    ``what`` (e.g. "writing notes to shared workspace 'team'") names the attempt in the log. ``fn`` must be
    safe to call again after a lost race: the lost commit wrote nothing.

    Raises:
        OSError, ValueError, RuntimeError: ``fn``'s failure when it is not a commit conflict, or its last
            conflict after ``attempts`` tries.
    """
    for attempt in range(1, attempts):
        try:
            return fn()
        except (OSError, ValueError, RuntimeError) as exc:
            if not (is_commit_conflict(exc) or (also is not None and also(exc))):
                raise
            logger.info("%s lost a commit race to another machine (attempt %d of %d); trying again", what, attempt,
                        attempts)
            sleep(BACKOFF_SEC * 2 ** (attempt - 1) * (0.5 + random.random()))
    return fn()
