"""The Ask page: a question in plain words, answered by recall (the chat of the helper model comes here next).

Recall splits a multi-part question, searches each part, and shows its plan (a line per step), the local
model's answer when local AI is on, and then the evidence as cards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel, QMessageBox, QVBoxLayout, QWidget

from .asking import QuestionPanel

if TYPE_CHECKING:
    from .desktop import Desktop


class AskPage(QWidget):
    """A question box over recall's plan, answer and evidence cards."""

    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        intro = QLabel("Ask a question, even one in several parts: Engram looks up each part and shows what it "
                       "found, with where each passage comes from. With local AI on, a model on this computer "
                       "plans the lookups and writes an answer that cites them.")
        intro.setWordWrap(True)
        intro.setAccessibleName("What Ask does")
        layout.addWidget(intro)
        self.panel = QuestionPanel(
            desktop, "recall", placeholder="e.g. how do we deploy, and how do we roll back?", button="Ask",
            box_name="Question", empty="The plan, the answer and the passages it rests on appear here as cards.")
        layout.addWidget(self.panel, 1)
        self.question = self.panel.question
        self.ask_button = self.panel.ask_button
        self.results = self.panel.results
        self.recall_shown = self.panel.shown
        self.forgotten = self.panel.forgotten

    @property
    def confirm(self) -> QMessageBox | None:
        """The open question before a Forget (tests press its buttons)."""
        return self.panel.confirm
