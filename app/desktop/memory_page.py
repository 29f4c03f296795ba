"""The Memory page: what Engram remembers, by workspace, project, file and note, and ways to tidy it.

A tree lists the workspaces (a shared one, in a team's bucket, says so) and their projects; opening a project loads
its files (200 at a time, "Show more…" loads the next page) and its latest notes. Beside the tree, the selected
note or file in full with where it came from and its versions (``memory_detail``); Edit, Merge, Review, Forget by
filter, Export and Import work on the selection or the workspace (``memory_tidy``). Below: a box to add a note, a
button to ingest a folder with the ingests in progress (each with Cancel: it stops after the files being written,
and those stay remembered), a switch to pause indexing, Forget for the selected file or note, and a button that
adds a shared workspace.
Every engine call runs as a job; the tree is read again a second after anyone writes or forgets memories.
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engram.core import Engine, EngramError
from engram.core.tool_calls import output_of
from engram.core.tools.results import Deleted, Stored, WorkspaceStatus
from engram.core.tools.writes import DEFAULT_PROJECT
from engram.core.workspaces import WorkspacePlace

from .cards import ForgetTarget, ask_to_forget
from .counts import count_of
from .job_row import JobRow
from .jobs import Job, Jobs
from .memory_detail import MemoryDetail
from .memory_tidy import Tidy
from .memory_tree import NOTES_SHOWN, ROLE, Entry, Row, entry_of, fill, read_project, read_workspaces, sync
from .names import NO_PROJECT, cli_names, project_label, workspace_label
from .shared_dialog import SharedWorkspaceDialog
from .shell import Shell

#: Writes by anyone are let settle this long before the tree is read again.
RELOAD_DELAY_MS = 1000


W = TypeVar("W", bound=QWidget)


def _untouched(name: str, status: WorkspaceStatus | EngramError, default: str) -> bool:
    """Whether ``name`` is the default workspace, made on first use and still holding nothing of the person's."""
    return (name == default and isinstance(status, WorkspaceStatus) and not status.shared_at
            and status.memories == 0 and status.sources == 0)


def _named(widget: W, name: str) -> W:
    widget.setAccessibleName(name)
    return widget


def _row(*widgets: QWidget, stretching: int = 0) -> QHBoxLayout:
    """Widgets side by side, the one at ``stretching`` taking the room left."""
    row = QHBoxLayout()
    for index, widget in enumerate(widgets):
        row.addWidget(widget, 1 if index == stretching else 0)
    return row



#: What the message line says while no action has said anything, by the kind of item selected.
_HINTS = {
    "": "Open a project to see its files and notes.",
    "project": "Open Files or Notes to see what this project holds.",
    "note": "Edit changes this note (its earlier text is kept); Ctrl+click a second note to merge the two.",
    "file": "Forget removes this file from memory; remembering its folder again does not bring it back.",
}


def hint_for(entry: Entry | None) -> str:
    """The message line's hint for the selected tree item (None: nothing selected)."""
    kind = entry.kind if entry is not None else ""
    if kind in ("file", "note"):
        return _HINTS[kind]
    if kind in ("project", "files", "notes"):
        return _HINTS["project"]
    return _HINTS[""]

class MemoryPage(QWidget):
    """Browse, add to and tidy what Engram remembers. Every engine call runs as a job."""

    forgotten = Signal(str)  # what was forgotten, in a sentence (or why not)
    note_added = Signal(str)  # the note was stored, in a sentence (or why not)

    def __init__(self, jobs: Jobs, engine: Engine, shell: Shell) -> None:
        super().__init__()
        self.jobs = jobs
        self.engine = engine
        self.shell = shell
        self.confirm: QMessageBox | None = None
        self.tree = _named(QTreeWidget(), "What Engram remembers, by workspace, project, file and note")
        self.tree.setHeaderHidden(True)
        self.tree.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)  # two notes, for Merge
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long path keeps its start and its file name
        self.tree.setWordWrap(True)
        self.tree.itemExpanded.connect(self._expanded)
        self.tree.itemActivated.connect(self._activated)
        self.tree.itemClicked.connect(self._activated)
        self.tree.installEventFilter(self)
        self.message = _named(QLabel(hint_for(None)), "Memory page messages")
        self.message.setWordWrap(True)
        self.forget_button = _named(QPushButton("Forget…"), "Forget the selected file or note")
        self.forget_button.setToolTip("Forget the selected file or note (Delete key)")
        self.forget_button.setEnabled(False)
        self.forget_button.clicked.connect(self.confirm_forget)
        self.tree.itemSelectionChanged.connect(self._selection_changed)
        self.detail = MemoryDetail(jobs, engine)
        self.tidy = Tidy(self, jobs, engine, self.detail, say=self._say, changed=self._changed,
                         context=self.context, projects=self.projects_of)
        self.share_button = _named(QPushButton("Add a shared workspace…"), "Add a shared workspace")
        self.share_button.setToolTip("A workspace in a bucket your team shares (S3 or S3-compatible storage)")
        self.share_button.clicked.connect(self.add_shared_workspace)
        self.shared_dialog: SharedWorkspaceDialog | None = None

        self.note = _named(QPlainTextEdit(), "Note to remember")
        self.note.setPlaceholderText("Something to remember, e.g. we deploy on Tuesdays after the review.")
        self.note.setTabChangesFocus(True)
        self.project = _named(QLineEdit(), "Project of the note")
        self.project.setPlaceholderText(f"{NO_PROJECT} (or a project's name)")
        self.add_button = _named(QPushButton("Add"), "Add the note")
        self.add_button.clicked.connect(self.add_note)
        add = _named(QGroupBox("Add a note"), "Add a note")
        add_layout = QVBoxLayout(add)
        add_layout.addWidget(self.note)
        add_layout.addLayout(_row(QLabel("Project:"), self.project, self.add_button, stretching=1))

        self.ingest_button = _named(QPushButton("Remember a folder…"), "Remember a folder")
        self.ingest_button.clicked.connect(shell.choose_folder_to_ingest)
        self.pause = _named(QCheckBox("Pause indexing"), "Pause indexing")
        self.pause.setChecked(engine.indexing_paused)
        self.pause.toggled.connect(shell.set_indexing_paused)
        self.no_jobs = _named(QLabel("No folder is being indexed."), "Ingests in progress")
        self.jobs_box = QVBoxLayout()
        self.jobs_box.addWidget(self.no_jobs)
        ingest = _named(QGroupBox("Files"), "Ingest files")
        ingest_layout = QVBoxLayout(ingest)
        ingest_layout.addLayout(_row(self.ingest_button, self.pause))
        ingest_layout.addLayout(self.jobs_box)
        ingest_layout.addStretch(1)

        split = QSplitter()
        split.setChildrenCollapsible(False)
        split.addWidget(self.tree)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        edit, merge, split_note, review, forget_filter, export, import_ = self.tidy.buttons
        layout = QVBoxLayout(self)
        layout.addLayout(_row(review, forget_filter, export, import_, self.share_button, QWidget(), stretching=5))
        layout.addWidget(split, 3)
        layout.addLayout(_row(self.message, edit, merge, split_note, self.forget_button))
        layout.addLayout(_row(add, ingest), 1)
        self._rows: dict[int, JobRow] = {}
        self._cancels: dict[int, QPushButton] = {}
        jobs.changed.connect(self.show_job)

        self._reload = QTimer(self)
        self._reload.setSingleShot(True)
        self._reload.setInterval(RELOAD_DELAY_MS)
        self._reload.timeout.connect(self.reload)
        jobs.memories_changed.connect(lambda _workspace: self._reload.start())
        self.reload()

    # -------------------------------------------------------------------- tree

    def reload(self) -> None:
        """Read the workspaces and projects again (a job); open projects read their files and notes again."""
        self._reload.stop()
        engine = self.engine
        self.jobs.submit("task", "Listing memories", lambda report: read_workspaces(engine),
                         on_done=self._show_workspaces)

    def _show_workspaces(self, job: Job) -> None:
        root = self.tree.invisibleRootItem()
        if job.error is not None:
            sync(root, [(f"{job.error.title}: {job.error.message}", Entry("empty"), "")])
            return
        rows: list[Row] = []
        listed = list(job.result)
        if len(listed) == 1 and _untouched(listed[0][0], listed[0][1], self.engine.settings.store.default_workspace):
            listed = []  # the default workspace made on first use, still empty: nothing is stored yet
        default = self.engine.settings.store.default_workspace
        for name, status in listed:
            label = workspace_label(name, default)
            if isinstance(status, EngramError):
                rows.append((f"{label} — could not be read: {status.message}", Entry("workspace", name), ""))
                continue
            shared = " (shared)" if status.shared_at else ""
            text = (f"{label}{shared} — {count_of(status.memories, 'memory', 'memories')}, "
                    f"{count_of(status.sources, 'file', 'files')}")
            where = f"Shared: {status.shared_at}" if status.shared_at else f"On this computer: {status.folder}"
            rows.append((text, Entry("workspace", name), " ".join(filter(None, [where, cli_names(workspace=name, default=default)]))))
        if not rows:
            rows.append(("Nothing stored yet: add a note or remember a folder.", Entry("empty"), ""))
        for item, (name, status) in zip(sync(root, rows), listed, strict=False):
            if isinstance(status, EngramError):
                continue
            projects = [(f"{project_label(p.project)} — {count_of(p.memories, 'memory', 'memories')}, "
                         f"{count_of(p.sources, 'file', 'files')}", Entry("project", name, p.project),
                         cli_names(project=p.project)) for p in status.projects]
            for project, p in zip(sync(item, projects), status.projects, strict=True):
                if project.childCount() == 0:  # new: a placeholder until it is opened
                    project.addChild(fill(QTreeWidgetItem(), ("Loading…", Entry("loading", name, p.project), "")))
                elif project.isExpanded() and not self._placeholder(project):
                    self.load_project(name, p.project)  # open: show what changed
            if self.tree.topLevelItemCount() == 1:
                item.setExpanded(True)

    @staticmethod
    def _placeholder(project: QTreeWidgetItem) -> bool:
        first = entry_of(project.child(0))
        return first is not None and first.kind == "loading"

    def _find(self, *path: tuple[str, str, str, str]) -> QTreeWidgetItem | None:
        item: QTreeWidgetItem | None = self.tree.invisibleRootItem()
        for identity in path:
            assert item is not None
            item = next((item.child(i) for i in range(item.childCount())
                         if (e := entry_of(item.child(i))) is not None and e.identity == identity), None)
            if item is None:
                return None
        return item

    def project_item(self, workspace: str, project: str) -> QTreeWidgetItem | None:
        """The tree item of ``project`` in ``workspace`` (None while the tree does not show it)."""
        return self._find(("workspace", workspace, "", ""), ("project", workspace, project, ""))

    def _expanded(self, item: QTreeWidgetItem) -> None:
        entry = entry_of(item)
        if entry is not None and entry.kind == "project" and self._placeholder(item):
            self.load_project(entry.workspace, entry.project)

    def _activated(self, item: QTreeWidgetItem) -> None:
        entry = entry_of(item)
        if entry is not None and entry.kind == "more":
            item.setData(0, ROLE, Entry("loading", entry.workspace, entry.project))  # one click, one page
            item.setText(0, "Loading…")
            self.load_project(entry.workspace, entry.project, entry.offset)

    def load_project(self, workspace: str, project: str, offset: int = 0) -> None:
        """Read one page of a project's files (with the first page, its latest notes) in a job."""
        engine = self.engine
        self.jobs.submit("task", f"Listing {project}",
                         lambda report: read_project(engine, workspace, project, offset),
                         on_done=lambda job: self._show_project(workspace, project, offset, job))

    def _show_project(self, workspace: str, project: str, offset: int, job: Job) -> None:
        item = self.project_item(workspace, project)
        if item is None:
            return  # gone since it was asked for
        if job.error is not None:  # a loading entry: opening the project again retries
            sync(item, [(f"Could not read it: {job.error.message}", Entry("loading", workspace, project), "")])
            return
        files, notes = job.result
        rows: list[Row] = [(f"{s.path} ({count_of(s.chunk_count, 'passage', 'passages')})",
                            Entry("file", workspace, project, s.source, s.path),
                            f"{s.path}\n{count_of(s.chunk_count, 'passage', 'passages')}, read "
                            f"{s.ingested_at:%Y-%m-%d %H:%M}") for s in files.items]
        end = offset + len(files.items)
        if files.total > end:
            rows.append((f"Show more… ({count_of(files.total - end, 'more file', 'more files')})",
                         Entry("more", workspace, project, offset=end), "Load the next files"))
        if offset:  # the next page goes after those shown, in place of its "Show more…"
            group = self._find(("workspace", workspace, "", ""), ("project", workspace, project, ""),
                               ("files", workspace, project, ""))
            if group is not None:
                group.takeChild(group.childCount() - 1)
                group.addChildren([fill(QTreeWidgetItem(), row) for row in rows])
            return
        first = self._placeholder(item)
        note_rows: list[Row] = []
        for m in notes:
            label = m.title or " ".join(m.content.split())[:80]
            note_rows.append((f"{m.updated_at:%Y-%m-%d} · {label}", Entry("note", workspace, project, m.id, label),
                              m.content[:500]))
        shown = "latest 20 notes" if len(notes) == NOTES_SHOWN else count_of(len(notes), "note", "notes")
        groups = sync(item, [(f"Files ({files.total:,})", Entry("files", workspace, project), ""),
                              (f"Notes ({shown})", Entry("notes", workspace, project), "")])
        sync(groups[0], rows)
        sync(groups[1], note_rows)
        if first:
            for group in groups:
                group.setExpanded(True)

    # ------------------------------------------------------------------ shared

    def add_shared_workspace(self) -> None:
        """Open the dialog that adds a shared workspace (window-modal; it contacts the bucket in a job)."""
        engine = self.engine
        self.shared_dialog = SharedWorkspaceDialog(self, self.jobs, engine.add_shared_workspace,
                                                   self._shared_added)
        self.shared_dialog.open()

    def _shared_added(self, place: WorkspacePlace) -> None:
        joined = (f"joined it ({count_of(place.memories or 0, 'memory', 'memories')} there)" if place.memories
                  else "it is empty")
        self.message.setText(f"Added shared workspace {place.name}: {place.where}; {joined}.")
        self.reload()

    # ------------------------------------------------------------------ forget

    def selected(self) -> Entry | None:
        """The selected file or note (None when something else, several things, or nothing is selected)."""
        chosen = self.tree.selectedItems()
        entry = entry_of(chosen[0]) if len(chosen) == 1 else None
        return entry if entry is not None and entry.kind in ("file", "note") else None

    def _selection_changed(self) -> None:
        self.forget_button.setEnabled(self.selected() is not None)
        if self.message.text() in _HINTS.values():  # a hint, not what an action said: it follows the selection
            self.message.setText(hint_for(entry_of(self.tree.currentItem())))
        self.tidy.select([e for item in self.tree.selectedItems() if (e := entry_of(item)) is not None])

    def context(self) -> tuple[str, str | None]:
        """The workspace and project the person is looking at: the selection's, else the default workspace's."""
        entry = entry_of(self.tree.currentItem())
        if entry is not None and entry.workspace:
            return entry.workspace, entry.project or None
        return self.engine.settings.store.default_workspace, None

    def projects_of(self, workspace: str) -> list[str]:
        """The projects the tree lists for ``workspace``."""
        item = self._find(("workspace", workspace, "", ""))
        if item is None:
            return []
        return [e.project for i in range(item.childCount()) if (e := entry_of(item.child(i))) and e.kind == "project"]

    def _say(self, text: str) -> None:
        self.message.setText(text)

    def _changed(self) -> None:
        self.reload()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The Delete key on the tree asks to forget the selected file or note."""
        if (watched is self.tree and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Delete and self.selected() is not None):
            self.confirm_forget()
            return True
        return super().eventFilter(watched, event)

    def confirm_forget(self) -> None:
        """Ask before forgetting the selected file or note (a window-modal box that blocks nothing else)."""
        entry = self.selected()
        if entry is None:
            return
        if entry.kind == "file":
            target = ForgetTarget({"source": entry.key, "workspace": entry.workspace}, entry.label, "source")
        else:
            target = ForgetTarget({"ids": [entry.key], "workspace": entry.workspace}, entry.label, "note")
        self.confirm = ask_to_forget(self, target, lambda: self.forget(target, entry))

    def forget(self, target: ForgetTarget, entry: Entry) -> None:
        """Forget ``target`` in a job; then the project it was in is read again."""
        tools = self.engine.tools
        self.jobs.submit("task", f"Forget {target.label}", lambda report: tools.delete(**target.args),
                         on_done=lambda job: self._forgotten(target, entry, job))

    def _forgotten(self, target: ForgetTarget, entry: Entry, job: Job) -> None:
        if job.error is not None:
            text = f"{job.error.title}: {job.error.message}"
        elif target.kind == "source":
            text = f"Forgot {target.label} ({count_of(output_of(job.result, Deleted).result.chunks, 'passage', 'passages')})."
        else:
            text = f"Forgot the note “{target.label}”."
        self.message.setText(text)
        self.load_project(entry.workspace, entry.project)
        self.forgotten.emit(text)

    # -------------------------------------------------------------------- note

    def add_note(self) -> None:
        """Store the note typed in the box (a job); an empty note is refused here, before any job."""
        content = self.note.toPlainText()
        if not content.strip():
            self._say_added("Nothing to add: type the note first.")
            return
        project = self.project.text().strip() or DEFAULT_PROJECT
        self.add_button.setEnabled(False)
        tools = self.engine.tools
        self.jobs.submit("task", "Add a note", lambda report: tools.store(content, project=project),
                         on_done=self._added)

    def _added(self, job: Job) -> None:
        self.add_button.setEnabled(True)
        if job.error is not None:  # the engine's refusal (too long, a bad project name) as it gave it
            self._say_added(f"{job.error.title}: {job.error.message}")
            return
        self.note.clear()
        self.reload()
        project = output_of(job.result, Stored).result.project
        self._say_added("Added the note." if project == DEFAULT_PROJECT else f"Added the note to {project}.")

    def _say_added(self, text: str) -> None:
        self.message.setText(text)
        self.note_added.emit(text)

    # -------------------------------------------------------------------- jobs

    def show_job(self, job: Job) -> None:
        """Follow an ingest: a progress bar with its detail while it runs, gone when it ends."""
        if job.kind != "ingest":
            return
        row = self._rows.get(job.id)
        if job.finished:
            if row is not None:
                self.jobs_box.removeWidget(row)
                row.deleteLater()
                del self._rows[job.id]
        elif row is None:
            row = self._rows[job.id] = JobRow(job)
            row.label.setWordWrap(True)
            row.bar.setFixedWidth(120)
            row.label.setAccessibleName("Ingest")
            row.bar.setAccessibleName("Ingest progress")
            cancel = _named(QPushButton("Cancel"), f"Cancel {job.title}")
            cancel.setToolTip("Stop after the files being written now; the files already done stay remembered.")
            cancel.clicked.connect(lambda _c=False, job_id=job.id: self.cancel_ingest(job_id))
            row.line.addWidget(cancel)
            self._cancels[job.id] = cancel
            self.jobs_box.addWidget(row)
        else:
            row.update_job(job)
        button = self._cancels.get(job.id)
        if job.finished:
            self._cancels.pop(job.id, None)
        elif button is not None:
            button.setEnabled(bool(job.ingest) and not job.cancelling)  # until the engine has named the ingest
        self.no_jobs.setVisible(not self._rows)

    def cancel_ingest(self, job_id: int) -> None:
        """Stop that ingest after its current batch; what it finished stays (a notice says so when it ends)."""
        if not self.shell.cancel_ingest(job_id):
            self.message.setText("Remembering that folder has already ended.")

    def showEvent(self, event: QShowEvent) -> None:
        """The tray can pause indexing too: show the engine's state when the page appears."""
        self.pause.blockSignals(True)
        self.pause.setChecked(self.engine.indexing_paused)
        self.pause.blockSignals(False)
        super().showEvent(event)
