"""Forget many memories at once, after seeing which: the window's side of the ``forget`` tool.

The person sets filters (words, project, kind, a creation date range); Preview runs ``forget`` without
``confirm`` and lists what would go; only then, and only while the filters stay as previewed, the destructive
button forgets exactly that. A file's passage takes its whole file, which later ingests of its folder leave out,
as ``engram forget`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Any, Literal

from PySide6.QtCore import QDate
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engram.core import Engine
from engram.core.tools.results import Forgotten

from .jobs import Job, Jobs
from .names import project_label, workspace_label

ANY = "Any"
#: The kinds a person picks from, in their words, and the tool's names for them.
KINDS: dict[str, Literal["note", "exchange", "chunk", "content"] | None] = {
    ANY: None, "Notes": "note", "Conversation turns": "exchange", "Passages of files": "chunk",
    "Passages of added texts": "content"}


def _date_box(name: str) -> tuple[QCheckBox, QDateEdit]:
    use = QCheckBox()
    use.setAccessibleName(f"Use {name}")
    edit = QDateEdit(QDate.currentDate())
    edit.setCalendarPopup(True)
    edit.setDisplayFormat("yyyy-MM-dd")
    edit.setAccessibleName(name)
    edit.setEnabled(False)
    use.toggled.connect(edit.setEnabled)
    return use, edit


def _day(edit: QDateEdit) -> date:
    chosen = edit.date()
    return date(chosen.year(), chosen.month(), chosen.day())


class ForgetDialog(QDialog):
    """Filters, a preview of what they take, and a Forget that takes exactly what was previewed."""

    def __init__(self, parent: QWidget, jobs: Jobs, engine: Engine, workspace: str, projects: list[str],
                 project: str | None, on_forgotten: Callable[[str], None]) -> None:
        """``on_forgotten(sentence)`` is told what went once it has gone."""
        super().__init__(parent)
        self.setWindowTitle(f"Forget memories — {workspace_label(workspace, engine.settings.store.default_workspace)}")
        self.setAccessibleName("Forget memories by filter")
        self._jobs, self._engine, self.workspace = jobs, engine, workspace
        self._on_forgotten = on_forgotten
        self.words = QLineEdit()
        self.words.setAccessibleName("Words")
        self.words.setPlaceholderText("e.g. staging server (optional: memories with these words or near them)")
        self.project = QComboBox()
        self.project.setAccessibleName("Project")
        self.project.addItem(ANY, None)
        for name in projects:
            self.project.addItem(project_label(name), name)
        if project in projects:
            self.project.setCurrentIndex(self.project.findData(project))
        self.kind = QComboBox()
        self.kind.setAccessibleName("Kind")
        self.kind.addItems(list(KINDS))
        self.use_since, self.since = _date_box("Written on or after")
        self.use_until, self.until = _date_box("Written on or before")
        form = QFormLayout()
        form.addRow("Words:", self.words)
        form.addRow("Project:", self.project)
        form.addRow("Kind:", self.kind)
        for label, use, edit in (("Written on or after:", self.use_since, self.since),
                                 ("Written on or before:", self.use_until, self.until)):
            row = QHBoxLayout()
            row.addWidget(use)
            row.addWidget(edit, 1)
            form.addRow(label, row)
        self.preview_button = QPushButton("Preview")
        self.preview_button.setDefault(True)
        self.preview_button.clicked.connect(self.preview)
        self.preview_text = QPlainTextEdit("Choose what to forget, then Preview lists it. Nothing goes before you "
                                           "press Forget.")
        self.preview_text.setReadOnly(True)
        self.preview_text.setAccessibleName("What would be forgotten")
        self.forget_button = QPushButton("Forget")
        self.forget_button.setEnabled(False)
        self.forget_button.clicked.connect(self.forget)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.preview_button)
        buttons.addStretch(1)
        buttons.addWidget(self.forget_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.preview_text, 1)
        layout.addLayout(buttons)
        for changed in (self.words.textChanged, self.project.currentTextChanged, self.kind.currentTextChanged,
                        self.use_since.toggled, self.use_until.toggled, self.since.dateChanged,
                        self.until.dateChanged):
            changed.connect(self._filters_changed)
        self._previewed: dict[str, Any] | None = None
        self.resize(620, 480)

    def filters(self) -> dict[str, Any]:
        """The ``forget`` arguments the form gives (only those set)."""
        out: dict[str, Any] = {"workspace": self.workspace}
        if self.words.text().strip():
            out["query"] = self.words.text().strip()
        if self.project.currentData() is not None:
            out["project"] = self.project.currentData()
        if (kind := KINDS.get(self.kind.currentText())) is not None:
            out["kind"] = kind
        if self.use_since.isChecked():
            out["since"] = datetime.combine(_day(self.since), time.min).astimezone(UTC)
        if self.use_until.isChecked():
            out["until"] = datetime.combine(_day(self.until), time.max).astimezone(UTC)
        return out

    def _filters_changed(self) -> None:
        self._previewed = None
        self.forget_button.setEnabled(False)
        self.forget_button.setText("Forget")

    def preview(self) -> None:
        """List what the filters take (``forget`` without ``confirm``: nothing changes)."""
        filters = self.filters()
        if len(filters) == 1:
            self.preview_text.setPlainText("Choose at least one filter: forgetting never takes a whole workspace "
                                           "at once.")
            return
        self.preview_button.setEnabled(False)
        tools = self._engine.tools
        self._jobs.submit("task", "Listing what would be forgotten", lambda report: tools.forget(**filters),
                          on_done=lambda job: self._previewed_it(filters, job))

    def _previewed_it(self, filters: dict[str, Any], job: Job) -> None:
        self.preview_button.setEnabled(True)
        if job.error is not None:
            self.preview_text.setPlainText(f"{job.error.title}: {job.error.message}")
            return
        if filters != self.filters():
            return  # changed while it was read: the person previews again
        found: Forgotten = job.result.result
        lines = job.result.text.splitlines()
        self.preview_text.setPlainText("\n".join(line for line in lines if "confirm=true" not in line))
        self._previewed = filters if found.count else None
        self.forget_button.setEnabled(bool(found.count))
        self.forget_button.setText(f"Forget {'this memory' if found.count == 1 else f'these {found.count:,}'}"
                                   if found.count else "Forget")

    def forget(self) -> None:
        """Forget exactly what the last preview listed (the same filters, now with ``confirm``)."""
        filters = self._previewed
        if filters is None:
            return
        self.forget_button.setEnabled(False)
        tools = self._engine.tools
        self._jobs.submit("task", "Forgetting", lambda report: tools.forget(**filters, confirm=True),
                          on_done=self._forgot)

    def _forgot(self, job: Job) -> None:
        if job.error is not None:
            self.preview_text.setPlainText(f"{job.error.title}: {job.error.message}")
            return
        self._previewed = None
        self.preview_text.setPlainText(job.result.text)
        self.forget_button.setText("Forget")
        self._on_forgotten(job.result.text)
