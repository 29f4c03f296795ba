"""Home: what Engram remembers in one sentence, a search box with results as cards, recent notes, jobs."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from engram.core import Engine

from .asking import QuestionPanel
from .counts import capture_sentence, state_sentence
from .editors import EditorsController
from .job_row import JobRow
from .jobs import Job, Jobs
from .shell import Shell


class OverviewPage(QWidget):
    """Home: the state in one sentence, a search box with results as cards, recent notes, jobs in progress."""

    def __init__(self, jobs: Jobs, engine: Engine, editors: EditorsController, shell: Shell) -> None:
        super().__init__()
        self.engine = engine
        self.editors = editors
        layout = QVBoxLayout(self)
        self.state = QLabel("Counting what Engram remembers…")
        self.state.setWordWrap(True)
        self.state.setAccessibleName("What Engram remembers")
        layout.addWidget(self.state)
        self.capture = QLabel("")
        self.capture.setWordWrap(True)
        self.capture.setAccessibleName("What capture stored today")
        self.capture.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(self.capture)
        self._overview: dict[str, Any] | None = None
        editors.changed.connect(self.show_state)
        shell.counts_changed.connect(self.show_overview)

        self.panel = QuestionPanel(
            jobs, engine, editors, shell, "search", placeholder="Search your memory: e.g. rollback approval", button="Search",
            box_name="Search", empty="What you find appears here as cards: where each passage comes from, the "
                                     "words that matched, and actions to open, copy or forget it.")
        layout.addWidget(self.panel, 3)
        self.question = self.panel.question
        self.ask_button = self.panel.ask_button
        self.results = self.panel.results
        self.searched = self.panel.shown
        self.forgotten = self.panel.forgotten

        layout.addWidget(QLabel("<b>Recent notes</b>"))
        self.recent = QListWidget()
        self.recent.setAccessibleName("Recent notes")
        self.recent.setWordWrap(True)
        self.recent.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout.addWidget(self.recent, 1)

        layout.addWidget(QLabel("<b>Jobs</b>"))
        self.jobs_box = QVBoxLayout()
        self.no_jobs = QLabel("Nothing running.")
        self.jobs_box.addWidget(self.no_jobs)
        layout.addLayout(self.jobs_box)
        self._rows: dict[int, JobRow] = {}
        jobs.changed.connect(self.show_job)

    @property
    def confirm(self) -> QMessageBox | None:
        """The open question before a Forget (tests press its buttons)."""
        return self.panel.confirm

    # ------------------------------------------------------------------ counts

    def show_overview(self, job: Job) -> None:
        """Show the counts job's result (``Desktop.refresh`` runs it for the tray and this page: ``counts_changed``)."""
        if job.error is not None:
            self.state.setText(f"{job.error.title}: {job.error.message}")
            return
        data = job.result
        self._overview = data
        self.show_state()
        self.capture.setText(capture_sentence(data["capture"]))
        self.recent.clear()
        for m in data["recent"]:
            self.recent.addItem(f"{m['updated_at']:%Y-%m-%d %H:%M}  [{m['project']}]  {m['title']}")
        if not data["recent"]:
            self.recent.addItem("No notes yet (agents add them with the remember tool; you can on the Memory page).")

    def show_state(self) -> None:
        """The sentence at the top, from the last counts and the editors' states."""
        if self._overview is None:
            return
        connected = sum(1 for e in self.editors.states.values() if e.connected)
        self.state.setText(state_sentence(self._overview, connected, self.engine.settings.recall.llm))

    # -------------------------------------------------------------------- jobs

    def show_job(self, job: Job) -> None:
        if job.kind in ("task", "chat"):  # a chat turn shows on the Ask page
            return
        row = self._rows.get(job.id)
        if job.finished:
            if row is not None:
                self.jobs_box.removeWidget(row)
                row.deleteLater()
                del self._rows[job.id]
        elif row is None:
            row = self._rows[job.id] = JobRow(job)
            self.jobs_box.addWidget(row)
        else:
            row.update_job(job)
        self.no_jobs.setVisible(not self._rows)

    def job_row(self, job_id: int) -> JobRow | None:
        return self._rows.get(job_id)
