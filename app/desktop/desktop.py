"""The desktop app as one object: the engine, the service in the Qt loop, jobs, the window and the tray.

``Desktop.run`` is awaited on a qasync loop (the Qt event loop driving asyncio). It opens the
service (the same ``Service`` class as ``engram service``, not a copy) on the shared engine, shows
the tray when the desktop has one (retrying while it appears; the window alone otherwise), and
returns after ``quit``. Engine work goes through ``jobs`` so the Qt thread never blocks.

The pages and the tray never see ``Desktop``: they get the jobs runner, the engine, the controllers, and a
``Shell`` (app-level actions, and the signals ``Desktop`` emits: the counts, the state, the GPUs, the
service). ``Desktop`` does not touch their widgets.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QSystemTrayIcon

from engram.core import Engine, EngramError, Paths
from engram.core.errors import IngestCancelled, IngestError, InvalidArgument, NotFound, SettingsError
from engram.core.models.readiness import readiness
from engram.core.settings_file import LoadedSettings, load_settings
from engram.core.tool_calls import output_of
from engram.core.tools.results import IngestResult
from engram.mcp.service import Service
from engram.mcp.setup_clients import Places

from .counts import collect_overview, remembered
from .editors import EditorsController
from .jobs import Job, Jobs
from .models_control import ModelsController
from .service_control import ServiceController
from .settings_control import KeysController, SettingsController
from .shell import Shell
from .tray import Tray
from .welcome import Welcome, first_run
from .window import MainWindow

logger = logging.getLogger(__name__)
#: A file in the data folder: the window was closed once, and the app said it keeps running in the tray.
FIRST_CLOSE = "window-closed-once"

#: Errors about what someone asked for (shown as warnings); every other error is a failure.
INPUT_ERRORS = (InvalidArgument, NotFound, IngestError, SettingsError)
TRAY_RETRY_MS = 1000
TRAY_RETRIES = 30
#: How long writes must pause before the counts are read again.
RECOUNT_DELAY_MS = 2000


class Desktop(QObject):
    """Owns what the app shows; ``run`` keeps it alive until ``quit``."""

    state_changed = Signal(str)
    service_changed = Signal(str)  # a sentence about the service (its address, or why it is not served here)
    status_changed = Signal(str)  # the tray's status line
    stopped = Signal()

    def __init__(self, paths: Paths, environ: Mapping[str, str], *, engine: Engine | None = None,
                 places: Places | None = None, serve: bool = True, tray: bool | None = None,
                 background: bool = False) -> None:
        """``engine`` and ``places`` are seams for tests (default: a new engine, the user's folders);
        ``serve=False`` runs without the MCP service; ``tray=True`` builds the tray icon even where the
        platform reports no system tray (offscreen tests), ``False`` never builds it; ``background`` starts
        with the tray icon alone (a start at login), where a launch opens the window."""
        super().__init__()
        self.paths = paths
        self.environ = dict(environ)
        self.places = places or Places.from_environ(self.environ)
        loaded = self.loaded_settings()
        self.engine = engine or Engine(paths, loaded.settings, environ=self.environ)
        self._owns_engine = engine is None
        self.jobs = Jobs(parent=self)
        self._unsubscribe = self.engine.subscribe(self.jobs.engine_event)
        self.jobs.finished.connect(self._job_finished)
        # Memories written by anyone (an agent storing one exchange at a time) are recounted once they go quiet.
        self._recount = QTimer(self)
        self._recount.setSingleShot(True)
        self._recount.setInterval(RECOUNT_DELAY_MS)
        self._recount.timeout.connect(self.refresh)
        self.jobs.memories_changed.connect(lambda _workspace: self._recount.start())
        self.settings_control = SettingsController(self.jobs, paths, self.environ, self.engine, parent=self)
        self.settings_control.login_failed.connect(
            lambda title, message: self.notify(title, message, error=True, page="settings"))
        self.keys = KeysController(self.jobs, parent=self)
        self.editors = EditorsController(self.jobs, self.places, parent=self)
        self.editors.toggled.connect(self._editor_toggled)
        self.models = ModelsController(self.jobs, self.engine, parent=self)
        self.service_control = ServiceController(paths, self.engine, parent=self)
        self.shell = Shell(show_window=self.show_window, quit=self.quit,
                           choose_folder_to_ingest=self.choose_folder_to_ingest,
                           set_indexing_paused=self.set_indexing_paused, cancel_ingest=self.cancel_ingest,
                           notify=self.notify, has_tray=lambda: self.tray is not None,
                           set_watching_paused=self.set_watching_paused, went_to_tray=self._went_to_tray,
                           parent=self)
        self.shell.service_changed.connect(self.service_changed)
        self.shell.status_changed.connect(self.status_changed)
        self.service_control.changed.connect(self.shell.service_changed)
        self.service_control.failed.connect(self._fail)
        self.tray: Tray | None = None
        self._serve = serve
        self._tray_wanted = tray
        self._background = background
        self._failed: EngramError | None = None
        self._tray_tries = 0
        self._done: asyncio.Event | None = None
        self.state = "ready"
        self.welcome: Welcome | None = None
        self.folder_dialog: QFileDialog | None = None
        self.went_to_tray_box: QMessageBox | None = None  # shown the first time the window is closed
        self.jobs.changed.connect(self._update_state)
        self.window = MainWindow(self.shell, self.jobs, self.engine, editors=self.editors,
                                 settings_control=self.settings_control, keys=self.keys, models=self.models)
        self.editors.refresh()  # the pages and the tray show the editors once their files have been read

    # ------------------------------------------------------------- settings

    def loaded_settings(self) -> LoadedSettings:
        """The settings as they are now (file + environment). Raises ``SettingsError`` for a bad file."""
        return load_settings(self.paths.settings_file, self.environ)


    # -------------------------------------------------------------- running

    async def run(self) -> None:
        """Start everything and wait until ``quit`` has finished."""
        self._done = asyncio.Event()
        self.start()
        await self._done.wait()

    def start(self) -> None:
        if self._serve:
            self.start_service()
        self.settings_control.sync_login_entry()
        if not self.attach_tray():
            self.show_window()
            self._retry_tray()
        elif not self._background:  # a launch opens the window; a start at login stays in the tray
            self.show_window()
        self.refresh()
        self.detect_gpus()
        if first_run(self.paths.data_dir):
            self.show_welcome()

    def start_service(self) -> asyncio.Task[None]:
        """Open the MCP service on this engine (``ServiceController``); the task ends once it serves, or once
        it could not open."""
        return self.service_control.start()

    @property
    def service(self) -> Service | None:
        """The app's MCP service while it serves (None when another process serves this data folder)."""
        return self.service_control.service

    @property
    def service_note(self) -> str:
        return self.service_control.note

    def attach_tray(self) -> bool:
        """Show the tray icon if the desktop has a system tray now."""
        if self.tray is not None:
            return True
        if self._tray_wanted is False or (self._tray_wanted is None and not QSystemTrayIcon.isSystemTrayAvailable()):
            return False
        self.tray = Tray(self.shell, self.editors, parent=self)
        self.tray.set_state(self.state)
        self.tray.show()
        return True

    def _retry_tray(self) -> None:
        # No signal tells when a tray appears (e.g. the panel starts after us at login): ask again a while.
        if self._tray_tries >= TRAY_RETRIES or self._done is None or self._done.is_set():
            return
        self._tray_tries += 1
        QTimer.singleShot(TRAY_RETRY_MS, lambda: None if self.attach_tray() else self._retry_tray())

    def quit(self) -> None:
        """Stop the service, let running jobs end, close the engine; ``run`` then returns."""
        asyncio.ensure_future(self.shutdown())

    async def shutdown(self) -> None:
        for job in self.jobs.running():  # an ingest stops after its current batch instead of holding the quit
            if job.kind == "ingest":
                self.jobs.cancel_ingest(job.id, self.engine.cancel_ingest)
        await self.service_control.stop()
        self._recount.stop()
        self.jobs.shutdown()
        self._unsubscribe()
        self.engine.resume_indexing()
        if self._owns_engine:
            await asyncio.to_thread(self.engine.close)
        if self.tray is not None:
            self.tray.hide()
        self.window.hide()
        self.stopped.emit()
        if self._done is not None:
            self._done.set()

    # --------------------------------------------------------------- actions

    def show_window(self, page: str | None = None) -> None:
        """Show the window (on ``page`` when given: home, settings, editors)."""
        if page is not None:
            self.window.show_page(page)
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()
        if self.state == "error":  # the person has seen it
            self._failed = None
            self._update_state()
        self.refresh()

    def _went_to_tray(self) -> None:
        """The first time the window is closed, say where Engram went (it runs on, serving the editors)."""
        marker = self.paths.data_dir / FIRST_CLOSE
        if marker.exists():
            return
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("the window was closed once; Engram said it keeps running in the tray\n",
                              encoding="utf-8")
        except OSError:
            logger.warning("could not record that the window was closed once (%s)", marker)
        box = QMessageBox(QMessageBox.Icon.Information, "Engram keeps running",
                          "Engram is still running in the background, so your AI tools can keep using your memory.")
        box.setInformativeText("Its icon is in the tray (the status area of your panel): click it to open this "
                               "window again. To stop Engram, choose Quit Engram in the icon's menu.")
        box.setAccessibleName("Engram keeps running")
        box.setWindowModality(Qt.WindowModality.NonModal)
        self.went_to_tray_box = box
        box.open()

    def show_welcome(self) -> None:
        """The first-run welcome, once the editors' settings have been read (in the background)."""
        self.show_window()

        def open_welcome() -> None:
            self.welcome = Welcome(self.window, self.shell, self.jobs, self.editors, self.engine.settings,
                                   self.paths.data_dir, self.window.show_page)
            self.welcome.done_with.connect(self._notify_editors)
            self.welcome.open()

        self.editors.when_loaded(open_welcome)

    def _notify_editors(self, messages: list[str]) -> None:
        for message in messages:
            self.notify("Editors", message, page="editors")

    def choose_folder_to_ingest(self) -> None:
        """Ask for a folder (a non-modal dialog: no nested event loop) and ingest it."""
        dialog = QFileDialog(self.window, "Remember a folder", str(self.places.home))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: self.ingest_folder(path) if path else None)
        self.folder_dialog = dialog
        dialog.open()

    def ingest_folder(self, folder: str, project: str | None = None, workspace: str = "") -> Job:
        """Ingest ``folder`` on a worker; its progress shows in the window and the tray."""
        name = Path(folder).name or folder
        return self.jobs.submit("ingest", f"Ingest {name}", lambda report: self.engine.tools.ingest_path(
            folder, project=project or None, workspace=workspace))

    def cancel_ingest(self, job_id: int) -> bool:
        """Stop the ingest job ``job_id`` after its current batch (its finished files stay remembered).
        Returns False when that job runs no ingest now."""
        return self.jobs.cancel_ingest(job_id, self.engine.cancel_ingest)

    def set_indexing_paused(self, paused: bool) -> None:
        if paused:
            self.engine.pause_indexing()
        else:
            self.engine.resume_indexing()
        self.shell.paused_changed.emit(paused)
        self._update_state()

    def set_watching_paused(self, paused: bool) -> None:
        """Pause (or resume) keeping ingested folders current; without a running watch there is nothing to hold."""
        watch = self.engine.folder_watch
        if watch is None:
            why = ("keeping folders current is turned off (Settings: Remembering)" if not
                   self.engine.settings.watch.enabled else "the Engram service that was already running keeps them "
                   "current, not this app; quit that service and start Engram again to pause it here")
            self.shell.show_message(f"Nothing to pause: {why}.", 8000)
            self.shell.watching_paused_changed.emit(False)
            return
        watch.pause(paused)
        self.shell.watching_paused_changed.emit(paused)
        self.shell.show_message("Folder watch paused: changes wait until it is resumed." if paused
                                else "Folder watch resumed.", 4000)

    def _editor_toggled(self, _name: str, message: str, ok: bool) -> None:
        if ok:  # a failure is notified as every failed job is (``_job_finished``)
            self.notify("Editors", message, page="editors")

    def refresh(self) -> None:
        """Recount memories and sources (for the tray's status line and the Overview) in the background."""
        engine = self.engine
        self.jobs.submit("task", "Counting memories", lambda report: collect_overview(engine),
                         on_done=self._show_counts)

    def detect_gpus(self) -> None:
        """Find the GPUs and the device models would run on (it runs vendor tools: a worker's job)."""
        engine = self.engine

        def work(report: Any) -> tuple[list[Any], str]:
            gpu, build, layers, note = engine.device_plan()
            chosen = (f"{gpu.name}, llama.cpp {build.backend} build, {layers} layers offloaded" if gpu else
                      f"the CPU ({build.backend} build)") + (f"; {note}" if note else "")
            return engine.gpus(), chosen

        self.jobs.submit("task", "Looking for GPUs", work, on_done=self.shell.gpus_found.emit)

    def _show_counts(self, job: Job) -> None:
        if job.error is not None:
            text = f"{job.error.title}: {job.error.message}"
        else:
            local_ai = _local_ai(self.engine)
            text = f"Remembers {remembered(job.result)} · {local_ai}"
        self.shell.counts_changed.emit(job)
        self.shell.status_changed.emit(text)

    # ------------------------------------------------------- state, notices

    def notify(self, title: str, message: str, *, error: bool = False, warning: bool = False,
               page: str = "home") -> None:
        """A tray notification (the status bar where there is no tray); clicking it opens ``page``."""
        logger.log(logging.ERROR if error else logging.INFO, "%s: %s", title, message)
        if self.tray is not None and self.engine.settings.desktop.notifications:
            self.tray.notify(title, message, error=error, warning=warning, page=page)
        self.shell.show_message(f"{title}: {message}", 15000)

    def _fail(self, exc: EngramError) -> None:
        self._failed = exc
        self._update_state()
        self.notify(exc.title, exc.message, error=not isinstance(exc, INPUT_ERRORS),
                    warning=isinstance(exc, INPUT_ERRORS))

    def _job_finished(self, job: Job) -> None:
        if isinstance(job.error, IngestCancelled):
            self.notify("Stopped remembering a folder", job.error.message, page="memory")
        elif job.error is not None and job.external:
            # The editor that asked was told why; here it is news, not the app's own failure.
            self.notify("A folder an AI tool asked for stopped", f"{job.error.title}: {job.error.message}", warning=True,
                        page="memory")
        elif job.error is not None and job.kind == "download":
            # Said on the card or row that asked for it; a notification in case that page was left, no red tray:
            # an offline computer is not a broken Engram.
            self.notify("Download stopped", f"{job.error.title}: {job.error.message}", warning=True, page="settings")
        elif job.error is not None:
            # A recall's or a chat's error, and a refused note or deletion, are shown on the page that asked: the
            # person is looking at it, and the tray need not turn red for what they typed.
            if job.kind not in ("recall", "chat") and not (job.kind == "task" and isinstance(job.error, INPUT_ERRORS)):
                self._fail(job.error)
        elif job.kind == "ingest" and job.result is not None:
            r = output_of(job.result, IngestResult).result
            self.notify("Folder remembered", f"{r.project}: {r.files_indexed:,} files read, {r.files_unchanged:,} "
                        f"unchanged, {r.chunks_written:,} passages in {r.seconds:.1f} s.", page="memory")
        elif job.kind == "download":
            self.notify("Download finished", str(job.result), page="settings")
        if job.kind == "ingest":
            self.refresh()
        self._update_state()

    def _update_state(self, _job: object = None) -> None:
        running = self.jobs.running()
        if self._failed is not None:
            state, detail = "error", f"{self._failed.title}: {self._failed.message}"
        elif any(j.kind == "download" for j in running):
            state, detail = "downloading", ""
        elif any(j.kind == "ingest" for j in running):
            state, detail = "indexing", "paused" if self.engine.indexing_paused else ""
        else:
            state, detail = "ready", "indexing paused" if self.engine.indexing_paused else ""
        self.shell.state_changed.emit(state, detail)
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)


def _local_ai(engine: Engine) -> str:
    """Whether recall's local AI is on, in the status line's words (from a stat of its model file, no hashing)."""
    if not engine.settings.recall.llm:
        return "local AI off"
    ready = readiness(engine.settings, engine.paths)
    if not ready.where.on_this_computer:
        return "local AI off (the helper model runs elsewhere)"
    if ready.needs_download:
        return "local AI on, its model not downloaded yet"
    return "local AI on" if ready.ready else "local AI on, but it cannot run (see Settings)"
