"""What capture has read of each session, and how much it stored today: ``<data>/capture/sessions/`` and ``days.json``.

A session's entry says where its transcript's next read starts (a byte offset and the number of the turn
there) and how many turns and characters of it are stored. The entry only makes reading incremental: a turn's
memory has an id made from its editor, session and turn id, so a turn found again (a lost entry, a transcript
read twice) replaces itself and is never stored twice. A transcript that shrank (rewritten, or another file
under the same name) is read again from its start. Entries are written atomically; only the capture worker
writes them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..fileio import atomic_write_bytes

logger = logging.getLogger(__name__)

FOLDER = ("capture", "sessions")
DAYS_FILE = ("capture", "days.json")
#: Days of tallies kept in ``days.json``.
DAYS_KEPT = 31


@dataclass(frozen=True)
class SessionEntry:
    """How far capture has read one session's transcript, and what it stored of it."""

    editor: str
    session_id: str
    transcript: str
    project: str = ""
    #: The next read starts at this byte, with turn number ``number``.
    offset: int = 0
    number: int = 1
    turns: int = 0
    chars: int = 0
    #: Turns left out because a cap was reached.
    capped: int = 0
    first_at: str = ""
    last_at: str = ""
    #: How many of its turns the session's summary read (0: none written).
    summarized: int = 0


@dataclass(frozen=True)
class DayTally:
    turns: int = 0
    chars: int = 0
    capped: int = 0


def _name(editor: str, session_id: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:80]
    digest = hashlib.sha256(f"{editor}\0{session_id}".encode()).hexdigest()[:12]
    return f"{editor}-{safe}-{digest}.json"


class Ledger:
    """The capture ledger of one data folder."""

    def __init__(self, data_dir: Path) -> None:
        self.folder = data_dir.joinpath(*FOLDER)
        self.days_file = data_dir.joinpath(*DAYS_FILE)

    def entry(self, editor: str, session_id: str, transcript: str) -> SessionEntry:
        """The session's entry (a fresh one when there is none, or it cannot be read)."""
        path = self.folder / _name(editor, session_id)
        fresh = SessionEntry(editor, session_id, transcript)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
            found = SessionEntry(**data)
        except FileNotFoundError:
            return fresh
        except (OSError, ValueError, TypeError) as exc:
            logger.warning("capture ledger %s unreadable (%s); the session is read again from its start", path, exc)
            return fresh
        return found if found.transcript == transcript else replace(found, transcript=transcript, offset=0, number=1)

    def save(self, entry: SessionEntry) -> None:
        """Write ``entry`` (atomically).

        Raises:
            OSError: the ledger folder cannot be written.
        """
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_bytes(self.folder / _name(entry.editor, entry.session_id),
                           json.dumps(asdict(entry)).encode("utf-8"))

    def forget(self, editor: str, session_id: str) -> None:
        (self.folder / _name(editor, session_id)).unlink(missing_ok=True)

    def sessions(self) -> list[SessionEntry]:
        """Every session entry (unreadable ones left out)."""
        found = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                found.append(SessionEntry(**json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, TypeError):
                continue
        return found

    def days(self) -> dict[str, DayTally]:
        """Tallies by UTC day (``YYYY-MM-DD``)."""
        try:
            data = json.loads(self.days_file.read_text(encoding="utf-8"))
            return {day: DayTally(**value) for day, value in data.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            logger.warning("capture tallies %s unreadable (%s); today's count starts again", self.days_file, exc)
            return {}

    def today(self, now: datetime | None = None) -> DayTally:
        return self.days().get(_day(now), DayTally())

    def add_today(self, turns: int, chars: int, capped: int, now: datetime | None = None) -> None:
        """Add to today's tally (keeping ``DAYS_KEPT`` days).

        Raises:
            OSError: the file cannot be written.
        """
        days = self.days()
        day = _day(now)
        was = days.get(day, DayTally())
        days[day] = DayTally(was.turns + turns, was.chars + chars, was.capped + capped)
        kept = dict(sorted(days.items())[-DAYS_KEPT:])
        atomic_write_bytes(self.days_file, json.dumps({d: asdict(t) for d, t in kept.items()}).encode("utf-8"))


def _day(now: datetime | None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d")
