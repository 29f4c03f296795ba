"""The Memory page's tree: what an item stands for, how a reload keeps what the person opened, and the reads
that fill it (those run on worker threads)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from engram.core import Engine, EngramError
from engram.core.tools.results import Memory, SourceList, WorkspaceStatus

#: Files listed per page of a project (the most ``list_sources`` returns at once).
FILES_PAGE = 200
#: The latest notes listed per project (the most ``wake_up`` returns).
NOTES_SHOWN = 20
ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class Entry:
    """What a tree item stands for. ``kind``: workspace, project, files, notes, file, note, more (the next page
    of files from ``offset``), loading (a placeholder, or why a project could not be read) or empty;
    ``key`` is a file's source or a note's id, ``label`` how to name it to a person."""

    kind: str
    workspace: str = ""
    project: str = ""
    key: str = ""
    label: str = ""
    offset: int = 0

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return self.kind, self.workspace, self.project, self.key


Row = tuple[str, Entry, str]  # text, entry, tooltip


def entry_of(item: QTreeWidgetItem | None) -> Entry | None:
    """The entry a tree item stands for (None for an item that stands for nothing)."""
    value = item.data(0, ROLE) if item is not None else None
    return value if isinstance(value, Entry) else None


def fill(item: QTreeWidgetItem, row: Row) -> QTreeWidgetItem:
    item.setText(0, row[0])
    item.setData(0, ROLE, row[1])
    item.setToolTip(0, row[2] or row[0])
    return item


def sync(parent: QTreeWidgetItem, rows: list[Row]) -> list[QTreeWidgetItem]:
    """Make ``parent``'s children these rows, in order, keeping the items that stay (with their children,
    expansion and selection) so that a reload does not close what the person opened."""
    wanted = {row[1].identity for row in rows}
    for i in reversed(range(parent.childCount())):
        entry = entry_of(parent.child(i))
        if entry is None or entry.identity not in wanted:
            parent.takeChild(i)
    kept = {e.identity: parent.child(i) for i in range(parent.childCount()) if (e := entry_of(parent.child(i)))}
    items = []
    for index, row in enumerate(rows):
        item = kept.get(row[1].identity)
        if item is None:
            parent.insertChild(index, item := QTreeWidgetItem())
        elif parent.indexOfChild(item) != index:  # moved (a note written again): its place follows
            parent.takeChild(parent.indexOfChild(item))
            parent.insertChild(index, item)
        items.append(fill(item, row))
    return items


def read_workspaces(engine: Engine) -> list[tuple[str, WorkspaceStatus | EngramError]]:
    """Each workspace's ``status``, or the error that kept it from being read (runs on a worker thread)."""
    out: list[tuple[str, WorkspaceStatus | EngramError]] = []
    for name in engine.workspace_names():
        try:
            out.append((name, engine.tools.status(workspace=name).result))
        except EngramError as exc:
            out.append((name, exc))
    return out


def read_project(engine: Engine, workspace: str, project: str, offset: int) -> tuple[SourceList, list[Memory]]:
    """One page of a project's files and (with the first page) its latest notes (runs on a worker thread)."""
    files = engine.tools.list_sources(workspace=workspace, project=project, limit=FILES_PAGE, offset=offset).result
    notes = engine.tools.wake_up(workspace=workspace, project=project, limit=NOTES_SHOWN).result.recent \
        if offset == 0 else []
    return files, notes
