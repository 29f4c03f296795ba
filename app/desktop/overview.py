"""The Overview page: what each workspace holds, recent memories, a recall box, jobs in progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engram.core import EngramError

from .cards import ForgetTarget, ResultsView, ask_to_forget
from .jobs import Job

if TYPE_CHECKING:
    from .desktop import Desktop


def collect_overview(engine: Any) -> dict[str, Any]:
    """Counts per workspace and project, passages and notes, and the latest notes (runs on a worker thread)."""
    workspaces: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    for name in engine.workspace_names():
        try:
            out = engine.call("wake_up", {"workspace": name, "limit": 8})
            kinds = {k.name: k.count for k in engine.call("status", {"workspace": name}).result.by_kind}
        except EngramError as exc:
            workspaces.append({"name": name, "error": exc.message, "projects": [], "memories": 0, "sources": 0,
                               "notes": 0, "passages": 0})
            continue
        w = out.result
        workspaces.append({"name": name, "memories": w.memories, "sources": w.sources,
                           "notes": kinds.get("note", 0) + kinds.get("exchange", 0),
                           "passages": kinds.get("chunk", 0) + kinds.get("content", 0),
                           "projects": [(p.project, p.memories, p.sources) for p in w.projects]})
        recent.extend({"workspace": name, "title": m.title or m.content[:80], "project": m.project,
                       "updated_at": m.updated_at, "id": m.id} for m in w.recent)
    recent.sort(key=lambda m: m["updated_at"], reverse=True)
    return {"workspaces": workspaces, "recent": recent[:10]}


def count_of(n: int, one: str, many: str) -> str:
    """``n`` with the noun that fits it: ``1 note``, ``2,025 passages``."""
    return f"{n:,} {one if n == 1 else many}"


def state_sentence(overview: dict[str, Any], editors_connected: int, local_ai: bool) -> str:
    """The Home page's one sentence: what Engram remembers, how many editors use it, whether local AI is on."""
    passages = sum(w.get("passages", 0) for w in overview["workspaces"])
    notes = sum(w.get("notes", 0) for w in overview["workspaces"])
    files = sum(w.get("sources", 0) for w in overview["workspaces"])
    if passages or notes:
        held = (f"Engram remembers {count_of(passages, 'passage', 'passages')} from {count_of(files, 'file', 'files')}"
                f" and {count_of(notes, 'note', 'notes')}")
    else:
        held = "Engram remembers nothing yet"
    editors = count_of(editors_connected, "editor", "editors") + " connected"
    return f"{held} · {editors} · local AI {'on' if local_ai else 'off'}"


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

    recall_shown = Signal(str)  # the recall's text as an editor would get it, once its cards are shown
    forgotten = Signal(str)  # what was forgotten, in a sentence (or why not)

    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        self.desktop = desktop
        layout = QVBoxLayout(self)
        self.state = QLabel("Counting what Engram remembers…")
        self.state.setWordWrap(True)
        self.state.setAccessibleName("What Engram remembers")
        layout.addWidget(self.state)
        self._overview: dict[str, Any] | None = None
        desktop.editors.changed.connect(self.show_state)

        ask = QHBoxLayout()
        self.question = QLineEdit()
        self.question.setPlaceholderText("Ask your memory (recall): e.g. how do we deploy, and how do we roll back?")
        self.question.returnPressed.connect(self.run_recall)
        self.question.setAccessibleName("Question")
        self.ask_button = QPushButton("Recall")
        self.ask_button.setAccessibleName("Recall")
        self.ask_button.clicked.connect(self.run_recall)
        ask.addWidget(self.question, 1)
        ask.addWidget(self.ask_button)
        layout.addLayout(ask)
        self.results = ResultsView()
        self.results.show_message("What you recall appears here as cards: where each passage comes from, the words "
                                  "that matched, and actions to open, copy or forget it.")
        self.results.forget_requested.connect(self.confirm_forget)
        layout.addWidget(self.results, 3)
        self.confirm: QMessageBox | None = None

        row = QHBoxLayout()
        left = QVBoxLayout()
        left.addWidget(QLabel("<b>What is stored</b>"))
        self.counts = QTreeWidget()
        self.counts.setAccessibleName("What is stored, by workspace and project")
        self.counts.setHeaderLabels(["Workspace / project", "Memories", "Sources"])
        header = self.counts.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.counts.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        left.addWidget(self.counts)
        right = QVBoxLayout()
        right.addWidget(QLabel("<b>Recent notes</b>"))
        self.recent = QListWidget()
        self.recent.setAccessibleName("Recent notes")
        self.recent.setWordWrap(True)
        self.recent.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
        self._overview = data
        self.show_state()
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

    def show_state(self) -> None:
        """The sentence at the top, from the last counts and the editors' states."""
        if self._overview is None:
            return
        connected = sum(1 for e in self.desktop.editors.states.values() if e.connected)
        self.state.setText(state_sentence(self._overview, connected, self.desktop.engine.settings.recall.llm))

    # ------------------------------------------------------------------ recall

    def run_recall(self) -> None:
        question = self.question.text().strip()
        if not question:
            self.results.show_message("Type a question first.")
            return
        self.ask_button.setEnabled(False)
        self.results.show_message("Recalling…")
        engine = self.desktop.engine
        self.desktop.jobs.submit("recall", f"Recall: {question[:60]}",
                                 lambda report: engine.call("recall", {"question": question}),
                                 on_done=self.show_recall)

    def show_recall(self, job: Job) -> None:
        self.ask_button.setEnabled(True)
        if job.error is not None:
            text = f"{job.error.title}: {job.error.message}"
            self.results.show_message(text)
        else:
            text = job.result.text
            self.results.show_recall(job.result.result)
        self.recall_shown.emit(text)

    # ------------------------------------------------------------------ forget

    def confirm_forget(self, target: ForgetTarget) -> None:
        """Ask before forgetting (a window-modal box that blocks nothing else); only the one file or note goes."""
        self.confirm = ask_to_forget(self, target, lambda: self.forget(target))

    def forget(self, target: ForgetTarget) -> None:
        """Forget ``target`` in the background; the counts and the shown results follow."""
        engine = self.desktop.engine
        self.desktop.jobs.submit("task", f"Forget {target.label}", lambda report: engine.call("delete", target.args),
                                 on_done=lambda job: self._forgotten(target, job))

    def _forgotten(self, target: ForgetTarget, job: Job) -> None:
        if job.error is not None:
            text = f"{job.error.title}: {job.error.message}"
        else:
            deleted = job.result.result
            text = (f"Forgot {target.label} ({deleted.chunks:,} passages)." if target.kind == "source"
                    else f"Forgot the note “{target.label}”.")
            if self.question.text().strip():
                self.run_recall()  # the results shown must not offer what is gone
        self.desktop.notify("Memory", text)
        self.forgotten.emit(text)

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
