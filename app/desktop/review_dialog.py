"""Review: what upkeep found in a workspace (the ``review`` tool), for a person to look at and tidy.

Five lists: notes written more than once (each repeat was counted on the note), pairs of near-duplicate notes
that were stored apart (Merge makes a pair one), possible updates (a newer note alike to an older one with a
detail changed: Newer replaces older, or Both are true, in one click), notes merged by similarity before Engram
kept the texts it merged (to check), and history (notes an edit or a merge superseded). Show puts the selected
note in the Memory page's detail pane. The dialog is not modal: the window stays usable beside it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engram.core import Engine
from engram.core.tools.results import Memory, Review

from .counts import count_of
from .jobs import Job, Jobs
from .names import project_label, workspace_label

#: Memories listed per list (the tool's most).
LISTED = 200
_IDS = Qt.ItemDataRole.UserRole


def _gist(memory: Memory, width: int = 90) -> str:
    text = memory.title or " ".join(memory.content.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _list(name: str, headers: list[str], *, pairs: bool = False) -> QTreeWidget:
    """A list of the review; ``pairs``: its last two columns are two notes, sharing the width beside the first."""
    tree = QTreeWidget()
    tree.setAccessibleName(name)
    tree.setHeaderLabels(headers)
    tree.setRootIsDecorated(False)
    tree.setWordWrap(True)
    if pairs:
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
    return tree


class ReviewDialog(QDialog):
    """The review of one workspace (or one project of it), read in a job when opened and after each merge."""

    def __init__(self, parent: QWidget, jobs: Jobs, engine: Engine, workspace: str, project: str | None, *,
                 show: Callable[[str, str], None], merge: Callable[[str, str, str, Callable[[], None]], None],
                 answer: Callable[[str, str, str, bool, Callable[[], None]], None]) -> None:
        """``show(workspace, id)`` shows a note in the detail pane; ``merge(workspace, a, b, then)`` asks and
        merges two notes, calling ``then`` when done; ``answer(workspace, newer, older, replaces, then)`` answers a
        possible update (the newer replaces the older, or both are true)."""
        super().__init__(parent)
        shown = workspace_label(workspace, engine.settings.store.default_workspace)
        where = f"{shown}, project {project_label(project)}" if project else shown
        self.setWindowTitle(f"Review — {where}")
        self.setAccessibleName("Review duplicates and history")
        self._jobs, self._engine = jobs, engine
        self.workspace, self.project = workspace, project
        self._show, self._merge, self._answer = show, merge, answer
        self.summary = QLabel("Reading…")
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("What the review found")
        self.repeats = _list("Notes written more than once", ["Times", "Note", "Project"])
        self.pairs = _list("Near duplicates stored apart", ["Alike", "Newer note", "Older note"], pairs=True)
        self.updates = _list("Possible updates", ["What changed", "Newer note", "Older note"], pairs=True)
        self.merged_before = _list("Notes merged before their texts were kept", ["Repeats", "Note", "Project"])
        self.history = _list("Superseded notes", ["Superseded", "Note", "Project"])
        self.tabs = QTabWidget()
        self.tabs.addTab(self.repeats, "Written more than once")
        self.tabs.addTab(self.pairs, "Near duplicates")
        self.tabs.addTab(self.updates, "Possible updates")
        self.tabs.addTab(self.merged_before, "Merged before")
        self.tabs.addTab(self.history, "History")
        self.show_button = QPushButton("Show")
        self.show_button.setToolTip("Show the selected note in full on the Memory page")
        self.show_button.clicked.connect(self._show_selected)
        self.merge_button = QPushButton("Merge…")
        self.merge_button.setToolTip("Keep the longer text of the selected pair; the other stays as its history")
        self.merge_button.clicked.connect(self._merge_selected)
        self.replaces_button = QPushButton("Newer replaces older")
        self.replaces_button.setToolTip("The newer note is the current one; the older stays as its history, and "
                                        "search leaves it out")
        self.replaces_button.clicked.connect(lambda: self._answer_selected(True))
        self.both_button = QPushButton("Both are true")
        self.both_button.setToolTip("Keep both notes as they are: the pair is not offered again")
        self.both_button.clicked.connect(lambda: self._answer_selected(False))
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        for tree in (self.repeats, self.pairs, self.updates, self.merged_before, self.history):
            tree.itemSelectionChanged.connect(self._selection)
            tree.itemDoubleClicked.connect(lambda _item, _column: self._show_selected())
        self.tabs.currentChanged.connect(lambda _index: self._selection())
        buttons = QHBoxLayout()
        buttons.addWidget(self.show_button)
        buttons.addWidget(self.merge_button)
        buttons.addWidget(self.replaces_button)
        buttons.addWidget(self.both_button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(buttons)
        self.resize(760, 460)
        self.review: Review | None = None
        self._selection()
        self.reload()

    def reload(self) -> None:
        """Read the review again (a job)."""
        tools, workspace, project = self._engine.tools, self.workspace, self.project
        self._jobs.submit("task", "Reviewing duplicates and history",
                          lambda report: tools.review(project=project, limit=LISTED, workspace=workspace),
                          on_done=self._read)

    def _read(self, job: Job) -> None:
        if job.error is not None:
            self.summary.setText(f"{job.error.title}: {job.error.message}")
            return
        review: Review = job.result.result
        self.review = review
        compared = ("" if review.compared == review.current else
                    f" Near duplicates were looked for among the newest {review.compared:,} of "
                    f"{review.current:,} notes.")
        before = (f" {count_of(review.merged_before_total, 'note was', 'notes were')} merged by similarity before "
                  "Engram kept the texts it merged: check them." if review.merged_before_total else "")
        self.summary.setText(
            f"{count_of(review.seen_again_total, 'note was', 'notes were')} written more than once, "
            f"{count_of(review.near_pairs_total, 'pair of notes is', 'pairs of notes are')} alike enough to be one "
            f"(similarity {review.threshold:g} or more), "
            f"{count_of(review.possible_updates_total, 'newer note may update', 'newer notes may update')} an older "
            f"one, and {count_of(review.superseded_total, 'note was', 'notes were')} superseded by a newer version."
            f"{before}{compared}")
        self.tabs.setTabText(0, f"Written more than once ({review.seen_again_total:,})")
        self.tabs.setTabText(1, f"Near duplicates ({review.near_pairs_total:,})")
        self.tabs.setTabText(2, f"Possible updates ({review.possible_updates_total:,})")
        self.tabs.setTabText(3, f"Merged before ({review.merged_before_total:,})")
        self.tabs.setTabText(4, f"History ({review.superseded_total:,})")
        self._fill(self.repeats, [([f"{m.seen_count}×", _gist(m), project_label(m.project)], [m.id]) for m in review.seen_again])
        self._fill(self.pairs, [([f"{p.similarity:.2f}", _gist(p.first, 60), _gist(p.second, 60)],
                                 [p.first.id, p.second.id]) for p in review.near_pairs])
        self._fill(self.updates, [(["; ".join(u.changes) or "a detail", _gist(u.newer, 60), _gist(u.older, 60)],
                                   [u.newer.id, u.older.id]) for u in review.possible_updates])
        self._fill(self.merged_before, [([f"{m.merged_unkept} not kept", _gist(m), project_label(m.project)], [m.id])
                                        for m in review.merged_before])
        self._fill(self.history, [([f"{m.valid_to:%Y-%m-%d}" if m.valid_to else "", _gist(m), project_label(m.project)], [m.id])
                                  for m in review.superseded])
        self._selection()

    @staticmethod
    def _fill(tree: QTreeWidget, rows: list[tuple[list[str], list[str]]]) -> None:
        tree.clear()
        for texts, ids in rows:
            item = QTreeWidgetItem(texts)
            item.setData(0, _IDS, ids)
            for column, text in enumerate(texts):
                item.setToolTip(column, text)
            tree.addTopLevelItem(item)
        tree.resizeColumnToContents(0)

    def _selected_ids(self) -> list[str]:
        tree = self.tabs.currentWidget()
        if not isinstance(tree, QTreeWidget) or not tree.selectedItems():
            return []
        ids = tree.selectedItems()[0].data(0, _IDS)
        return list(ids) if isinstance(ids, list) else []

    def _selection(self) -> None:
        ids = self._selected_ids()
        updates = self.tabs.currentWidget() is self.updates
        self.show_button.setEnabled(bool(ids))
        self.merge_button.setVisible(not updates)
        self.merge_button.setEnabled(len(ids) == 2 and not updates)
        self.replaces_button.setVisible(updates)
        self.both_button.setVisible(updates)
        self.replaces_button.setEnabled(updates and len(ids) == 2)
        self.both_button.setEnabled(updates and len(ids) == 2)

    def _show_selected(self) -> None:
        ids = self._selected_ids()
        if ids:
            self._show(self.workspace, ids[0])

    def _merge_selected(self) -> None:
        ids = self._selected_ids()
        if len(ids) == 2:
            self._merge(self.workspace, ids[0], ids[1], self.reload)

    def _answer_selected(self, replaces: bool) -> None:
        ids = self._selected_ids()
        if len(ids) == 2 and self.tabs.currentWidget() is self.updates:
            self._answer(self.workspace, ids[0], ids[1], replaces, self.reload)
