"""The Memory page's tidying: Edit, Merge and Split of the selected notes, Review (with its answers to possible
updates), Forget by filter, Export and Import.

``Tidy`` owns those buttons and the dialogs they open; the page hands it what is selected (``select``) and a way to
say an outcome (``say``), and reloads when told that memories changed. Every engine call runs as a job.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMenu, QMessageBox, QPushButton, QWidget

from engram.core import Engine
from engram.core.tools.results import Memory

from .. import revise
from .forget_dialog import ForgetDialog
from .jobs import Job, Jobs
from .memory_detail import MemoryDetail
from .memory_tree import Entry
from .review_dialog import ReviewDialog
from .revise_dialogs import EditDialog, ask_to_merge, ask_to_split
from .transfer_actions import TransferActions

#: The kinds of memory Edit and Merge take (a file's passages change with the file).
REVISED = ("note", "exchange")


def _button(text: str, name: str, tip: str, clicked: Callable[[], None]) -> QPushButton:
    button = QPushButton(text)
    button.setAccessibleName(name)
    button.setToolTip(tip)
    button.clicked.connect(lambda _checked=False: clicked())
    return button


class Tidy:
    """Edit, Merge, Review, Forget by filter, Export and Import for the page that builds it."""

    def __init__(self, page: QWidget, jobs: Jobs, engine: Engine, detail: MemoryDetail, *,
                 say: Callable[[str], None], changed: Callable[[], None],
                 context: Callable[[], tuple[str, str | None]], projects: Callable[[str], list[str]]) -> None:
        """``context()`` is the workspace and project the person is looking at; ``projects(workspace)`` the
        projects the tree shows for it; ``changed()`` follows a write."""
        self._page, self._jobs, self._engine, self.detail = page, jobs, engine, detail
        self._say, self._changed, self._context, self._projects = say, changed, context, projects
        self.transfer = TransferActions(page, jobs, engine, say, changed)
        self.edit_dialog: EditDialog | None = None
        self.review_dialog: ReviewDialog | None = None
        self.forget_dialog: ForgetDialog | None = None
        self.question: QMessageBox | None = None
        self._pair: tuple[str, str, str] | None = None  # workspace and the two notes selected for Merge
        self.edit_button = _button("Edit…", "Edit the selected note", "Change the note's text; the old text stays "
                                   "as its history", self.edit)
        self.merge_button = _button("Merge…", "Merge the two selected notes", "Select two notes of one project "
                                    "(Ctrl+click): the longer text is kept, the other becomes its history", self.merge)
        self.split_button = _button("Split…", "Split the selected note", "Make each text merged into this note a "
                                    "note of its own again, with its own date and tags", self.split)
        self.review_button = _button("Review…", "Review duplicates and history", "Notes written more than once, "
                                     "near duplicates and earlier versions, to look at and tidy", self.review)
        self.forget_filter_button = _button("Forget by filter…", "Forget memories by filter", "Forget many memories "
                                            "at once by words, project, kind or date, after a preview",
                                            self.forget_by_filter)
        self.export_button = _button("Export…", "Export to a folder", "Write this workspace (or the selected "
                                     "project) to a folder: every memory as JSON lines, and Markdown to read",
                                     self.export)
        self.import_button = QPushButton("Import…")
        self.import_button.setAccessibleName("Import memories")
        self.import_button.setToolTip("Bring in an Engram export, Claude Code's CLAUDE.md / MEMORY.md, "
                                      "basic-memory notes or mem0's export JSON")
        menu = QMenu(self.import_button)
        menu.addAction("From a folder…", lambda: self.import_(file=False))
        menu.addAction("From a file…", lambda: self.import_(file=True))
        self.import_button.setMenu(menu)
        detail.shown.connect(lambda _memory: self._refresh())
        self._refresh()

    @property
    def buttons(self) -> list[QPushButton]:
        """For the selection: Edit, Merge, Split. For the workspace: Review, Forget by filter, Export, Import."""
        return [self.edit_button, self.merge_button, self.split_button, self.review_button, self.forget_filter_button,
                self.export_button, self.import_button]

    # --------------------------------------------------------------- selection

    def select(self, entries: list[Entry]) -> None:
        """What the tree has selected: one note or file is shown in the detail pane; two notes can be merged."""
        notes = [e for e in entries if e.kind == "note"]
        self._pair = (notes[0].workspace, notes[0].key, notes[1].key) if (
            len(entries) == 2 and len(notes) == 2 and notes[0].workspace == notes[1].workspace) else None
        if len(entries) == 1 and entries[0].kind == "note":
            self.detail.show_memory(entries[0].workspace, entries[0].key)
        elif len(entries) == 1 and entries[0].kind == "file":
            self.detail.show_file(entries[0].workspace, entries[0].key)
        elif self._pair is None:
            self.detail.clear()
        self._refresh()

    def _editable(self) -> Memory | None:
        memory = self.detail.memory
        return memory if memory is not None and memory.kind in REVISED and not memory.superseded_by else None

    def _refresh(self) -> None:
        editable = self._editable()
        self.edit_button.setEnabled(self._pair is None and editable is not None)
        self.merge_button.setEnabled(self._pair is not None)
        self.split_button.setEnabled(self._pair is None and editable is not None and bool(editable.merged))

    # ---------------------------------------------------------------- edit

    def edit(self) -> None:
        """Open the shown note's text to change; Save stores the new version (a job)."""
        memory = self._editable()
        if memory is None:
            return
        workspace = self.detail.workspace
        self.edit_dialog = EditDialog(self._page, memory, lambda text: self._save(workspace, memory, text))
        self.edit_dialog.open()

    def _save(self, workspace: str, memory: Memory, text: str) -> None:
        tools = self._engine.tools
        self._jobs.submit("task", "Saving the note",
                          lambda report: revise.edit(tools, memory.id, text, workspace, lambda old: text),
                          on_done=lambda job: self._revised(workspace, job))

    def _revised(self, workspace: str, job: Job) -> None:
        if job.error is not None:
            self._say(f"{job.error.title}: {job.error.message}")
            return
        done: revise.Revised = job.result
        self._say(done.text[0].upper() + done.text[1:])
        self.detail.show_memory(workspace, done.id)
        self._changed()

    # --------------------------------------------------------------- merge

    def merge(self) -> None:
        """Ask, then merge the two selected notes."""
        if self._pair is not None:
            self.merge_pair(*self._pair, then=lambda: None)

    def merge_pair(self, workspace: str, first: str, second: str, then: Callable[[], None]) -> None:
        """Read two notes, ask whether to merge them, and merge them (jobs); ``then`` follows a merge."""
        tools = self._engine.tools
        self._jobs.submit("task", "Reading two notes",
                          lambda report: revise.memories(tools, [first, second], workspace),
                          on_done=lambda job: self._ask_merge(workspace, job, then))

    def _ask_merge(self, workspace: str, job: Job, then: Callable[[], None]) -> None:
        if job.error is not None:
            self._say(f"{job.error.title}: {job.error.message}")
            return
        a, b = job.result
        tools = self._engine.tools

        def merged(done: Job) -> None:
            self._revised(workspace, done)
            then()

        def merge() -> None:
            self._jobs.submit("task", "Merging two notes", lambda report: revise.merge(tools, a.id, b.id, workspace),
                              on_done=merged)

        self.question = ask_to_merge(self._page, a, b, merge)

    # --------------------------------------------------------------- split

    def split(self) -> None:
        """Ask, then make each text merged into the shown note a note of its own again (a job)."""
        memory = self._editable()
        if memory is None or not memory.merged:
            return
        workspace, tools = self.detail.workspace, self._engine.tools

        def split() -> None:
            self._jobs.submit("task", "Splitting a note",
                              lambda report: revise.unmerge(tools, memory.id, [], workspace),
                              on_done=lambda job: self._revised(workspace, job))

        self.question = ask_to_split(self._page, memory, split)

    # --------------------------------------------------------------- review, forget, transfer

    def review(self) -> None:
        """Open the review of the workspace (or project) being looked at."""
        workspace, project = self._context()
        self.review_dialog = ReviewDialog(self._page, self._jobs, self._engine, workspace, project,
                                          show=self.detail.show_memory, merge=self.merge_pair, answer=self.answer)
        self.review_dialog.show()

    def answer(self, workspace: str, newer: str, older: str, replaces: bool, then: Callable[[], None]) -> None:
        """A possible update answered (a job): the newer replaces the older, or both are true; ``then`` follows."""
        tools = self._engine.tools

        def answered(job: Job) -> None:
            if job.error is not None:
                self._say(f"{job.error.title}: {job.error.message}")
            else:
                done: revise.Revised = job.result
                self._say(done.text[0].upper() + done.text[1:])
                self._changed()
            then()

        if replaces:
            self._jobs.submit("task", "Replacing the older note",
                              lambda report: revise.supersede(tools, newer, [older], workspace), on_done=answered)
        else:
            self._jobs.submit("task", "Keeping both notes",
                              lambda report: revise.keep_both(tools, newer, older, workspace), on_done=answered)

    def forget_by_filter(self) -> None:
        """Open the dialog that previews, then forgets, memories chosen by filters."""
        workspace, project = self._context()
        self.forget_dialog = ForgetDialog(self._page, self._jobs, self._engine, workspace, self._projects(workspace),
                                          project, self._forgotten)
        self.forget_dialog.show()

    def _forgotten(self, text: str) -> None:
        self._say(text[0].upper() + text[1:])
        self.detail.clear()
        self._changed()

    def export(self) -> None:
        workspace, project = self._context()
        self.transfer.choose_export(workspace, project)

    def import_(self, *, file: bool) -> None:
        workspace, _project = self._context()
        self.transfer.choose_import(workspace, file=file)
