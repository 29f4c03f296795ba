"""The capture worker: takes the hooks' jobs from the inbox, and watches the editors' session folders.

It runs in the service (and so in the tray app, which serves the same service) on a thread of its own. Every
``INTERVAL_S`` it carries out the inbox's jobs, oldest first; every ``SCAN_EVERY_S`` it also looks at the
session files of the editors whose capture is on (Claude Code's ``projects/*/*.jsonl``, Codex's
``sessions/YYYY/MM/DD/*.jsonl``) and reads those that grew since their last read: a session captured by its
hooks is found unchanged, one without hooks (Codex; Claude Code without the plugin) is picked up as it is
written. ``capture_file`` is the one path every way in takes (hooks, the scan, ``engram capture``), so all of
them store a turn once. No generation model is loaded: capture embeds, it never asks a model.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ..errors import EngramError, InvalidArgument
from ..paths import Paths
from ..settings import Settings
from . import claude_code, codex
from .claude_code import Reading
from .inbox import done, pending
from .ledger import Ledger, SessionEntry
from .storing import Caps, Scope, StoredTurns, store_turns
from .summary import QUIET_BEFORE_SUMMARY_S, summarize_session
from .turns import project_of

logger = logging.getLogger(__name__)

INTERVAL_S = 0.5
SCAN_EVERY_S = 15.0
#: A session file is read only once it has been quiet this long (the scan's; a hook's job is read at once).
QUIET_S = 2.0
#: A job whose capture failed this many times in a row is dropped (its turns stay unread, for the next job).
GIVE_UP_AFTER = 20

Reader = Callable[..., Reading]
READERS: dict[str, Reader] = {claude_code.EDITOR: claude_code.read_transcript, codex.EDITOR: codex.read_rollout}


@dataclass(frozen=True)
class CaptureReport:
    """What capturing one session file did (``note``: why nothing was read, when so)."""

    editor: str
    session_id: str
    transcript: str
    project: str = ""
    stored: StoredTurns = StoredTurns()
    note: str = ""


def editor_on(settings: Settings, editor: str) -> bool:
    """Whether capture of ``editor`` is on (``capture.claude_code``, ``capture.codex``)."""
    return bool(getattr(settings.capture, editor.replace("-", "_"), False))


def capture_file(scope: Scope, ledger: Ledger, editor: str, transcript: Path, *, session_id: str = "",
                 cwd: str = "") -> CaptureReport:
    """Capture the turns of ``transcript`` not stored yet.

    Raises:
        InvalidArgument: an editor capture does not know.
        ModelError, StoreError: embedding or writing failed; the ledger is left as it was, so the next
            capture reads the same turns again.
    """
    reader = READERS.get(editor)
    if reader is None:
        raise InvalidArgument(f"Capture reads {', '.join(sorted(READERS))} sessions, not '{editor}'.")
    session = session_id or _session_of(editor, transcript)
    if not editor_on(scope.settings, editor):
        return CaptureReport(editor, session, str(transcript), note=f"capture.{editor.replace('-', '_')} is off")
    entry = ledger.entry(editor, session, str(transcript))
    try:
        size = transcript.stat().st_size
    except OSError as exc:
        return CaptureReport(editor, session, str(transcript), note=f"cannot read it ({exc.strerror})")
    if size < entry.offset:  # rewritten or replaced: read it again (stored turns are recognised by id)
        entry = replace(entry, offset=0, number=1)
    try:
        reading = reader(transcript, entry.offset, first_number=entry.number, session_id=session)
    except OSError as exc:
        return CaptureReport(editor, session, str(transcript), note=f"cannot read it ({exc.strerror})")
    project = entry.project or project_of(next((t.cwd for t in reading.turns if t.cwd), cwd))
    stored = store_turns(scope, reading.turns, project=project, caps=Caps.left(scope, entry, ledger.today()))
    number = reading.turns[-1].number if reading.last_open and reading.turns else entry.number + len(reading.turns)
    times = [t.started.astimezone(UTC).isoformat() for t in reading.turns if t.started is not None]
    ledger.save(replace(entry, project=project, offset=reading.offset, number=number,
                        turns=entry.turns + stored.new, chars=entry.chars + stored.chars,
                        capped=entry.capped + stored.capped, first_at=entry.first_at or (times[0] if times else ""),
                        last_at=times[-1] if times else entry.last_at))
    if stored.new or stored.capped:
        ledger.add_today(stored.new, stored.chars, stored.capped)
    return CaptureReport(editor, session, str(transcript), project, stored)


def _session_of(editor: str, transcript: Path) -> str:
    return codex.session_of(transcript) if editor == codex.EDITOR else transcript.stem


def session_files(paths: Paths, settings: Settings) -> Iterator[tuple[str, Path]]:
    """The editors' session files, for the editors whose capture is on."""
    if paths.claude_dir is not None and editor_on(settings, claude_code.EDITOR):
        for path in sorted((paths.claude_dir / "projects").glob("*/*.jsonl")):
            yield claude_code.EDITOR, path
    if paths.codex_dir is not None and editor_on(settings, codex.EDITOR):
        for path in sorted((paths.codex_dir / "sessions").glob("*/*/*/rollout-*.jsonl")):
            yield codex.EDITOR, path


class CaptureWorker:
    """The thread that carries out the inbox's jobs and scans the session folders (``start``/``stop``)."""

    def __init__(self, paths: Paths, scope: Callable[[], Scope], settings: Callable[[], Settings], *,
                 scan_every: float = SCAN_EVERY_S) -> None:
        self.paths = paths
        self._scope = scope  # opens the workspace: asked only when there is something to capture
        self._settings = settings
        self.ledger = Ledger(paths.data_dir)
        self._scan_every = scan_every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sizes: dict[Path, tuple[int, float]] = {}
        self._failures: dict[Path, int] = {}
        self.reports: list[CaptureReport] = []

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="capture", daemon=True)
        self._thread.start()

    def stop(self, wait: float = 10.0) -> None:
        """Ask the thread to end after its current job, and wait for it (at most ``wait`` seconds)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(wait)

    def _run(self) -> None:
        scanned = 0.0
        while not self._stop.is_set():
            try:
                self.take_jobs()
                if time.monotonic() - scanned >= self._scan_every:
                    scanned = time.monotonic()
                    self.scan()
            except Exception:  # the worker outlives any one failure; the next round tries again
                logger.exception("capture failed; it is tried again")
            self._stop.wait(INTERVAL_S)

    def take_jobs(self) -> list[CaptureReport]:
        """Carry out the inbox's jobs, oldest first; a job whose capture failed stays for the next round."""
        reports = []
        for path, job in pending(self.paths.data_dir):
            if self._stop.is_set():
                break
            if job is None:
                logger.warning("capture inbox: %s is not a job; removed", path.name)
                done(path)
                continue
            try:
                report = capture_file(self._scope(), self.ledger, job.editor, Path(job.transcript),
                                      session_id=job.session_id, cwd=job.cwd)
            except InvalidArgument as exc:
                logger.warning("capture inbox: %s refused: %s", path.name, exc.message)
                done(path)
                continue
            except EngramError as exc:
                self._failures[path] = tries = self._failures.get(path, 0) + 1
                if tries < GIVE_UP_AFTER:
                    logger.warning("capture of %s failed (%s); tried again soon", job.transcript, exc.message)
                    break  # in order: the jobs after it wait
                logger.error("capture of %s failed %d times (%s); its job is dropped, the session's next "
                             "capture reads the same turns", job.transcript, tries, exc.message)
                self._failures.pop(path, None)
                done(path)
                continue
            self._failures.pop(path, None)
            if job.event == "SessionEnd":
                self._summarize(job.editor, report.session_id)
            done(path)
            self._note(report)
            reports.append(report)
        return reports

    def _summarize(self, editor: str, session_id: str) -> None:
        """With ``capture.summaries`` on, (re)write the summary of a session whose turns grew since the last one."""
        if not self._settings().capture.summaries:
            return
        entry = next((s for s in self.ledger.sessions() if (s.editor, s.session_id) == (editor, session_id)), None)
        if entry is None or entry.turns == 0 or entry.summarized == entry.turns:
            return
        scope = self._scope()
        if summarize_session(scope, scope.provider, editor, session_id) is not None:
            self.ledger.save(replace(entry, summarized=entry.turns))
            logger.info("summarised %s session %s (%d turns)", editor, session_id, entry.turns)

    def scan(self) -> list[CaptureReport]:
        """Capture the session files that grew since they were last seen and have been quiet ``QUIET_S``."""
        settings = self._settings()
        reports = []
        now = time.time()
        for editor, path in session_files(self.paths, settings):
            if self._stop.is_set():
                break
            try:
                stat = path.stat()
            except OSError:
                continue
            seen = (stat.st_size, stat.st_mtime)
            if self._sizes.get(path) == seen or now - stat.st_mtime < QUIET_S:
                continue
            report = capture_file(self._scope(), self.ledger, editor, path)
            self._sizes[path] = seen
            self._note(report)
            reports.append(report)
        if settings.capture.summaries:  # sessions with no end event: summarised once their file is quiet
            for entry in self.ledger.sessions():
                if entry.turns == entry.summarized:
                    continue
                try:
                    quiet = now - Path(entry.transcript).stat().st_mtime >= QUIET_BEFORE_SUMMARY_S
                except OSError:
                    continue
                if quiet:
                    self._summarize(entry.editor, entry.session_id)
        return reports

    def _note(self, report: CaptureReport) -> None:
        stored = report.stored
        if stored.new or stored.replaced or stored.capped or stored.duplicates or report.note:
            logger.info("captured %s session %s: %d new, %d replaced, %d duplicates, %d over a cap%s",
                        report.editor, report.session_id, stored.new, stored.replaced, stored.duplicates, stored.capped,
                        f" ({report.note})" if report.note else "")


def status_lines(ledger: Ledger, settings: Settings, now: datetime | None = None) -> list[str]:
    """Capture in a few lines for ``engram status`` and the window: what is on, today's counts and caps."""
    capture = settings.capture
    on = [e for e in READERS if editor_on(settings, e)]
    today = ledger.today(now)
    sessions: list[SessionEntry] = ledger.sessions()
    longest = max(sessions, key=lambda s: s.turns + s.capped, default=None)
    full = sum(1 for s in sessions if s.turns >= capture.turns_per_session)
    lines = [f"capture: {', '.join(on) or 'off'}; {len(sessions)} sessions, "
             f"{sum(s.turns for s in sessions)} turns stored",
             f"capture today: {today.turns}/{capture.turns_per_day} turns, {today.chars:,}/{capture.chars_per_day:,} "
             f"characters" + (f"; {today.capped} left out over a cap" if today.capped else ""),
             f"capture per session: at most {capture.turns_per_session:,} turns; the longest so far "
             f"{longest.turns if longest else 0:,}" + (f"; {full} sessions reached it" if full else "")]
    return lines
