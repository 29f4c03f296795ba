"""Home: what Engram remembers in one sentence, a search box with results as cards, recent notes, jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMessageBox,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from engram.core import EngramError

from .asking import QuestionPanel
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
        self.line = layout = QHBoxLayout(self)
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
    """Home: the state in one sentence, a search box with results as cards, recent notes, jobs in progress."""

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

        self.panel = QuestionPanel(
            desktop, "search", placeholder="Search your memory: e.g. rollback approval", button="Search",
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
        desktop.jobs.changed.connect(self.show_job)

    @property
    def confirm(self) -> QMessageBox | None:
        """The open question before a Forget (tests press its buttons)."""
        return self.panel.confirm

    # ------------------------------------------------------------------ counts

    def show_overview(self, job: Job) -> None:
        """Show the counts job's result (``Desktop.refresh`` runs it for the tray and this page)."""
        if job.error is not None:
            self.state.setText(f"{job.error.title}: {job.error.message}")
            return
        data = job.result
        self._overview = data
        self.show_state()
        self.recent.clear()
        for m in data["recent"]:
            self.recent.addItem(f"{m['updated_at']:%Y-%m-%d %H:%M}  [{m['project']}]  {m['title']}")
        if not data["recent"]:
            self.recent.addItem("No notes yet (agents add them with the remember tool; you can on the Memory page).")

    def show_state(self) -> None:
        """The sentence at the top, from the last counts and the editors' states."""
        if self._overview is None:
            return
        connected = sum(1 for e in self.desktop.editors.states.values() if e.connected)
        self.state.setText(state_sentence(self._overview, connected, self.desktop.engine.settings.recall.llm))

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
