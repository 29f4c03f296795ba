"""The conversation on the Ask page: questions, answers streaming in, tool calls as collapsible lines,
notes, a model download's progress, and citations as links to the memories they name.

Stored content (tool results, answers, notes) is shown as plain text; only an answer's citations become
links, after the answer itself is HTML-escaped.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engram.core.chat.conversation import Conversation
from engram.core.chat.events import (
    ChatAnswer,
    ChatNote,
    ChatProgress,
    ChatText,
    ModelDownload,
    ToolFinished,
    ToolStarted,
)

CITATION = re.compile(r"\[([0-9a-f]{12})\]")
_READ_ID = re.compile(r"\b([0-9a-f]{12})\b")


def linked_answer(text: str, readable: Iterable[str]) -> str:
    """``text`` as rich text: HTML-escaped, then each citation of an id in ``readable`` made a ``memory:`` link."""
    ids = set(readable)
    escaped = html.escape(text).replace("\n", "<br>")
    return CITATION.sub(lambda m: f'[<a href="memory:{m.group(1)}">{m.group(1)}</a>]' if m.group(1) in ids
                        else m.group(0), escaped)


def tool_summary(name: str, arguments: dict[str, Any], *, new_ids: int | None = None, error: bool = False,
                 repeated_of: int | None = None, running: bool = False) -> str:
    """One line for a tool call: its name, its arguments as JSON, and what it found."""
    line = f"{name} {json.dumps(arguments, ensure_ascii=False)}"
    if running:
        return f"{line} — running…"
    if error:
        return f"{line} — failed"
    if repeated_of is not None:
        return f"{line} — same as step {repeated_of}"
    if new_ids is None:
        return line
    return f"{line} — {new_ids} new {'memory' if new_ids == 1 else 'memories'}"


class ToolLine(QWidget):
    """A tool call: one line, collapsed; expanding it shows the tool's result as plain text."""

    def __init__(self, summary: str, text: str = "") -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.result = QPlainTextEdit()
        self.result.setReadOnly(True)
        self.result.setAccessibleName("Tool result")
        self.result.setMaximumHeight(220)
        self.result.setVisible(False)
        self.toggle.toggled.connect(self._expand)
        layout.addWidget(self.toggle)
        layout.addWidget(self.result)
        self.set(summary, text)

    def set(self, summary: str, text: str = "") -> None:
        """Show ``summary`` on the line and ``text`` when expanded."""
        self.toggle.setText(summary)
        self.toggle.setAccessibleName(f"Tool call: {summary}")
        self.result.setPlainText(text)

    def _expand(self, on: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.result.setVisible(on)


class ChatView(QScrollArea):
    """The conversation, one entry under the other; ``memory_requested`` names a citation clicked."""

    memory_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAccessibleName("Conversation")
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self._layout.addStretch(1)
        self.setWidget(inner)
        self.entries: list[QWidget] = []
        self.tools: dict[int, ToolLine] = {}
        self._tool_args: dict[int, dict[str, Any]] = {}
        self.answer: QLabel | None = None
        self._streamed = ""
        self.download: QProgressBar | None = None
        self.progress: QLabel | None = None  # the line a long step updates (``ChatProgress``)
        self._read: set[str] = set()

    # ------------------------------------------------------------------ building blocks

    def _add(self, widget: QWidget) -> QWidget:
        self._layout.insertWidget(self._layout.count() - 1, widget)
        self.entries.append(widget)
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        return widget

    def _label(self, text: str, *, style: str = "", rich: bool = False) -> QLabel:
        label = QLabel()
        label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        label.setText(text)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if style:
            label.setStyleSheet(style)
        self._add(label)
        return label

    def clear(self) -> None:
        """Remove every entry (a new conversation, or before showing another)."""
        for widget in self.entries:
            widget.setParent(None)
            widget.deleteLater()
        self.entries.clear()
        self.tools.clear()
        self._tool_args.clear()
        self.answer, self._streamed, self.download, self.progress = None, "", None, None
        self._read = set()

    def text(self) -> str:
        """What the view shows, entry by entry (a tool line's summary, not its result), for tests and copying."""
        out = []
        for widget in self.entries:
            if isinstance(widget, ToolLine):
                out.append(widget.toggle.text())
            elif isinstance(widget, QLabel):
                out.append(widget.text() if widget.textFormat() == Qt.TextFormat.PlainText
                           else re.sub(r"<[^>]+>", "", widget.text().replace("<br>", "\n")))
        return "\n".join(html.unescape(t) if "&" in t else t for t in out)

    def add_question(self, question: str) -> None:
        """Show the person's question and start a new turn."""
        self._label(question, style="font-weight: bold; margin-top: 8px;")
        self.answer, self._streamed = None, ""
        self._read = set()

    def add_note(self, text: str) -> None:
        """A muted line (a note of the loop, or an error)."""
        self._label(text, style="color: palette(mid);")

    def add_tool(self, step: int, name: str, arguments: dict[str, Any], text: str = "", **found: Any) -> ToolLine:
        """A tool call's line (``found``: ``new_ids``, ``error``, ``repeated_of``, ``running``)."""
        line = ToolLine(tool_summary(name, arguments, **found), text)
        self.tools[step] = line
        self._tool_args[step] = arguments
        self._add(line)
        return line

    def _answer_label(self) -> QLabel:
        if self.answer is None:
            self.answer = self._label("")
            self.answer.setOpenExternalLinks(False)
            self.answer.linkActivated.connect(self._link)
        return self.answer

    def show_answer(self, text: str, readable: Iterable[str]) -> None:
        """The final answer, its citations of ``readable`` ids as links."""
        label = self._answer_label()
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        label.setText(linked_answer(text, readable))
        label.setAccessibleName("Answer")
        self.answer = None  # the next text starts a new reply

    def _link(self, href: str) -> None:
        if href.startswith("memory:"):
            self.memory_requested.emit(href.removeprefix("memory:"))

    # ------------------------------------------------------------------ a turn's events

    def add_event(self, event: Any) -> None:
        """Show one chat event as it arrives."""
        if isinstance(event, ChatText):
            self._streamed += event.text
            self._answer_label().setText(self._streamed)
        elif isinstance(event, ToolStarted):
            self._streamed, self.answer = "", None  # what was streamed stays as the reply before the call
            self.add_tool(event.step, event.name, event.arguments, running=True)
        elif isinstance(event, ToolFinished):
            args = self._tool_args.get(event.step, {})
            summary = tool_summary(event.name, args, new_ids=event.new_ids, error=event.error,
                                   repeated_of=event.repeated_of)
            if event.step in self.tools:
                self.tools[event.step].set(summary, event.text)
            else:
                self.add_tool(event.step, event.name, args, event.text, new_ids=event.new_ids, error=event.error,
                              repeated_of=event.repeated_of)
            self._read.update(_READ_ID.findall(event.text))
        elif isinstance(event, ChatProgress):  # one line that says how far a long step is, updated in place
            if self.progress is None:
                self.progress = self._label(event.text, style="color: palette(mid);")
                self.progress.setAccessibleName("Progress")
            else:
                self.progress.setText(event.text)
        elif isinstance(event, ChatNote):
            self._streamed, self.answer, self.progress = "", None, None  # the next text is a new reply
            self.add_note(event.text)
        elif isinstance(event, ModelDownload):
            if self.download is None:
                self.download = QProgressBar()
                self.download.setAccessibleName(f"Downloading {event.model}")
                self.download.setFormat(f"Downloading {event.model}: %p%")
                self._add(self.download)
            self.download.setRange(0, max(event.total, 1) if event.total else 0)
            self.download.setValue(min(event.done, event.total) if event.total else 0)
        elif isinstance(event, ChatAnswer):
            self.show_answer(event.text, set(event.cited) | self._read)

    # ------------------------------------------------------------------ a stored conversation

    def show_conversation(self, conversation: Conversation) -> None:
        """Show a stored conversation's questions, tool calls and answers."""
        self.clear()
        calls: dict[str, dict[str, Any]] = {}
        step = 0
        for message in conversation.messages:
            if message.role == "user":
                self.add_question(message.content)
            elif message.role == "tool":
                step += 1
                arguments = calls.get(message.tool_call_id, {}).get("arguments", {})
                self.add_tool(step, message.tool_name, arguments, message.content)
                self._read.update(_READ_ID.findall(message.content))
            elif message.research:
                calls.update({c.get("id", ""): c for c in message.tool_calls})
                if message.content.strip():
                    self.add_note(message.content.strip())
            elif message.content.strip():
                self.show_answer(message.content, self._read)
