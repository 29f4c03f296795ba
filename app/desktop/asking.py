"""A question box with its results as cards: Home's search and the Ask page's recall share it.

The panel runs the tool (``search`` or ``recall``) as a job, shows what came back as cards (a recall first
lists its plan's steps and the model's answer), and asks before a card's Forget deletes anything; the
results shown are asked again after a deletion, so no card offers what is gone.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QMessageBox, QPushButton, QVBoxLayout, QWidget

from engram.core import Engine
from engram.core.recall.models import RecallResult
from engram.core.tool_calls import output_of
from engram.core.tools.results import Deleted, SearchResult

from .cards import ForgetTarget, ResultsView, ask_to_forget
from .editors import EditorsController
from .jobs import Job, Jobs
from .opener import open_at_line
from .shell import Shell

Tool = Literal["search", "recall"]


class QuestionPanel(QWidget):
    """A box, a button and the results; every engine call runs as a job."""

    shown = Signal(str)  # the tool's text as an editor would get it, once its cards are shown (or the error)
    forgotten = Signal(str)  # what was forgotten, in a sentence (or why not)

    def __init__(self, jobs: Jobs, engine: Engine, editors: EditorsController, shell: Shell, tool: Tool, *,
                 placeholder: str, button: str, box_name: str, empty: str) -> None:
        super().__init__()
        self.jobs = jobs
        self.engine = engine
        self.editors = editors
        self.shell = shell
        self.tool = tool
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        line = QHBoxLayout()
        self.question = QLineEdit()
        self.question.setPlaceholderText(placeholder)
        self.question.setAccessibleName(box_name)
        self.question.returnPressed.connect(self.ask)
        self.ask_button = QPushButton(button)
        self.ask_button.setAccessibleName(button)
        self.ask_button.clicked.connect(self.ask)
        line.addWidget(self.question, 1)
        line.addWidget(self.ask_button)
        layout.addLayout(line)
        self.results = ResultsView()
        self.results.show_message(empty)
        self.results.forget_requested.connect(self.confirm_forget)
        self.results.opener = self.open_file
        self.results.opened.connect(lambda text: shell.show_message(text, 10000))
        layout.addWidget(self.results, 1)
        self.confirm: QMessageBox | None = None

    def open_file(self, file: str, line: int) -> str:
        """Open ``file`` at ``line`` as ``desktop.open_with`` says, the connected editors first."""
        connected = [name for name, state in self.editors.states.items() if state.connected]
        return open_at_line(file, line, self.engine.settings.desktop.open_with, connected)

    def ask(self) -> None:
        """Run the tool on the box's text in the background; the cards follow."""
        question = self.question.text().strip()
        if not question:
            self.results.show_message("Type a question first." if self.tool == "recall" else "Type what to look for.")
            return
        self.ask_button.setEnabled(False)
        self.results.show_message("Recalling…" if self.tool == "recall" else "Searching…")
        tools = self.engine.tools
        self.jobs.submit("recall" if self.tool == "recall" else "task", f"{self.tool.capitalize()}: "
                         f"{question[:60]}", lambda report: tools.recall(question) if self.tool == "recall"
                         else tools.search(question), on_done=lambda job: self._show(question, job))

    def _show(self, question: str, job: Job) -> None:
        self.ask_button.setEnabled(True)
        if job.error is not None:
            text = f"{job.error.title}: {job.error.message}"
            self.results.show_message(text)
        elif self.tool == "recall":
            recalled = output_of(job.result, RecallResult)
            text = recalled.text
            self.results.show_recall(recalled.result)
        else:
            found = output_of(job.result, SearchResult)
            text = found.text
            self.results.show_search(found.result, question)
        self.shown.emit(text)

    def confirm_forget(self, target: ForgetTarget) -> None:
        """Ask before forgetting (a window-modal box that blocks nothing else); only the one file or note goes."""
        self.confirm = ask_to_forget(self, target, lambda: self.forget(target))

    def forget(self, target: ForgetTarget) -> None:
        """Forget ``target`` in the background; the counts and the shown results follow."""
        tools = self.engine.tools
        self.jobs.submit("task", f"Forget {target.label}", lambda report: tools.delete(**target.args),
                         on_done=lambda job: self._forgotten(target, job))

    def _forgotten(self, target: ForgetTarget, job: Job) -> None:
        if job.error is not None:
            text = f"{job.error.title}: {job.error.message}"
        else:
            deleted = output_of(job.result, Deleted).result
            text = (f"Forgot {target.label} ({deleted.chunks:,} passages)." if target.kind == "source"
                    else f"Forgot the note “{target.label}”.")
            if self.question.text().strip():
                self.ask()  # the results shown must not offer what is gone
        self.shell.notify("Memory", text, page="memory")
        self.forgotten.emit(text)
