"""The Memory page, driven for real offscreen on a real Desktop: browse workspaces, projects, files and notes;
add a note; forget one file or one note, and nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QLineEdit, QPlainTextEdit, QProgressBar, QTreeWidget

from engram.app.desktop.desktop import Desktop
from engram.app.desktop.memory_page import MemoryPage, entry_of
from engram.core import Paths

from .conftest import write_tree
from .desktop_support import desktops


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


@pytest.fixture
def desktop(qapp: Any, paths: Paths, environ: dict[str, str], real_embedder: Any) -> Iterator[Desktop]:
    with desktops(paths, environ, real_embedder, tray=False) as build:
        yield build()


@pytest.fixture
def stocked(desktop: Desktop, home: Path, qtbot: Any) -> Desktop:
    """Two files ingested into project "ops" and two notes stored in it."""
    folder = write_tree(home / "ops", {"deploy.md": "# Deploy\n\nRoll back a deploy with git revert.",
                                       "backup.md": "# Backups\n\nRestic runs the nightly backup."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder), project="ops")
    desktop.engine.call("store", {"content": "Deploys roll back only with the on-call lead's approval.",
                                  "project": "ops", "title": "Rollback approval"})
    desktop.engine.call("store", {"content": "The staging database is refreshed every Monday.", "project": "ops",
                                  "title": "Staging refresh"})
    return desktop


def texts(item: Any) -> list[str]:
    return [item.child(i).text(0) for i in range(item.childCount())]


def open_project(page: MemoryPage, qtbot: Any, project: str = "ops") -> Any:
    """Wait for the project in the tree, open it and wait until its files and notes are shown."""
    qtbot.waitUntil(lambda: page.project_item("default", project) is not None, timeout=30_000)
    item = page.project_item("default", project)
    item.setExpanded(True)
    qtbot.waitUntil(lambda: texts(item)[:1] != ["Loading…"] and item.childCount() == 2, timeout=30_000)
    return item


def child_with(item: Any, text: str) -> Any:
    return next(item.child(i) for i in range(item.childCount()) if text in item.child(i).text(0))


def test_the_tree_shows_workspaces_projects_files_and_notes(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 1 and page.tree.topLevelItem(0).childCount() == 1,
                    timeout=30_000)
    workspace = page.tree.topLevelItem(0)
    assert workspace.text(0).startswith("My memory — ") and "2 files" in workspace.text(0)
    assert "workspace “default”" in workspace.toolTip(0), "the name the command line uses"
    project = page.tree.topLevelItem(0).child(0)
    assert project.text(0).startswith("ops — ") and texts(project) == ["Loading…"], "its contents load when opened"
    project = open_project(page, qtbot)
    files, notes = project.child(0), project.child(1)
    assert files.text(0) == "Files (2)" and notes.text(0) == "Notes (2 notes)"
    assert [t.split(" (")[0] for t in texts(files)] == ["backup.md", "deploy.md"]
    assert [t.split(" · ", 1)[1] for t in texts(notes)] == ["Staging refresh", "Rollback approval"]
    # The message line's hint follows what is selected, until an action has something to say.
    assert page.message.text() == "Open a project to see its files and notes."
    page.tree.setCurrentItem(project)
    assert page.message.text() == "Open Files or Notes to see what this project holds."
    page.tree.setCurrentItem(notes.child(0))
    assert page.message.text().startswith("Edit changes this note")
    page.tree.setCurrentItem(files.child(0))
    assert page.message.text().startswith("Forget removes this file from memory")
    page.message.setText("Added the note to ops.")  # as an action says it
    page.tree.setCurrentItem(project)
    assert page.message.text() == "Added the note to ops.", "what an action said stays"


def test_a_note_without_a_project_is_under_no_project(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    page.note.setPlainText("Buy milk on the way home.")
    assert page.project.text() == "" and page.project.placeholderText().startswith("No project")
    with qtbot.waitSignal(page.note_added, timeout=30_000) as added:
        page.add_button.click()
    assert added.args == ["Added the note."]
    assert stocked.engine.call("wake_up", {"project": "general"}).result.recent[0].content.startswith("Buy milk")
    qtbot.waitUntil(lambda: page.project_item("default", "general") is not None, timeout=30_000)
    item = page.project_item("default", "general")
    assert item.text(0).startswith("No project — 1 memory") and "project “general”" in item.toolTip(0)


def test_adding_a_note_stores_it_and_shows_it(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    project = open_project(page, qtbot)
    page.note.setPlainText("The release train leaves every second Thursday.")
    page.project.setText("ops")
    with qtbot.waitSignal(page.note_added, timeout=30_000) as added:
        page.add_button.click()
    assert added.args == ["Added the note to ops."]
    assert page.note.toPlainText() == "", "the box clears once the note is stored"
    found = stocked.engine.call("search", {"query": "release train Thursday"}).result
    assert any("release train" in h.content for h in found.hits)
    qtbot.waitUntil(lambda: any("release train" in t for t in texts(project.child(1))), timeout=30_000)


@pytest.mark.slow
def test_a_note_written_by_anyone_shows_in_the_open_project_once_writes_go_quiet(stocked: Desktop,
                                                                                qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    project = open_project(page, qtbot)
    page.tree.setCurrentItem(child_with(project.child(0), "backup.md"))
    stocked.engine.call("store", {"content": "Backups are kept for 30 days.", "project": "ops", "title": "Retention"})
    qtbot.waitUntil(lambda: texts(project.child(1))[0].endswith("Retention"), timeout=10_000)
    assert project.isExpanded() and project.child(1).childCount() == 3, "the reload keeps the project open"
    assert page.tree.currentItem().text(0).startswith("backup.md"), "and what was selected stays selected"
    assert project.text(0) == "ops — 5 memories, 2 files", "2 passages and 3 notes"


def test_an_empty_note_is_refused_and_nothing_is_stored(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    before = stocked.engine.call("status", {}).result.memories
    page.note.setPlainText("   \n ")
    with qtbot.waitSignal(page.note_added, timeout=5_000) as refused:
        page.add_button.click()
    assert refused.args == ["Nothing to add: type the note first."]
    assert page.message.text() == "Nothing to add: type the note first."
    assert stocked.engine.call("status", {}).result.memories == before
    page.note.setPlainText("x" * 20_001)  # refused by the engine, not the page
    with qtbot.waitSignal(page.note_added, timeout=30_000) as refused:
        page.add_button.click()
    assert "20000" in refused.args[0] or "20,000" in refused.args[0], refused.args
    assert stocked.state != "error", "what was typed is refused on the page; the tray does not turn red"
    assert stocked.engine.call("status", {}).result.memories == before


def test_forgetting_a_file_asks_first_and_removes_that_file_alone(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    page.show()
    project = open_project(page, qtbot)
    assert not page.forget_button.isEnabled(), "nothing to forget until a file or a note is selected"
    page.tree.setCurrentItem(project.child(0))
    assert not page.forget_button.isEnabled(), "a group is not forgotten"
    page.tree.setCurrentItem(child_with(project.child(0), "deploy.md"))
    assert page.forget_button.isEnabled()
    qtbot.keyClick(page.tree, Qt.Key.Key_Delete)  # the Delete key asks too
    assert page.confirm is not None and page.confirm.isVisible() and "deploy.md" in page.confirm.text()
    page.confirm.button(page.confirm.StandardButton.Cancel).click()  # a second thought: nothing goes
    assert stocked.engine.call("list_sources", {}).result.total == 2
    page.forget_button.click()
    forget = next(b for b in page.confirm.buttons() if b.text() == "Forget")
    with qtbot.waitSignal(page.forgotten, timeout=30_000) as done:
        forget.click()
    assert done.args == ["Forgot deploy.md (1 passage)."]
    assert [s.path for s in stocked.engine.call("list_sources", {}).result.items] == ["backup.md"]
    found = stocked.engine.call("search", {"query": "roll back deploy approval"}).result
    assert any("on-call lead" in h.content for h in found.hits), "the note about deploys stays"
    assert not any("git revert" in h.content for h in found.hits)
    qtbot.waitUntil(lambda: project.child(0).text(0) == "Files (1)", timeout=30_000)
    assert [t.split(" (")[0] for t in texts(project.child(0))] == ["backup.md"]
    assert project.child(1).childCount() == 2


@pytest.mark.slow
def test_forgetting_a_note_removes_only_that_note(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    page.show()
    project = open_project(page, qtbot)
    page.tree.setCurrentItem(child_with(project.child(1), "Staging refresh"))
    page.forget_button.click()
    assert page.confirm is not None and "Staging refresh" in page.confirm.text()
    forget = next(b for b in page.confirm.buttons() if b.text() == "Forget")
    with qtbot.waitSignal(page.forgotten, timeout=30_000) as done:
        forget.click()
    assert done.args == ["Forgot the note “Staging refresh”."]
    notes = stocked.engine.call("wake_up", {"project": "ops"}).result.recent
    assert [m.title for m in notes] == ["Rollback approval"]
    assert stocked.engine.call("list_sources", {}).result.total == 2
    qtbot.waitUntil(lambda: texts(project.child(1))[0].endswith("Rollback approval")
                    and project.child(1).childCount() == 1, timeout=30_000)


def test_show_more_loads_the_next_page_of_files(desktop: Desktop, home: Path, qtbot: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engram.app.desktop.memory_tree.FILES_PAGE", 2)
    folder = write_tree(home / "many", {f"f{i}.md": f"# File {i}\n\nText number {i}." for i in range(5)})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder), project="many")
    page = MemoryPage(desktop.jobs, desktop.engine, desktop.shell)
    files = open_project(page, qtbot, "many").child(0)
    assert texts(files)[-1] == "Show more… (3 more files)"
    page.tree.itemClicked.emit(files.child(2), 0)
    qtbot.waitUntil(lambda: files.childCount() == 5, timeout=30_000)
    assert texts(files)[-1] == "Show more… (1 more file)"
    page.tree.itemClicked.emit(files.child(4), 0)
    qtbot.waitUntil(lambda: files.childCount() == 5 and entry_of(files.child(4)).kind == "file", timeout=30_000)
    assert [t.split(" (")[0] for t in texts(files)] == [f"f{i}.md" for i in range(5)]


def test_every_control_has_a_name_and_the_tree_never_scrolls_sideways(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    page.resize(800, 600)
    page.show()
    open_project(page, qtbot)
    with qtbot.waitSignal(stocked.jobs.changed, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        stocked.ingest_folder(str(Path(stocked.environ["HOME"]) / "ops"), project="ops")
    controls = [w for kind in (QAbstractButton, QLineEdit, QPlainTextEdit, QTreeWidget, QCheckBox, QProgressBar)
                for w in page.findChildren(kind)]
    assert len(controls) >= 6 and all(w.accessibleName() for w in controls), [w for w in controls
                                                                               if not w.accessibleName()]
    assert page.minimumSizeHint().width() <= 800
    assert not page.tree.horizontalScrollBar().isVisible()
    assert page.tree.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    qtbot.waitUntil(lambda: not stocked.jobs.running(), timeout=60_000)


def test_pause_indexing_and_ingest_a_folder_go_to_the_desktop(stocked: Desktop, qtbot: Any) -> None:
    page = MemoryPage(stocked.jobs, stocked.engine, stocked.shell)
    page.pause.click()
    assert stocked.engine.indexing_paused
    page.pause.click()
    assert not stocked.engine.indexing_paused
    page.ingest_button.click()
    assert stocked.folder_dialog is not None and stocked.folder_dialog.isVisible()
    stocked.folder_dialog.reject()


@pytest.mark.slow
def test_cancel_stops_an_ingest_and_keeps_the_files_it_finished(desktop: Desktop, home: Path, qtbot: Any) -> None:
    from engram.core.errors import IngestCancelled
    from engram.core.ingest.pipeline import _BATCH_FILES

    files = _BATCH_FILES * 2 + 3
    folder = write_tree(home / "many", {f"n{i:03}.md": f"# Note {i}\n\nItem {i} of the list." for i in range(files)})
    page = MemoryPage(desktop.jobs, desktop.engine, desktop.shell)
    page.show()
    desktop.set_indexing_paused(True)  # the first batch is written, then the ingest waits: a moment to cancel
    job = desktop.ingest_folder(str(folder), project="many")
    qtbot.waitUntil(lambda: job.id in page._cancels and page._cancels[job.id].isEnabled(), timeout=60_000)
    cancel = page._cancels[job.id]
    assert cancel.accessibleName() == "Cancel Ingest many"
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.id == job.id) as ended:
        cancel.click()
    assert isinstance(ended.args[0].error, IngestCancelled)
    assert "Stopped remembering a folder" in desktop.window.statusBar().currentMessage()
    assert desktop.state != "error"  # a cancel is what the person asked for, not a failure
    assert job.id not in page._cancels and page.no_jobs.isVisible()
    desktop.set_indexing_paused(False)
    sources = desktop.engine.call("status", {}).result.sources
    assert 0 < sources < files and sources % _BATCH_FILES == 0  # whole batches of whole files


@pytest.mark.slow
def test_a_shared_workspace_is_added_from_the_page_and_shown_as_shared(desktop: Desktop, qtbot: Any) -> None:
    from engram.core.store.bucket_access import stored_credentials
    from standins.s3 import OPEN_KEY, LoopbackS3

    s3 = LoopbackS3()
    try:
        s3.create_bucket("team-memory")
        page = MemoryPage(desktop.jobs, desktop.engine, desktop.shell)
        page.add_shared_workspace()
        dialog = page.shared_dialog
        assert dialog is not None and dialog.isVisible()
        dialog.name.setText("team")
        dialog.uri.setText("team-memory/engram")
        dialog.add_button.click()
        assert "is not a bucket location" in dialog.message.text() and dialog.isVisible()
        dialog.uri.setText("s3://no-such-bucket/engram")
        dialog.endpoint.setText(s3.endpoint)
        dialog.key_id.setText(OPEN_KEY[0])
        dialog.add_button.click()
        assert "both the access key ID and its secret" in dialog.message.text()
        dialog.secret.setText(OPEN_KEY[1])
        dialog.add_button.click()
        qtbot.waitUntil(lambda: dialog.message.text().startswith("Bucket not found: "), timeout=60_000)
        assert dialog.isVisible() and "team" not in desktop.engine.workspace_names()
        dialog.uri.setText("s3://team-memory/engram")
        with qtbot.waitSignal(dialog.finished, timeout=60_000):
            dialog.add_button.click()
        assert page.message.text().startswith("Added shared workspace team: s3://team-memory/engram at http://")
        assert stored_credentials("team") is not None and stored_credentials("team").access_key_id == OPEN_KEY[0]
        qtbot.waitUntil(lambda: any(page.tree.topLevelItem(i).text(0).startswith("team (shared) — 0 memories")
                                    for i in range(page.tree.topLevelItemCount())), timeout=30_000)
        item = next(page.tree.topLevelItem(i) for i in range(page.tree.topLevelItemCount())
                    if page.tree.topLevelItem(i).text(0).startswith("team"))
        assert item.toolTip(0).startswith("Shared: s3://team-memory/engram at http://127.0.0.1")
    finally:
        s3.close()
