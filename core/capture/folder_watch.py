"""Folders kept current: every folder ingested into a local workspace is watched while Engram runs.

The watch (``watchfiles``: inotify, FSEvents, ReadDirectoryChangesW) groups a folder's changes until it has been
quiet ``watch.quiet_sec``, then hands them to the engine in one batch per folder: changed and new files are
ingested again (only those: the ingest is given their paths, so what was ingested stays as it was chosen, and
unchanged files are not read), deleted files are forgotten. A batch of more than ``MAX_PATHS`` files re-syncs the
whole folder instead (an ingest that lists it and skips what did not change). Folders named in
``watch.skip_folders`` are not watched, ``watch.enabled`` turns the whole watch off, and ``pause`` (the tray's
Pause watching) holds the batches until ``resume``. Version-control folders, caches and Engram's own folders are
never looked at.

The set of folders is read again every ``ROOTS_CHECK_S`` (and within ``REFRESH_POLL_S`` of an ingest finishing,
via ``refresh``): a folder ingested while Engram runs is watched from then on. The watch is set up again only when
that set changed: every ingest (the watch's own included) ends in a ``refresh``, and a change written while the
watch was being set up again would be missed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..settings import Settings

logger = logging.getLogger(__name__)

#: An ingest's ``include`` takes at most this many patterns (the tool's limit).
MAX_PATHS = 32
ROOTS_CHECK_S = 30.0
#: How often the watch looks whether ``refresh`` was called (it is not stopped for it).
REFRESH_POLL_S = 1.0
#: After the watch failed (e.g. the system's limit of watched folders), it tries again this much later.
RETRY_S = 60.0


@dataclass(frozen=True)
class Watched:
    """One watched folder: where it was ingested from, into which workspace and project."""

    workspace: str
    root: Path
    project: str


@dataclass(frozen=True)
class Batch:
    """One folder's changes after a quiet interval: files to ingest again, files to forget."""

    folder: Watched
    changed: tuple[str, ...]
    deleted: tuple[str, ...]


def _escaped(relative: str) -> str:
    """A path as a gitignore pattern that matches it alone (anchored; its special characters escaped)."""
    return "/" + "".join("\\" + c if c in "\\[]*?!#" else c for c in relative)


def include_patterns(batch: Batch) -> list[str] | None:
    """The ``include`` of the ingest that takes ``batch``'s changed files (``None``: the whole folder)."""
    if len(batch.changed) > MAX_PATHS:
        return None
    return [_escaped(Path(p).relative_to(batch.folder.root).as_posix()) for p in batch.changed]


def batches(changes: Iterable[tuple[str, str]], folders: Sequence[Watched]) -> list[Batch]:
    """``changes`` (what happened, path) grouped by the folder holding each path (the deepest one)."""
    ordered = sorted(folders, key=lambda f: len(f.root.parts), reverse=True)
    grouped: dict[Watched, tuple[set[str], set[str]]] = {}
    for _, raw in changes:
        path = Path(raw)
        folder = next((f for f in ordered if path == f.root or f.root in path.parents), None)
        if folder is None:
            continue
        changed, deleted = grouped.setdefault(folder, (set(), set()))
        if path.is_file():
            changed.add(str(path))
            deleted.discard(str(path))
        elif not path.exists():
            deleted.add(str(path))
            changed.discard(str(path))
    return [Batch(f, tuple(sorted(c)), tuple(sorted(d))) for f, (c, d) in grouped.items() if c or d]


class FolderWatch:
    """The thread that watches the ingested folders and hands their changes on (``start``/``stop``)."""

    def __init__(self, folders: Callable[[], list[Watched]], apply: Callable[[Batch], None],
                 settings: Callable[[], Settings], own: Sequence[Path]) -> None:
        self._folders = folders
        self._apply = apply
        self._settings = settings
        self._own = [p.resolve() for p in own]
        self._stop = threading.Event()
        self._refresh = threading.Event()
        self._resumed = threading.Condition()
        self._paused = False
        self._thread: threading.Thread | None = None
        self.watching: list[Watched] = []
        self.applied: list[Batch] = []

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="folder-watch", daemon=True)
        self._thread.start()

    def stop(self, wait: float = 10.0) -> None:
        """End the watch thread (waiting up to ``wait`` seconds for it): also one idle between looks at the
        folders, which sleeps on ``_refresh``."""
        self._stop.set()
        self._refresh.set()  # wakes the idle wait at once (else a service's close waited it out: 10 s)
        with self._resumed:
            self._resumed.notify_all()
        if self._thread is not None:
            self._thread.join(wait)

    def refresh(self) -> None:
        """Read the set of folders again soon (an ingest finished)."""
        self._refresh.set()

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self, paused: bool) -> None:
        """Hold (``True``) or let go (``False``) of the batches; changes seen meanwhile are applied on resume."""
        with self._resumed:
            self._paused = paused
            self._resumed.notify_all()

    def current(self) -> list[Watched]:
        """The folders to watch now: ingested, on this computer, not skipped, not Engram's own."""
        settings = self._settings()
        if not settings.watch.enabled:
            return []
        skip = {Path(p).expanduser().resolve() for p in settings.watch.skip_folders}
        found = []
        for folder in self._folders():
            root = folder.root
            if not root.is_dir() or root in skip or any(root == o or o in root.parents or root in o.parents
                                                        for o in self._own):
                continue
            found.append(folder)
        return found

    def _run(self) -> None:
        import watchfiles

        while not self._stop.is_set():
            try:
                folders = self.current()
            except Exception:
                logger.exception("listing the folders to watch failed; tried again later")
                folders = []
            self.watching = folders
            self._refresh.clear()
            if not folders:
                self._refresh.wait(ROOTS_CHECK_S)
                continue
            quiet_ms = int(1000 * self._settings().watch.quiet_sec)
            looked = time.monotonic()
            try:
                for changes in watchfiles.watch(*(f.root for f in folders), stop_event=self._stop,
                                                step=quiet_ms, debounce=max(quiet_ms * 10, 5000),
                                                rust_timeout=int(1000 * REFRESH_POLL_S), yield_on_timeout=True,
                                                watch_filter=watchfiles.DefaultFilter(ignore_paths=self._own),
                                                raise_interrupt=False, ignore_permission_denied=True):
                    if changes:
                        self._hand_on(batches(((c.name, p) for c, p in changes), folders))
                    if self._refresh.is_set() or time.monotonic() - looked >= ROOTS_CHECK_S:
                        self._refresh.clear()
                        looked = time.monotonic()
                        if [f.root for f in self.current()] != [f.root for f in folders]:
                            break
            except Exception as exc:  # e.g. the system's limit of watched folders: try again later
                logger.warning("watching %d folders failed (%s); tried again in %.0f s", len(folders), exc, RETRY_S)
                self._stop.wait(RETRY_S)

    def _hand_on(self, found: list[Batch]) -> None:
        with self._resumed:
            while self._paused and not self._stop.is_set():
                self._resumed.wait()
        for batch in found:
            if self._stop.is_set():
                return
            try:
                self._apply(batch)
                self.applied.append(batch)
                logger.info("kept %s current: %d changed, %d deleted", batch.folder.root, len(batch.changed),
                            len(batch.deleted))
            except Exception as exc:
                logger.warning("keeping %s current failed (%s); its next change tries again", batch.folder.root, exc)
