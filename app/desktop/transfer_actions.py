"""Export… and Import… on the Memory page: ``engram export`` and ``engram import`` for a person.

Export asks for a folder to put the export in and writes a new folder inside it, named after the workspace (and
project) and the time, so nothing already there is touched. Import asks for an Engram export folder or a peer's
notes (a folder of basic-memory notes or with ``CLAUDE.md``/``MEMORY.md``, or mem0's export JSON), counts what it
would bring in first (a dry run), and asks before writing anything. Both run as jobs and start in the home folder.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from engram.core import Engine
from engram.core.transfer.results import Exported, Imported

from .jobs import Job, Jobs
from .names import project_label, workspace_label

Say = Callable[[str], None]


def export_folder_name(workspace: str, project: str | None, now: datetime) -> str:
    """The new folder an export goes into: ``engram-WORKSPACE[-PROJECT]-YYYYMMDD-HHMM``."""
    return "-".join(p for p in ("engram", workspace, project or "", f"{now:%Y%m%d-%H%M}") if p)


class TransferActions:
    """Export… and Import… of one page; each dialog and question is kept on the object (tests answer them)."""

    def __init__(self, parent: QWidget, jobs: Jobs, engine: Engine, say: Say, changed: Callable[[], None]) -> None:
        """``say(sentence)`` reports an outcome on the page; ``changed()`` follows an import that wrote."""
        self._parent, self._jobs, self._engine = parent, jobs, engine
        self._say, self._changed = say, changed
        self.dialog: QFileDialog | None = None
        self.question: QMessageBox | None = None

    def _dialog(self, title: str, mode: QFileDialog.FileMode, chosen: Callable[[str], object]) -> QFileDialog:
        dialog = QFileDialog(self._parent, title, str(Path.home()))
        dialog.setFileMode(mode)
        if mode == QFileDialog.FileMode.Directory:
            dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: chosen(path) if path else None)
        self.dialog = dialog
        dialog.open()
        return dialog

    # ------------------------------------------------------------------ export

    def _label(self, workspace: str) -> str:
        return workspace_label(workspace, self._engine.settings.store.default_workspace)

    def choose_export(self, workspace: str, project: str | None) -> QFileDialog:
        """Ask where to put an export of ``workspace`` (or its ``project``), then write it there in a job."""
        what = f"project {project_label(project)}" if project else self._label(workspace)
        return self._dialog(f"Export {what} into a folder", QFileDialog.FileMode.Directory,
                            lambda parent: self.export(parent, workspace, project))

    def export(self, parent: str, workspace: str, project: str | None) -> Job:
        """Write the export into a new folder inside ``parent`` (a job)."""
        folder = Path(parent) / export_folder_name(workspace, project, datetime.now())
        engine = self._engine
        return self._jobs.submit("task", f"Exporting {project_label(project) if project else self._label(workspace)}",
                                 lambda report: engine.export_workspace(folder, workspace=workspace, project=project),
                                 on_done=self._exported)

    def _exported(self, job: Job) -> None:
        if job.error is not None:
            self._say(f"{job.error.title}: {job.error.message}")
            return
        done: Exported = job.result
        self._say(done.summary()[0].upper() + done.summary()[1:])

    # ------------------------------------------------------------------ import

    def choose_import(self, workspace: str, *, file: bool = False) -> QFileDialog:
        """Ask for a folder (or, with ``file``, a file such as mem0's JSON) to import into ``workspace``."""
        mode = QFileDialog.FileMode.ExistingFile if file else QFileDialog.FileMode.Directory
        return self._dialog("Import memories from a file" if file else "Import memories from a folder", mode,
                            lambda path: self.count_import(path, workspace))

    def count_import(self, path: str, workspace: str) -> Job:
        """Count what ``path`` would bring in (a dry run in a job), then ask before importing it."""
        engine = self._engine
        return self._jobs.submit("task", "Reading what to import",
                                 lambda report: engine.import_path(path, workspace=workspace, dry_run=True),
                                 on_done=lambda job: self._counted(path, workspace, job))

    def _counted(self, path: str, workspace: str, job: Job) -> None:
        if job.error is not None:
            self._say(f"{job.error.title}: {job.error.message}")
            return
        counted: Imported = job.result
        if not any(counted.added.model_dump().values()):
            self._say(f"Nothing to import from {path}: " + counted.summary().replace(" Nothing was written (--dry-run).",
                                                                                     ""))
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Import", f"Import into {self._label(workspace)}?", parent=self._parent)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.setInformativeText(counted.summary().replace(" Nothing was written (--dry-run).", "").replace(
            "would import", "This would import", 1) + "\n\nA note already remembered is counted on it, not stored "
                                                     "twice; secrets are redacted.")
        go = box.addButton("Import", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(go)
        box.finished.connect(lambda _result: self.run_import(path, workspace) if box.clickedButton() is go else None)
        self.question = box
        box.open()

    def run_import(self, path: str, workspace: str) -> Job:
        """Import ``path`` into ``workspace`` (a job)."""
        engine = self._engine
        return self._jobs.submit("task", f"Importing {Path(path).name}",
                                 lambda report: engine.import_path(path, workspace=workspace), on_done=self._imported)

    def _imported(self, job: Job) -> None:
        if job.error is not None:
            self._say(f"{job.error.title}: {job.error.message}")
            return
        done: Imported = job.result
        self._say(done.summary()[0].upper() + done.summary()[1:])
        self._changed()
