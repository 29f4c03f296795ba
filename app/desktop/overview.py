"""The Overview page: what each workspace holds, recent memories, a recall box, jobs in progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engram.core import EngramError

from .jobs import Job

if TYPE_CHECKING:
    from .desktop import Desktop


def collect_overview(engine: Any) -> dict[str, Any]:
    """Counts per workspace and project and the latest notes (runs on a worker thread)."""
    workspaces: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    for name in engine.workspace_names():
        try:
            out = engine.call("wake_up", {"workspace": name, "limit": 8})
        except EngramError as exc:
            workspaces.append({"name": name, "error": exc.message, "projects": [], "memories": 0, "sources": 0})
            continue
        w = out.result
        workspaces.append({"name": name, "memories": w.memories, "sources": w.sources,
                           "projects": [(p.project, p.memories, p.sources) for p in w.projects]})
        recent.extend({"workspace": name, "title": m.title or m.content[:80], "project": m.project,
                       "updated_at": m.updated_at, "id": m.id} for m in w.recent)
    recent.sort(key=lambda m: m["updated_at"], reverse=True)
    return {"workspaces": workspaces, "recent": recent[:10]}


class JobRow(QWidget):
    def __init__(self, job: Job) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setFixedWidth(220)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        self.update_job(job)

    def update_job(self, job: Job) -> None:
        self.label.setText(f"{job.title}" + (f" — {job.detail}" if job.detail else ""))
        percent = job.percent
        if percent is None:
            self.bar.setRange(0, 0)  # busy indicator until the total is known
        else:
            self.bar.setRange(0, 100)
            self.bar.setValue(percent)


class OverviewPage(QWidget):
    """Counts, recent memories, recall, jobs. Every engine call runs as a job."""

    recall_shown = Signal(str)  # the rendered response, once shown (tests wait on it)

    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        self.desktop = desktop
        layout = QVBoxLayout(self)

        ask = QHBoxLayout()
        self.question = QLineEdit()
        self.question.setPlaceholderText("Ask your memory (recall): e.g. how do we deploy, and how do we roll back?")
        self.question.returnPressed.connect(self.run_recall)
        self.ask_button = QPushButton("Recall")
        self.ask_button.clicked.connect(self.run_recall)
        ask.addWidget(self.question, 1)
        ask.addWidget(self.ask_button)
        layout.addLayout(ask)
        self.answer = QTextBrowser()
        self.answer.setFont(QFont("monospace"))
        self.answer.setPlaceholderText("The recalled evidence appears here, each block with its source and lines.")
        layout.addWidget(self.answer, 3)

        row = QHBoxLayout()
        left = QVBoxLayout()
        left.addWidget(QLabel("<b>What is stored</b>"))
        self.counts = QTreeWidget()
        self.counts.setHeaderLabels(["Workspace / project", "Memories", "Sources"])
        self.counts.setColumnWidth(0, 220)
        left.addWidget(self.counts)
        right = QVBoxLayout()
        right.addWidget(QLabel("<b>Recent notes</b>"))
        self.recent = QListWidget()
        right.addWidget(self.recent)
        row.addLayout(left, 1)
        row.addLayout(right, 1)
        layout.addLayout(row, 2)

        layout.addWidget(QLabel("<b>Jobs</b>"))
        self.jobs_box = QVBoxLayout()
        self.no_jobs = QLabel("Nothing running.")
        self.jobs_box.addWidget(self.no_jobs)
        layout.addLayout(self.jobs_box)
        self._rows: dict[int, JobRow] = {}
        desktop.jobs.changed.connect(self.show_job)

    # ------------------------------------------------------------------ counts

    def show_overview(self, job: Job) -> None:
        """Show the counts job's result (``Desktop.refresh`` runs it for the tray and this page)."""
        if job.error is not None:
            self.counts.clear()
            self.counts.addTopLevelItem(QTreeWidgetItem([f"{job.error.title}: {job.error.message}", "", ""]))
            return
        data = job.result
        self.counts.clear()
        for w in data["workspaces"]:
            top = QTreeWidgetItem([w["name"], f"{w['memories']:,}", f"{w['sources']:,}"])
            if w.get("error"):
                top.setText(1, "—")
                top.setToolTip(0, w["error"])
            for project, memories, sources in w["projects"]:
                top.addChild(QTreeWidgetItem([project, f"{memories:,}", f"{sources:,}"]))
            self.counts.addTopLevelItem(top)
            top.setExpanded(True)
        if not data["workspaces"]:
            self.counts.addTopLevelItem(QTreeWidgetItem(["Nothing stored yet: use Ingest a folder…", "", ""]))
        self.recent.clear()
        for m in data["recent"]:
            self.recent.addItem(f"{m['updated_at']:%Y-%m-%d %H:%M}  [{m['project']}]  {m['title']}")
        if not data["recent"]:
            self.recent.addItem("No notes yet (agents add them with the remember tool).")

    # ------------------------------------------------------------------ recall

    def run_recall(self) -> None:
        question = self.question.text().strip()
        if not question:
            self.answer.setPlainText("Type a question first.")
            return
        self.ask_button.setEnabled(False)
        self.answer.setPlainText("Recalling…")
        engine = self.desktop.engine
        self.desktop.jobs.submit("recall", f"Recall: {question[:60]}",
                                 lambda report: engine.call("recall", {"question": question}).text,
                                 on_done=self.show_recall)

    def show_recall(self, job: Job) -> None:
        self.ask_button.setEnabled(True)
        text = job.result if job.error is None else f"{job.error.title}: {job.error.message}"
        self.answer.setPlainText(text)
        self.recall_shown.emit(text)

    # -------------------------------------------------------------------- jobs

    def show_job(self, job: Job) -> None:
        if job.kind == "task":
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
