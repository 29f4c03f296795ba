"""The Ask page: a chat with the local model over the memory, and recall, on two tabs (Chat first when chat
can run).

Chat researches with the read tools and answers citing what it read; its conversations are kept in the
workspace and can be reopened, renamed and deleted. While its model cannot run here, a card above it offers one
(with its size, and *Search instead*): chat never downloads a model unasked. Recall splits a multi-part
question, searches each part, and shows its plan (a line per step), the local model's answer when local AI is
on, and then the evidence as cards; while local AI is off, a card above it says what turning it on would give.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engram.core import Engine, EngramError
from engram.core.chat.conversation import Conversation

from .asking import QuestionPanel
from .chat_control import ChatController
from .chat_view import ChatView
from .editors import EditorsController
from .jobs import Jobs
from .model_offer import ChatModelCard, LocalAiCard
from .models_control import ModelsController
from .settings_control import SettingsController
from .shell import Shell


def _button(text: str, name: str) -> QPushButton:
    button = QPushButton(text)
    button.setAccessibleName(name)
    return button


class ChatPanel(QWidget):
    """Conversations (choose, new, rename, delete), the conversation shown, and a question box with Stop; the
    no-model card above them while chat cannot run here."""

    search_instead = Signal(str)  # the question typed (or the last one asked): search for it instead

    def __init__(self, jobs: Jobs, engine: Engine, models: ModelsController,
                 settings_control: SettingsController) -> None:
        super().__init__()
        self.controller = ChatController(jobs, engine, self)
        self._last_question = ""
        self.conversation_id: str | None = None
        self.confirm: QMessageBox | None = None
        self.rename_dialog: QInputDialog | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.model_card = ChatModelCard(engine, models, settings_control)
        self.model_card.changed.connect(self._update_buttons)
        self.model_card.search_instead.connect(self._search_instead)
        layout.addWidget(self.model_card)
        top = QHBoxLayout()
        self.conversations = QComboBox()
        self.conversations.setAccessibleName("Conversations")
        self.conversations.addItem("New conversation", None)
        self.conversations.currentIndexChanged.connect(self._chosen)
        self.new_button = _button("&New", "New conversation")
        self.rename_button = _button("Re&name…", "Rename conversation")
        self.delete_button = _button("&Delete…", "Delete conversation")
        self.new_button.clicked.connect(self.new_conversation)
        self.rename_button.clicked.connect(self.ask_rename)
        self.delete_button.clicked.connect(self.ask_delete)
        top.addWidget(self.conversations, 1)
        for button in (self.new_button, self.rename_button, self.delete_button):
            top.addWidget(button)
        layout.addLayout(top)
        self.view = ChatView()
        self.view.memory_requested.connect(self.show_memory)
        layout.addWidget(self.view, 1)
        self.memory = QPlainTextEdit()
        self.memory.setReadOnly(True)
        self.memory.setAccessibleName("Memory shown")
        self.memory.setMaximumHeight(160)
        self.memory.setVisible(False)
        layout.addWidget(self.memory)
        line = QHBoxLayout()
        self.question = QLineEdit()
        self.question.setPlaceholderText("e.g. when do we deploy, and who approves a rollback?")
        self.question.setAccessibleName("Chat question")
        self.question.returnPressed.connect(self.ask)
        self.ask_button = _button("Send", "Send question")
        self.ask_button.clicked.connect(self.ask)
        self.stop_button = _button("Stop", "Stop the answer")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.controller.stop)
        line.addWidget(self.question, 1)
        line.addWidget(self.ask_button)
        line.addWidget(self.stop_button)
        layout.addLayout(line)
        self.controller.chat_event.connect(self.view.add_event)
        self.controller.finished.connect(self._finished)
        self.controller.conversations_changed.connect(self.controller.list)
        self.controller.listed.connect(self._listed)
        self.controller.loaded.connect(self._loaded)
        self.controller.memory_shown.connect(self._memory_shown)
        self._update_buttons()
        self.controller.list()

    # ------------------------------------------------------------------ a turn

    def ask(self) -> None:
        """Send the box's question (continuing the conversation shown); the answer streams into the view."""
        question = self.question.text().strip()
        if not question or self.controller.busy:
            return
        self.question.clear()
        self._last_question = question
        self.view.add_question(question)
        self.controller.ask(question, self.conversation_id)
        self._update_buttons()

    def _search_instead(self) -> None:
        self.search_instead.emit(self.question.text().strip() or self._last_question)

    def _finished(self, outcome: Any) -> None:
        if isinstance(outcome, EngramError):
            self.view.add_note(f"{outcome.title}: {outcome.message}")
            self.model_card.refresh()  # the model may have gone (removed, moved): the card offers one again
        else:
            self.conversation_id = outcome.conversation
            if outcome.ended == "stopped":
                self.view.add_note("Stopped: the answer is what research had found.")
        self._update_buttons()

    def _update_buttons(self) -> None:
        busy = self.controller.busy
        no_model = self.model_card.needed
        self.question.setEnabled(not no_model)
        self.question.setPlaceholderText("Choose a chat model above first; Search instead works without one."
                                         if no_model else "e.g. when do we deploy, and who approves a rollback?")
        self.ask_button.setEnabled(not busy and not no_model)
        self.stop_button.setEnabled(busy)
        for button in (self.new_button, self.rename_button, self.delete_button):
            button.setEnabled(not busy and (button is self.new_button or self.conversation_id is not None))
        self.conversations.setEnabled(not busy)

    # ------------------------------------------------------------------ conversations

    def _listed(self, outcome: Any) -> None:
        if isinstance(outcome, EngramError):
            self.view.add_note(f"{outcome.title}: {outcome.message}")
            return
        self.conversations.blockSignals(True)
        self.conversations.clear()
        self.conversations.addItem("New conversation", None)
        for conversation in outcome:
            self.conversations.addItem(conversation.title or conversation.id, conversation.id)
        index = self.conversations.findData(self.conversation_id) if self.conversation_id else 0
        if index < 0:  # the one shown is gone
            self.conversation_id, index = None, 0
            self.view.clear()
        self.conversations.setCurrentIndex(index)
        self.conversations.blockSignals(False)
        self._update_buttons()

    def _chosen(self, index: int) -> None:
        chosen = self.conversations.itemData(index)
        self.conversation_id = chosen
        self.memory.setVisible(False)
        if chosen is None:
            self.view.clear()
        else:
            self.controller.load(chosen)
        self._update_buttons()

    def _loaded(self, outcome: Any) -> None:
        if isinstance(outcome, Conversation):
            if outcome.id == self.conversation_id:
                self.view.show_conversation(outcome)
        elif isinstance(outcome, EngramError):
            self.view.add_note(f"{outcome.title}: {outcome.message}")

    def new_conversation(self) -> None:
        """Start afresh: the next question begins a new conversation."""
        self.conversations.setCurrentIndex(0)
        self._chosen(0)
        self.question.setFocus()

    def ask_rename(self) -> None:
        """Ask for a new title (a window-modal box); the list follows once it is saved."""
        if self.conversation_id is None:
            return
        chosen = self.conversation_id
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename conversation")
        dialog.setLabelText("New title:")
        dialog.setTextValue(self.conversations.currentText())
        dialog.textValueSelected.connect(lambda title: self.controller.rename(chosen, title))
        self.rename_dialog = dialog
        dialog.open()

    def ask_delete(self) -> None:
        """Ask before deleting the conversation shown (a window-modal box that blocks nothing else)."""
        if self.conversation_id is None:
            return
        chosen = self.conversation_id
        box = QMessageBox(QMessageBox.Icon.Question, "Delete conversation",
                          f"Delete the conversation “{self.conversations.currentText()}”? Its messages are gone "
                          "for good; the memories it read stay.",
                          QMessageBox.StandardButton.Cancel, self)
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        delete.clicked.connect(lambda: self.controller.delete(chosen))
        self.confirm = box
        box.open()

    # ------------------------------------------------------------------ a cited memory

    def show_memory(self, memory_id: str) -> None:
        """Show the memory a citation names, below the conversation."""
        self.memory.setPlainText(f"Reading memory {memory_id}…")
        self.memory.setVisible(True)
        self.controller.show_memory(memory_id)

    def _memory_shown(self, text: str) -> None:
        self.memory.setPlainText(text)
        self.memory.setVisible(True)


class AskPage(QWidget):
    """Chat and recall, on two tabs."""

    search_instead = Signal(str)  # chat has no model: search Home for this text instead
    open_settings = Signal()  # the local AI card asked for the Settings page

    def __init__(self, jobs: Jobs, engine: Engine, editors: EditorsController, shell: Shell,
                 models: ModelsController, settings_control: SettingsController) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        intro = QLabel("Chat with the model on this computer about what Engram remembers: it looks things up, "
                       "shows each lookup, and answers citing the memories it read. Recall looks up each part of "
                       "a question and shows what it found, with where each passage comes from.")
        intro.setWordWrap(True)
        intro.setAccessibleName("What Ask does")
        layout.addWidget(intro)
        self.mode = QTabWidget()
        self.mode.setAccessibleName("Chat or recall")
        self.mode.tabBar().setAccessibleName("Chat or recall")
        self.chat = ChatPanel(jobs, engine, models, settings_control)
        self.chat.search_instead.connect(self.search_instead)
        self.panel = QuestionPanel(
            jobs, engine, editors, shell, "recall", placeholder="e.g. how do we deploy, and how do we roll back?", button="Ask",
            box_name="Question", empty="The plan, the answer and the passages it rests on appear here as cards.")
        self.local_ai = LocalAiCard(engine, models, settings_control)
        self.local_ai.open_settings.connect(self.open_settings)
        self.recall_tab = QWidget()
        recall_layout = QVBoxLayout(self.recall_tab)
        recall_layout.setContentsMargins(0, 0, 0, 0)
        recall_layout.addWidget(self.local_ai)
        recall_layout.addWidget(self.panel, 1)
        self.mode.addTab(self.chat, "&Chat")
        self.mode.addTab(self.recall_tab, "&Recall")
        if self.chat.model_card.needed:  # chat cannot run until a model is chosen: recall comes first
            self.mode.setCurrentWidget(self.recall_tab)
        self._title_chat()
        self.chat.model_card.changed.connect(self._title_chat)
        layout.addWidget(self.mode, 1)
        self.question = self.panel.question
        self.ask_button = self.panel.ask_button
        self.results = self.panel.results
        self.recall_shown = self.panel.shown
        self.forgotten = self.panel.forgotten

    def _title_chat(self) -> None:
        """The chat tab says when it needs a model, so that recall coming first hides nothing."""
        self.mode.setTabText(self.mode.indexOf(self.chat),
                             "&Chat (needs a model)" if self.chat.model_card.needed else "&Chat")

    @property
    def confirm(self) -> QMessageBox | None:
        """The open question before a Forget (tests press its buttons)."""
        return self.panel.confirm
