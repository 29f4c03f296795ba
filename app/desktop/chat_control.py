"""The Ask page's chat, off the Qt thread: one turn at a time through ``Engine.chat``, and the workspace's
conversations listed, opened, renamed and deleted as jobs (their files are never read on the Qt thread).

The turn's events are emitted from the worker as ``event``; Qt queues them to the Qt thread in the order
they happened, before the turn's ``finished``.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QObject, Signal

from engram.core import Engine, EngramError
from engram.core.tool_calls import output_of
from engram.core.tools.results import MemoryList

from .jobs import Job, Jobs


class ChatController(QObject):
    """Runs chat turns and conversation chores as jobs; reports through signals on the Qt thread."""

    # A chat event (ChatText, ToolStarted, ToolFinished, ChatNote, ModelDownload, ChatAnswer); not named
    # ``event``, which would shadow QObject.event (the virtual Qt delivers every event to this object through).
    chat_event = Signal(object)
    finished = Signal(object)  # the ChatTurn, or the EngramError that ended it
    conversations_changed = Signal()  # a turn was saved, or a conversation renamed or deleted
    listed = Signal(object)  # list[Conversation], the latest first (or an EngramError)
    loaded = Signal(object)  # a Conversation (or an EngramError)
    memory_shown = Signal(str)  # a memory's text as get_memory returns it (or the error, in a sentence)

    def __init__(self, jobs: Jobs, engine: Engine, parent: QObject | None = None, workspace: str = "") -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.engine = engine
        self.workspace = workspace
        self._stop = threading.Event()
        self._busy = False

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self._busy

    def ask(self, question: str, conversation_id: str | None = None) -> None:
        """Run one turn of ``question`` (continuing ``conversation_id``, or a new conversation) on a worker."""
        if self._busy:
            return
        self._busy = True
        self._stop.clear()
        engine, workspace, stop = self.engine, self.workspace, self._stop

        def work(_report: Any) -> Any:
            return engine.chat(question, conversation=conversation_id, workspace=workspace,
                               on_event=self.chat_event.emit, stop=stop.is_set, download=False)

        # download=False: a missing model is offered on the page (its size, a choice), never fetched unasked
        self.jobs.submit("chat", f"Chat: {question[:60]}", work, on_done=self._done)

    def _done(self, job: Job) -> None:
        self._busy = False
        self.finished.emit(job.error if job.error is not None else job.result)
        self.conversations_changed.emit()

    def stop(self) -> None:
        """Ask the running turn to stop: it ends with what it found, and its conversation is saved."""
        self._stop.set()

    def _chore(self, title: str, work: Any, signal: Any = None, changed: bool = False) -> None:
        def done(job: Job) -> None:
            if signal is not None:
                signal.emit(job.error if job.error is not None else job.result)
            if changed:
                self.conversations_changed.emit()

        self.jobs.submit("task", title, lambda _report: work(), on_done=done, lane="chats")

    def list(self) -> None:
        """List the workspace's conversations (``listed`` follows)."""
        self._chore("List conversations", lambda: self.engine.conversations(self.workspace).list(), self.listed)

    def load(self, conversation_id: str) -> None:
        """Read one conversation (``loaded`` follows)."""
        self._chore("Open a conversation", lambda: self.engine.conversations(self.workspace).load(conversation_id),
                    self.loaded)

    def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title (``conversations_changed`` follows)."""
        self._chore("Rename a conversation",
                    lambda: self.engine.conversations(self.workspace).rename(conversation_id, title), changed=True)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation (``conversations_changed`` follows)."""
        self._chore("Delete a conversation",
                    lambda: self.engine.conversations(self.workspace).delete(conversation_id), changed=True)

    def show_memory(self, memory_id: str) -> None:
        """Read one memory (``memory_shown`` follows with its text)."""
        def done(job: Job) -> None:
            error: EngramError | None = job.error
            self.memory_shown.emit(f"{error.title}: {error.message}" if error is not None
                                   else output_of(job.result, MemoryList).text)

        self.jobs.submit("task", f"Show memory {memory_id}", lambda _report: self.engine.tools.get_memory(
            [memory_id], workspace=self.workspace), on_done=done)
