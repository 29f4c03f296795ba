"""The Memory page's detail pane: the selected note in full, where it came from, and its versions.

A note (or a conversation turn) shows its whole text, its provenance (project, kind, when it was written, when it
was last written again and how often, the editor and session a captured turn came from, its tags), the chain
of versions an edit or merge made, each version a link that shows it, and the texts merged into it (near
duplicates counted on it, notes merged by hand), which Split makes notes again. A file shows its path, passages,
when it was ingested and its summary. Reads run as jobs; a reply that arrives after something else was selected is
dropped.
"""

from __future__ import annotations

import html
from datetime import datetime

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from engram.core import Engine
from engram.core.tools.results import Memory, MemoryList, SourceInfo

from .counts import count_of
from .jobs import Job, Jobs
from .names import project_label

#: Where a captured turn's source names its editor and session: ``session:<editor>/<session id>``.
SESSION_PREFIX = "session:"
_EDITORS = {"claude-code": "Claude Code", "codex": "Codex"}
#: What the pane says before anything is selected.
HINT = "Select a note or a file to see it in full, where it came from and its earlier versions."


def _when(value: datetime | None) -> str:
    return f"{value.astimezone():%Y-%m-%d %H:%M}" if value is not None else "—"


def provenance(memory: Memory) -> list[tuple[str, str]]:
    """What the pane lists about a memory, as (label, value) rows in the words a person uses."""
    rows = [("Project", project_label(memory.project)), ("Kind", memory.kind if memory.type in ("", memory.kind)
                                          else f"{memory.kind} ({memory.type})")]
    if memory.source.startswith(SESSION_PREFIX):
        editor, _, session = memory.source[len(SESSION_PREFIX):].partition("/")
        rows.append(("Captured from", f"{_EDITORS.get(editor, editor)}, session {session}"))
    elif memory.source:
        rows.append(("From", memory.path or memory.source))
    rows.append(("Written", _when(memory.created_at)))
    if memory.updated_at != memory.created_at:
        rows.append(("Changed", _when(memory.updated_at)))
    if memory.seen_count > 1:
        rows.append(("Written again", f"{count_of(memory.seen_count - 1, 'time', 'times')}, last "
                                      f"{_when(memory.last_seen)} (each repeat was counted here, not stored again)"))
    tags = [t for t in memory.tags if ":" not in t]
    if tags:
        rows.append(("Tags", ", ".join(tags)))
    if memory.superseded_by:
        rows.append(("Superseded", f"on {_when(memory.valid_to)} by a newer version (below); search leaves it out"))
    if memory.merged:
        rows.append(("Merged into it", f"{count_of(len(memory.merged), 'other text', 'other texts')} (below); "
                                       "Split makes each a note of its own again"))
    rows.append(("Id", memory.id))
    return rows


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _gist(memory: Memory) -> str:
    text = memory.title or " ".join(memory.content.split())
    return text if len(text) <= 70 else text[:69].rstrip() + "…"


def note_html(memory: Memory, chain: list[Memory]) -> str:
    """The pane's page for a memory: its text, its provenance, its versions (each a ``memory:`` link)."""
    title = f"<h3>{html.escape(memory.title)}</h3>" if memory.title else ""
    body = f"<p style='white-space: pre-wrap'>{html.escape(memory.content)}</p>"
    parts = [title, body, _table(provenance(memory))]
    if len(chain) > 1:
        items = []
        for number, version in enumerate(chain, 1):
            label = f"{number}. {_when(version.created_at)} · {html.escape(_gist(version))}"
            items.append(f"<li><b>{label} (this one)</b></li>" if version.id == memory.id else
                         f"<li><a href='memory:{version.id}'>{label}</a></li>")
        parts.append(f"<p><b>Versions</b>, oldest first:</p><ul>{''.join(items)}</ul>")
    parts += merged_html(memory)
    return "".join(parts)


def merged_html(memory: Memory) -> list[str]:
    """The texts merged into a memory, its own text when a merged one is shown, and the repeats whose texts were not
    kept, as the pane lists them."""
    parts: list[str] = []
    if memory.merged:
        items = []
        for item in memory.merged:
            how = "merged by hand" if item.how == "merge" else f"the same note said again ({item.similarity:.0%} alike)"
            seen = f", written {item.seen} times" if item.seen > 1 else ""
            shown = " — shown above" if item.shown else ""
            text = html.escape(" ".join(item.content.split()))
            items.append(f"<li>{_when(item.written)} · {html.escape(how)}{seen}{shown}: “{text}”</li>")
        parts.append(f"<p><b>Merged into this note</b>, oldest first (Split makes each a note of its own "
                     f"again):</p><ul>{''.join(items)}</ul>")
    if memory.own_text is not None:
        parts.append(f"<p><b>Its own text</b> (a longer one merged into it is shown above): "
                     f"“{html.escape(' '.join(memory.own_text.split()))}”</p>")
    if memory.merged_unkept:
        parts.append(f"<p>Written {count_of(memory.merged_unkept, 'more time', 'more times')} before Engram kept "
                     "the texts it merged: those texts were not kept, and one of them may have said something else. "
                     "Review lists such notes to check.</p>")
    return parts


def file_html(info: SourceInfo) -> str:
    """The pane's page for an ingested file."""
    rows = [("Project", project_label(info.project)), ("Passages", f"{info.chunk_count:,}"),
            ("Last read", _when(info.ingested_at)), ("Folder", info.root or "—")]
    summary = f"<p style='white-space: pre-wrap'>{html.escape(info.summary)}</p>" if info.summary else ""
    outline = "".join(f"<li>{html.escape(h)}</li>" for h in info.outline[:20])
    return (f"<h3>{html.escape(info.path or info.source)}</h3>{summary}{_table(rows)}"
            + (f"<p><b>Headings</b></p><ul>{outline}</ul>" if outline else ""))


class MemoryDetail(QWidget):
    """Shows one memory or file in full; ``shown`` says which memory it shows (its current state, for Edit)."""

    shown = Signal(object)  # the Memory now shown (None: a file, nothing, or it could not be read)

    def __init__(self, jobs: Jobs, engine: Engine) -> None:
        super().__init__()
        self._jobs = jobs
        self._engine = engine
        self._asked = 0  # the newest request: older replies are dropped
        self.memory: Memory | None = None
        self.workspace = ""
        self.heading = QLabel("Details")
        self.heading.setAccessibleName("Details heading")
        self.text = QTextBrowser()
        self.text.setAccessibleName("The selected memory in full")
        self.text.setOpenLinks(False)
        self.text.anchorClicked.connect(self._link)
        self.text.setPlainText(HINT)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.text, 1)

    def clear(self) -> None:
        """Show the hint again (nothing selected)."""
        self._asked += 1
        self._set(None, "Details", None)
        self.text.setPlainText(HINT)

    def show_memory(self, workspace: str, memory_id: str) -> None:
        """Read the memory with its versions (a job) and show it."""
        asked = self._asked = self._asked + 1
        tools = self._engine.tools
        self.workspace = workspace
        self._jobs.submit("task", "Reading a note", lambda report: tools.get_memory([memory_id], workspace=workspace),
                          on_done=lambda job: self._memory_read(asked, job))

    def show_file(self, workspace: str, source: str) -> None:
        """Read an ingested file's summary (a job) and show it."""
        asked = self._asked = self._asked + 1
        tools = self._engine.tools
        self.workspace = workspace
        self._jobs.submit("task", "Reading a file's summary",
                          lambda report: tools.file_summary(source, workspace=workspace),
                          on_done=lambda job: self._file_read(asked, job))

    def _stale_or_failed(self, asked: int, job: Job) -> bool:
        """Whether a read is to be dropped: another was asked since, or it failed (said in the pane)."""
        if asked != self._asked:
            return True
        if job.error is not None:
            self._set(None, "Details", None)
            self.text.setPlainText(f"Could not read it: {job.error.message}")
            return True
        return False

    def _memory_read(self, asked: int, job: Job) -> None:
        if self._stale_or_failed(asked, job):
            return
        found: MemoryList = job.result.result
        if not found.items:
            self._set(None, "Details", None)
            self.text.setPlainText("It is no longer remembered.")
            return
        memory = found.items[0]
        state = "superseded" if memory.superseded_by else "current"
        self._set(memory, f"{memory.kind.capitalize()} · {state}", note_html(memory, found.history.get(memory.id, [])))

    def _file_read(self, asked: int, job: Job) -> None:
        if self._stale_or_failed(asked, job):
            return
        self._set(None, "File", file_html(job.result.result))

    def _set(self, memory: Memory | None, heading: str, page: str | None) -> None:
        self.memory = memory
        self.heading.setText(heading)
        if page is not None:
            self.text.setHtml(page)
        self.shown.emit(memory)

    def _link(self, url: QUrl) -> None:
        if url.scheme() == "memory":
            self.show_memory(self.workspace, url.path())
