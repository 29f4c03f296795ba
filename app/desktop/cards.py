"""Search and recall results as cards a person can read and act on, in a view that loads more on scroll.

A card says what a result is (a title), where it comes from (a file and its lines, or a note and its date),
shows a short excerpt with the question's words in bold, and how it was found, in words. Its buttons open
the file, copy the text, show the folder, or ask to forget it: the card never deletes anything itself, it
emits ``forget_requested`` with a ``ForgetTarget`` (the ``delete`` tool's arguments) and whoever listens
asks the person and runs the deletion.

Stored text is shown as text: every label of stored content is plain text, or HTML escaped before the
bold is added, so a memory holding ``<script>`` or ``<b>`` shows those characters and nothing else.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal, TypedDict

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from engram.core.recall.models import Evidence, RecallResult, StepReport
from engram.core.recall.render import step_label
from engram.core.tools.formats import where as source_and_lines
from engram.core.tools.render import excerpt, query_terms
from engram.core.tools.results import Memory, SearchResult

from .opener import open_at_line
from .setting_rows import error_colour

#: Cards shown at first, and added each time the view is scrolled to its bottom.
PAGE = 20
#: A hit this similar to the question by meaning (cosine, the bundled MiniLM) or more is close to it; below, it
#: shares little with it. Measured on the Django lookups' parts: every gold hit of the first five scored 0.40 or
#: more (a tenth of them under 0.49), and no hit of questions the corpus does not hold (xylophone, mount everest,
#: knitting a scarf pattern, a world cup final, …) scored over 0.28.
CLOSE_SIMILARITY = 0.35
SNIPPET_CHARS = 240
TITLE_CHARS = 120
#: How each search channel found a result, in words.
CHANNEL_WORDS = {"semantic": "by meaning", "lexical": "by words", "graph": "by link"}
#: Words too common to be worth bold (words under three letters are never bold).
STOP_WORDS = frozenset(
    "the and for are but not you all any can had her was one our out has have his how its may new now own "
    "who why what when where which with this that these those there their them they then than from into "
    "about after before over under does did were been being will would should could shall also just "
    "only very some such each other more most much many your yours him she off too per via".split())
NOTE_KINDS = ("note", "exchange")
_LONG_RUN = re.compile(r"(\S{30})(?=\S)")
# Markup a card shows as the words it marks: rules and table borders, fences, heading marks, emphasis, code
# marks, RST roles (the copy keeps the text exactly as stored).
_RULE_LINE = re.compile(r"^\s*(?:[|+:\-=_*~#`^ ]*[-=_*~`^]{3,}[|+:\-=_*~#`^ ]*)$", re.M)
_HEADING_MARK = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?)", re.M)
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`([^`<]*?)(?:\s*<[^`>]*>)?`")
_FENCE = re.compile(r"^\s*(?:```|~~~).*$", re.M)
_EMPHASIS = re.compile(r"(\*\*|``|`)(?=[^\s*`])([^*`\n]+?)(?<=[^\s*`])\1")
_CELL = re.compile(r"\s*\|\s*")
#: Opens a file at a line and says what it did in a sentence (``opener.open_at_line`` with the settings).
Opener = Callable[[str, int], str]


class DeleteArgs(TypedDict, total=False):
    """The ``delete`` tool's arguments a Forget gives (``engine.tools.delete(**args)``, checked by mypy)."""

    ids: list[str]
    source: str
    workspace: str


@dataclass(frozen=True)
class ForgetTarget:
    """What a card's Forget asks for: the ``delete`` tool's arguments and how to name it in a confirmation.

    ``args`` is ``{"ids": [id]}`` for a note and ``{"source": source}`` for a file (or ingested text), which
    forgets the whole source with all its passages; ``label`` is the note's title or the file's path.
    """

    args: DeleteArgs
    label: str
    kind: Literal["note", "source"]


@dataclass(frozen=True)
class CardText:
    """What one card shows. ``file`` is the file behind it, which may since have moved ("" for a note, a fact
    or ingested text); ``snippet`` is plain text: the card escapes it and puts ``terms`` in bold."""

    title: str
    where: str
    snippet: str
    found: str
    copy: str
    terms: tuple[str, ...] = ()
    file: str = ""
    line: int = 1
    target: ForgetTarget | None = None
    memory: Memory | None = field(default=None, compare=False)


def found_by(channels: Sequence[str]) -> str:
    """How search found a result, in words: ``["semantic", "lexical"]`` → "found by meaning and by words"."""
    words = [CHANNEL_WORDS.get(c, f"by {c}") for c in channels]
    return "found " + _and(words) if words else ""


def bold_terms(query: str) -> tuple[str, ...]:
    """The words of ``query`` worth bold: three letters or more, not a stop word."""
    return tuple(t for t in query_terms(query) if t not in STOP_WORDS)


def highlight(text: str, terms: Sequence[str]) -> str:
    """``text`` as escaped HTML, with each word that starts with one of ``terms`` in bold."""
    text = _breakable(text)
    if not terms:
        return html.escape(text)
    pattern = re.compile(r"(?<![A-Za-z0-9_])((?:" + "|".join(map(re.escape, terms)) + r")[A-Za-z0-9_]*)", re.I)
    parts = pattern.split(text)  # even: the text between matches, odd: the matches
    return "".join(f"<b>{html.escape(p)}</b>" if i % 2 else html.escape(p) for i, p in enumerate(parts))


def readable(text: str) -> str:
    """``text`` without the markup a person reads past: ``**bold**`` → bold, ``## Title`` → Title, table
    rows as cells joined by " · ", rules, table borders and code fences left out (Markdown and RST)."""
    text = _FENCE.sub("", _RULE_LINE.sub("", text))
    text = _HEADING_MARK.sub("", text)
    text = _ROLE.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    lines = []
    for line in text.splitlines():
        if "|" in line and line.strip().startswith("|"):
            line = " · ".join(cell for cell in _CELL.split(line.strip().strip("|").strip()) if cell)
        lines.append(line)
    return "\n".join(lines)


_SENTENCE_START = re.compile(r"(?<=[.!?])\s+(?=\S)|\n")


def card_excerpt(text: str, width: int, terms: Sequence[str]) -> str:
    """At most ``width`` characters of ``text``: all of it, or the window that holds most of ``terms``, starting
    at a line or a sentence (or, in a long sentence, a few words before the first match), so that a long
    paragraph shows the words that matched rather than its start."""
    text = text.strip()
    if len(text) <= width or not terms:
        return excerpt(text, width, terms)
    lower = text.lower()
    positions = sorted(p.start() for t in terms for p in re.finditer(re.escape(t), lower))
    if not positions:
        return excerpt(text, width, terms)
    starts = {0, *(m.end() for m in _SENTENCE_START.finditer(text))}
    for p in positions:  # a few words before a match, at a space
        space = text.rfind(" ", 0, max(0, p - width // 5))
        starts.add(space + 1 if space >= 0 else 0)
    # the most matches, and of those the start nearest them (so they are not cut at the window's end)
    best = max(sorted(starts), key=lambda s: (sum(1 for p in positions if s <= p < s + width - 2), s))
    lead = "…" if best > 0 else ""
    window = text[best:best + width - len(lead) - 1].rstrip()
    return lead + window + ("…" if best + len(window) < len(text) else "")


def memory_text(memory: Memory, query: str = "", found: str = "") -> CardText:
    """A note's or a file passage's card: its title, where it is from, an excerpt near ``query``'s words."""
    terms = bold_terms(query)
    shown = readable(memory.content)
    first = next((line.strip() for line in shown.splitlines() if line.strip()), "")
    title = _short(readable(memory.title) or first or memory.path or memory.source, TITLE_CHARS)
    snippet = " ".join(card_excerpt(shown, SNIPPET_CHARS, terms).split())
    if memory.kind in NOTE_KINDS or not memory.source:
        where = f"{memory.kind} · {memory.updated_at.date().isoformat()}"
        return CardText(title, where, snippet, found, memory.content, terms, memory=memory,
                        target=ForgetTarget({"ids": [memory.id]}, _short(title, 80), "note"))
    name = memory.path or memory.source
    where = f"{name} · lines {memory.start_line}–{memory.end_line}" if memory.end_line else name
    return CardText(title, where, snippet, found, f"{source_and_lines(memory)}\n\n{memory.content}", terms,
                    file=_file_of(memory.source), line=memory.start_line or 1, memory=memory,
                    target=ForgetTarget({"source": memory.source}, name, "source"))


def evidence_text(item: Evidence, query: str = "") -> CardText:
    """A recall evidence's card: a memory's as above, a fact's sentence, or a file's path and summary."""
    found = "from " + ("step " if len(item.steps) == 1 else "steps ") + _and([str(s) for s in item.steps])
    if item.memory is not None:
        return memory_text(item.memory, query, found)
    if item.fact is not None:
        f = item.fact
        sentence = f"{f.subject} {f.predicate} {f.object}"
        when = f"fact · since {f.valid_from.date().isoformat()}" + (f", ended {f.ended.date()}" if f.ended else "")
        return CardText(_short(sentence, TITLE_CHARS), when, f"source: {f.source}" if f.source else "", found,
                        sentence)  # a fact is ended with kg_edit, not forgotten: no Forget
    s = item.file
    assert s is not None, "evidence is a memory, a fact or a file"
    name = s.path or s.source
    outline = "\n".join(s.outline)
    return CardText(_short(name, TITLE_CHARS), f"file · {s.chunk_count} passage{'' if s.chunk_count == 1 else 's'}", _short(s.summary, SNIPPET_CHARS),
                    found, f"{name}\n\n{s.summary}" + (f"\n{outline}" if outline else ""), bold_terms(query),
                    file=_file_of(s.source), target=ForgetTarget({"source": s.source}, name, "source"))


class ResultCard(QFrame):
    """One result: title, where it is from, an excerpt with the query's words in bold, how it was found,
    and Open, Copy, Show in folder and Forget (Open and Show in folder only for a file)."""

    forget_requested = Signal(object)  # ForgetTarget
    opened = Signal(str)  # what Open did, in a sentence

    def __init__(self, text: CardText, number: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.opener: Opener = lambda file, line: open_at_line(file, line, "auto")
        self.memory = text.memory
        self.target = text.target
        self.snippet_text = text.snippet
        self._text = text
        self.setFrameShape(QFrame.Shape.StyledPanel)
        title = f"{number}. {text.title}" if number is not None else text.title
        self.setAccessibleName(f"Result: {title}")
        layout = QVBoxLayout(self)
        self.title = self._label(_breakable(title), title, bold=True)
        self.where = self._label(_breakable(text.where), f"From {text.where}")
        self.snippet = self._label(highlight(text.snippet, text.terms), f"Excerpt: {text.snippet}", rich=True)
        self.found = self._label(text.found, text.found)
        for label, shown in ((self.title, True), (self.where, True), (self.snippet, bool(text.snippet)),
                             (self.found, bool(text.found))):
            layout.addWidget(label)  # first: a label shown before it has a parent is a window of its own
            label.setVisible(shown)

        row = QHBoxLayout()
        name = Path(text.file).name if text.file else _short(text.title, 40)
        exists = bool(text.file) and Path(text.file).is_file()  # a stat: the file may have moved since
        self.open_button = self._button(row, "Open", f"Open {name}",
                                        "Open the file at this passage's line in your code editor (Settings: "
                                        "“Open a result's file with”)", self.open_file)
        self.copy_button = self._button(row, "Copy", f"Copy {name}",
                                        "Copy the text (a file's with its path and lines) to the clipboard", self.copy)
        self.folder_button = self._button(row, "Show in folder", f"Show {name} in its folder",
                                          "Open the folder that holds the file", self.show_folder)
        self.forget_button = self._button(row, "Forget", f"Forget {name}",
                                          "Remove the whole file from Engram's memory (you are asked first; the "
                                          "file itself stays)", self.forget)
        row.addStretch(1)
        layout.addLayout(row)
        #: What the last Open, Show in folder or Copy did, on the card it concerns (a failure in red).
        self.status = self._label("", "What the last action did")
        self.status.setVisible(False)
        layout.addWidget(self.status)
        self._status_clear = QTimer(self)
        self._status_clear.setSingleShot(True)
        self._status_clear.timeout.connect(lambda: self.status.setVisible(False))
        for button in (self.open_button, self.folder_button):
            button.setVisible(bool(text.file))
            button.setEnabled(exists)
        if text.file and not exists:
            self.open_button.setToolTip(f"The file is no longer at {text.file}")
            self.folder_button.setToolTip(f"The file is no longer at {text.file}")
        self.forget_button.setVisible(text.target is not None)
        if text.target is not None and not text.file:
            what = "this note" if text.target.kind == "note" else "this text and all its passages"
            self.forget_button.setToolTip(f"Remove {what} from Engram's memory (you are asked first)")

    @classmethod
    def for_memory(cls, memory: Memory, query: str = "", parent: QWidget | None = None) -> ResultCard:
        """A card for a search hit (its channels said in words) or any other memory."""
        return cls(memory_text(memory, query, found_by(getattr(memory, "channels", []))), parent=parent)

    @classmethod
    def for_evidence(cls, item: Evidence, number: int, query: str = "") -> ResultCard:
        """A card for recall evidence ``number`` (the number the model's answer cites)."""
        return cls(evidence_text(item, query), number)

    def open_file(self) -> None:
        """Open the card's file at its passage's line (``opener``); ``opened`` says how, and a failure is said on
        the card itself."""
        if self._text.file:
            said = self.opener(self._text.file, self._text.line)
            self.opened.emit(said)
            if said.startswith("Could not"):
                self.say(said, failed=True)

    def show_folder(self) -> None:
        """Open the folder that holds the card's file; when no file manager answers, the card says so."""
        if self._text.file:
            folder = Path(self._text.file).parent
            if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
                self.say(f"Could not show the folder {folder}: no file manager on this computer answered.",
                         failed=True)

    def copy(self) -> None:
        """Put the card's text on the clipboard (a passage as ``path:lines``, a blank line, its content) and say
        so on the card for a moment."""
        QGuiApplication.clipboard().setText(self._text.copy)
        self.say("Copied to the clipboard.", for_ms=3000)

    def say(self, text: str, *, failed: bool = False, for_ms: int | None = None) -> None:
        """Show what an action did under the card's buttons (a failure in the error colour), for ``for_ms``
        milliseconds or until the next action."""
        self.status.setText(text)
        self.status.setAccessibleName(text)
        self.status.setStyleSheet(f"color: {error_colour(self)};" if failed else "color: palette(mid);")
        self.status.setVisible(True)
        if for_ms is None:
            self._status_clear.stop()
        else:
            self._status_clear.start(for_ms)

    def forget(self) -> None:
        """Ask, through ``forget_requested``, that the card's note or file be forgotten."""
        if self.target is not None:
            self.forget_requested.emit(self.target)

    @staticmethod
    def _label(text: str, name: str, *, rich: bool = False, bold: bool = False) -> QLabel:
        label = QLabel(text)
        label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setAccessibleName(name)
        if bold:
            font = label.font()
            font.setBold(True)
            label.setFont(font)
        return label

    @staticmethod
    def _button(row: QHBoxLayout, text: str, name: str, tip: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(name)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button


class ResultsView(QScrollArea):
    """Results as cards: a search's hits, or a recall's plan and evidence. Shows ``PAGE`` cards and adds
    ``PAGE`` more each time it is scrolled to the bottom."""

    forget_requested = Signal(object)  # ForgetTarget, from any card
    opened = Signal(str)  # what a card's Open did

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.opener: Opener | None = None  # the cards' (their own default when None)
        self.setWidgetResizable(True)
        self.setAccessibleName("Results")
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self.message = ResultCard._label("", "Summary")
        self.message.setVisible(False)
        self._layout.addWidget(self.message)
        #: The line above the first result that is not close to the question (see ``show_search``).
        self.divider = ResultCard._label("Nothing else close — these share little with what you asked:",
                                         "Nothing else close")
        self.divider.setStyleSheet("color: palette(mid); border-top: 1px solid palette(mid); padding-top: 6px;")
        self.divider.setVisible(False)
        self._far_from: int | None = None
        self._layout.addStretch(1)
        self.setWidget(body)
        self.cards: list[ResultCard] = []
        self._pending: list[Callable[[], ResultCard]] = []
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.verticalScrollBar().rangeChanged.connect(self._range_changed)

    def show_search(self, result: SearchResult, query: str, notes: Sequence[str] = ()) -> None:
        """A card per hit, under ``notes`` and the search's warnings; a message when there are none. The hits
        that are not close to the question by meaning (``CLOSE_SIMILARITY``) come under a line that says so."""
        lines = [*notes, *result.warnings]
        if not result.hits:
            self.show_message("\n".join([f"Nothing found for “{query}”.", *lines]))
            return
        close = [h for h in result.hits if h.similarity is None or h.similarity >= CLOSE_SIMILARITY]
        far = [h for h in result.hits if h not in close]  # in the search's order, after every close one
        if not close:
            lines.insert(0, f"Nothing close to “{query}” is remembered. The nearest memories share little with it:")
        self._show("\n".join(lines), [partial(ResultCard.for_memory, hit, query) for hit in [*close, *far]],
                   far_from=len(close) if close and far else None)

    def show_recall(self, result: RecallResult) -> None:
        """The plan (a line per step), the model's answer when there is one, then a card per evidence; a
        recall without a plan shows its search."""
        if not result.planned:
            if result.search is None:
                self.show_message("\n".join([f"Nothing found for “{result.question}”.", *result.notes]))
            else:
                self.show_search(result.search, result.question, result.notes)
            return
        lines = [plan_line(step) for step in result.steps]
        if result.answer is not None:
            lines += ["", result.answer]
            if result.cited:
                lines.append(f"Cites result{'' if len(result.cited) == 1 else 's'} "
                             + _and([str(n) for n in result.cited]) + ".")
        lines += result.notes
        if not result.items:
            lines += ["", f"Nothing found for “{result.question}”."]
        query = " ".join([result.question] + [str(s.args.get("query", "")) for s in result.steps])
        self._show("\n".join(lines), [partial(ResultCard.for_evidence, item, n, query)
                                      for n, item in enumerate(result.items, start=1)])

    def show_message(self, text: str) -> None:
        """Only ``text``: an empty result, an error, a search in progress."""
        self._show(text, [])

    def _show(self, message: str, cards: list[Callable[[], ResultCard]], far_from: int | None = None) -> None:
        for card in self.cards:
            self._layout.removeWidget(card)
            card.deleteLater()
        self.cards = []
        self.divider.setVisible(False)
        self._layout.removeWidget(self.divider)
        self._far_from = far_from
        self.message.setText(message)
        self.message.setAccessibleName(message or "Summary")
        self.message.setVisible(bool(message))
        self._pending = cards
        self._more()
        self.verticalScrollBar().setValue(0)

    def _more(self) -> None:
        page, self._pending = self._pending[:PAGE], self._pending[PAGE:]
        for make in page:
            if self._far_from is not None and len(self.cards) == self._far_from:
                self._layout.insertWidget(self._layout.count() - 1, self.divider)
                self.divider.setVisible(True)
            card = make()
            card.forget_requested.connect(self.forget_requested)
            card.opened.connect(self.opened)
            if self.opener is not None:
                card.opener = self.opener
            self._layout.insertWidget(self._layout.count() - 1, card)  # above the stretch
            self.cards.append(card)

    def _scrolled(self, value: int) -> None:
        if self._pending and value >= self.verticalScrollBar().maximum():
            self._more()

    def _range_changed(self, _low: int, high: int) -> None:
        if high == 0 and self.isVisible():  # the cards so far fit without scrolling: nothing to scroll to
            self._scrolled(0)


def plan_line(step: StepReport) -> str:
    """A recall step for a person: ``1 · search “backup schedule” — 3 results``."""
    query = step.args.get("query")
    label = f"search “{_short(str(query), 60)}”" if step.tool == "search" and query else step_label(step)
    if step.duplicate_of is not None:
        return f"{step.number} · {label} — same as step {step.duplicate_of}"
    if step.error is not None:
        return f"{step.number} · {label} — failed: {step.error}"
    return f"{step.number} · {label} — {step.results} result{'' if step.results == 1 else 's'}"


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _breakable(text: str) -> str:
    """``text`` with a zero-width space after every 30 characters without a space, so a long word or path
    wraps instead of widening the card (Qt breaks lines only where the text allows it)."""
    return _LONG_RUN.sub("\\1\u200b", text)


def _file_of(source: str) -> str:
    """The file behind ``source``: the source itself, unless it is ingested text (``content:<title>``)."""
    return "" if source.startswith("content:") else source


def ask_to_forget(parent: QWidget, target: ForgetTarget, then: Callable[[], None]) -> QMessageBox:
    """Open (never ``exec``: nothing else waits) a window-modal question whether to forget ``target``; ``then``
    runs only when the person chose Forget. Returns the box (tests press its buttons)."""
    what = (f"the file {target.label} and every passage Engram keeps from it" if target.kind == "source"
            else f"the note “{target.label}”")
    box = QMessageBox(QMessageBox.Icon.Question, "Forget", f"Forget {what}?", parent=parent)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setInformativeText("Nothing else is touched" + (
        ": the file itself stays on your disk. Engram leaves it out when its folder is remembered again."
        if target.kind == "source" else "."))
    forget = box.addButton("Forget", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda _result: then() if box.clickedButton() is forget else None)
    box.open()
    return box

