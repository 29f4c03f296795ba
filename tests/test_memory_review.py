"""Reviewing memory in the window (issue 34, parts 3–5), driven for real offscreen on a real Desktop: a note in full
with where it came from and its versions, Edit, Merge, the review of repeats, near duplicates and history, Forget
by filter after a preview, Export and Import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox

from engram.app.desktop.desktop import Desktop
from engram.app.desktop.memory_page import MemoryPage
from engram.core import Paths

from .desktop_support import desktops
from .test_memory_page import child_with, open_project


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


@pytest.fixture
def desktop(qapp: Any, paths: Paths, environ: dict[str, str], real_embedder: Any) -> Iterator[Desktop]:
    with desktops(paths, environ, real_embedder, tray=False) as build:
        yield build()


@pytest.fixture
def page(desktop: Desktop, qtbot: Any) -> MemoryPage:
    desktop.engine.tools.store("Deploys roll back only with the on-call lead's approval.", project="ops",
                               title="Rollback approval", tags=["deploy"])
    desktop.engine.tools.store("The staging database is refreshed every Monday.", project="ops",
                               title="Staging refresh")
    page = MemoryPage(desktop.jobs, desktop.engine, desktop.shell)
    page.show()
    return page


def _wait_job(desktop: Desktop, qtbot: Any, title: str) -> Any:
    return qtbot.waitSignal(desktop.jobs.finished, timeout=30_000, check_params_cb=lambda j: j.title == title)


def _shown(page: MemoryPage) -> str:
    """The detail pane's text, white space made single spaces (its table is laid out in cells)."""
    return " ".join(page.detail.text.toPlainText().split())


def _select_note(page: MemoryPage, qtbot: Any, title: str) -> Any:
    project = open_project(page, qtbot)
    item = child_with(project.child(1), title)
    page.tree.setCurrentItem(item)
    qtbot.waitUntil(lambda: page.detail.memory is not None and page.detail.memory.title == title, timeout=30_000)
    return item


def test_a_selected_note_shows_in_full_with_where_it_came_from(page: MemoryPage, qtbot: Any) -> None:
    assert "Select a note or a file" in page.detail.text.toPlainText()
    _select_note(page, qtbot, "Rollback approval")
    shown = _shown(page)
    assert "Deploys roll back only with the on-call lead's approval." in shown
    assert "Project ops" in shown and "Kind note" in shown and "Tags deploy" in shown and "Written 20" in shown
    assert page.detail.heading.text() == "Note · current" and page.tidy.edit_button.isEnabled()
    page.tree.setCurrentItem(child_with(page.project_item("default", "ops").child(1), "Staging refresh"))
    qtbot.waitUntil(lambda: "refreshed every Monday" in page.detail.text.toPlainText(), timeout=30_000)


def test_a_captured_turn_says_which_editor_and_session_it_came_from(desktop: Desktop, tmp_path: Path,
                                                                     qtbot: Any) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = [{"type": kind, "uuid": uuid, "sessionId": "5f1c-session", "timestamp": "2026-12-01T09:00:00.000Z",
              "cwd": "/home/ada/ops", "isSidechain": False, "message": {"role": kind, "content": text}}
             for kind, uuid, text in (("user", "u1", "How do we roll back?"),
                                      ("assistant", "a1", [{"type": "text", "text": "With git revert, then redeploy."}]))]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    desktop.engine.capture_file("claude-code", transcript, session_id="5f1c-session", cwd="/home/ada/ops")
    (hit,) = desktop.engine.tools.search("roll back git revert", kind="exchange").result.hits
    page = MemoryPage(desktop.jobs, desktop.engine, desktop.shell)
    page.detail.show_memory("default", hit.id)
    qtbot.waitUntil(lambda: page.detail.memory is not None, timeout=30_000)
    shown = _shown(page)
    assert "Captured from Claude Code, session 5f1c-session" in shown and "Project ops" in shown


def test_edit_stores_a_new_version_and_the_old_one_stays_as_history(desktop: Desktop, page: MemoryPage,
                                                                    qtbot: Any) -> None:
    _select_note(page, qtbot, "Staging refresh")
    old = page.detail.memory
    assert old is not None
    page.tidy.edit_button.click()
    dialog = page.tidy.edit_dialog
    assert dialog is not None and dialog.isVisible()
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert not save.isEnabled(), "nothing changed yet"
    dialog.editor.setPlainText("  ")
    assert not save.isEnabled(), "a blank note is not saved"
    dialog.editor.setPlainText("The staging database is refreshed every Tuesday night.")
    with _wait_job(desktop, qtbot, "Saving the note"):
        save.click()
    assert page.message.text().startswith("Stored note ") and f"it supersedes {old.id}" in page.message.text()
    qtbot.waitUntil(lambda: page.detail.memory is not None and page.detail.memory.id != old.id, timeout=30_000)
    shown = _shown(page)
    assert "every Tuesday night" in shown and "Versions, oldest first:" in shown and "(this one)" in shown
    (was,) = desktop.engine.tools.get_memory([old.id]).result.items
    assert was.superseded_by == page.detail.memory.id and was.content.endswith("every Monday.")
    hits = desktop.engine.tools.search("staging database refreshed").result.hits
    assert [h.content for h in hits if "staging" in h.content] == [
        "The staging database is refreshed every Tuesday night."]
    page.detail.text.anchorClicked.emit(QUrl(f"memory:{old.id}"))
    qtbot.waitUntil(lambda: page.detail.memory is not None and page.detail.memory.id == old.id, timeout=30_000)
    assert page.detail.heading.text() == "Note · superseded" and not page.tidy.edit_button.isEnabled()


def test_merge_of_two_selected_notes_asks_then_keeps_the_longer_text(desktop: Desktop, page: MemoryPage,
                                                                     qtbot: Any) -> None:
    first = _select_note(page, qtbot, "Rollback approval")
    assert not page.tidy.merge_button.isEnabled()
    child_with(page.project_item("default", "ops").child(1), "Staging refresh").setSelected(True)
    assert page.tidy.merge_button.isEnabled() and not page.tidy.edit_button.isEnabled()
    assert not page.forget_button.isEnabled(), "Forget takes one thing at a time"
    with _wait_job(desktop, qtbot, "Reading two notes"):
        page.tidy.merge_button.click()
    box = page.tidy.question
    assert box is not None and box.isVisible() and "on-call lead" in box.informativeText()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert desktop.engine.tools.review(project="ops").result.superseded_total == 0, "Cancel merges nothing"
    first.setSelected(True)
    with _wait_job(desktop, qtbot, "Reading two notes"):
        page.tidy.merge_button.click()
    merge = next(b for b in page.tidy.question.buttons() if b.text() == "Merge")
    with _wait_job(desktop, qtbot, "Merging two notes"):
        merge.click()
    (gone,) = desktop.engine.tools.review(project="ops").result.superseded
    assert gone.title == "Staging refresh" and "now seen 2 times" in page.message.text()


def test_review_lists_repeats_near_duplicates_and_history_and_merges_a_pair(desktop: Desktop, page: MemoryPage,
                                                                            qtbot: Any) -> None:
    tools = desktop.engine.tools
    tools.store("Deploys roll back only with the on-call lead's approval.", project="ops")  # counted: seen twice
    desktop.engine.settings.upkeep.duplicates = "off"  # as notes stored before duplicate handling
    tools.store("Releases go out on Tuesdays after the review.", project="ops")
    tools.store("Releases go out on Tuesdays, after the review!", project="ops")
    desktop.engine.settings.upkeep.duplicates = "near"
    old = tools.store("Backups run at 02:00.", project="ops").result.id
    tools.store("Backups run at 03:30.", project="ops", supersedes=[old])
    _select_note(page, qtbot, "Rollback approval")
    with _wait_job(desktop, qtbot, "Reviewing duplicates and history"):
        page.tidy.review_button.click()
    dialog = page.tidy.review_dialog
    assert dialog is not None and dialog.isVisible() and dialog.windowTitle() == "Review — My memory, project ops"
    assert dialog.summary.text().startswith("1 note was written more than once, 1 pair of notes is alike enough")
    assert [dialog.tabs.tabText(i) for i in range(5)] == [
        "Written more than once (1)", "Near duplicates (1)", "Possible updates (0)", "Merged before (0)",
        "History (1)"]
    assert dialog.repeats.topLevelItem(0).text(0) == "2×"
    assert dialog.history.topLevelItem(0).text(1) == "Backups run at 02:00."
    dialog.tabs.setCurrentWidget(dialog.history)
    dialog.history.setCurrentItem(dialog.history.topLevelItem(0))
    dialog.show_button.click()
    qtbot.waitUntil(lambda: page.detail.memory is not None and page.detail.memory.id == old, timeout=30_000)
    dialog.tabs.setCurrentWidget(dialog.pairs)
    assert not dialog.merge_button.isEnabled()
    dialog.pairs.setCurrentItem(dialog.pairs.topLevelItem(0))
    assert dialog.merge_button.isEnabled()
    with _wait_job(desktop, qtbot, "Reading two notes"):
        dialog.merge_button.click()
    merge = next(b for b in page.tidy.question.buttons() if b.text() == "Merge")
    with _wait_job(desktop, qtbot, "Reviewing duplicates and history"):
        merge.click()
    assert dialog.tabs.tabText(1) == "Near duplicates (0)" and dialog.tabs.tabText(4) == "History (2)"


def test_review_answers_a_possible_update_in_one_click_either_way(desktop: Desktop, page: MemoryPage,
                                                                  qtbot: Any) -> None:
    tools = desktop.engine.tools
    rotates = tools.store("The staging database password rotates every 30 days.", project="ops").result.id
    newer = tools.store("The staging database password rotates every 90 days.", project="ops").result
    owner = tools.store("Alice owns the billing service.", project="ops").result.id
    also = tools.store("Bob owns the billing service.", project="ops").result
    assert (newer.may_update, also.may_update) == (rotates, owner)
    _select_note(page, qtbot, "Rollback approval")
    with _wait_job(desktop, qtbot, "Reviewing duplicates and history"):
        page.tidy.review_button.click()
    dialog = page.tidy.review_dialog
    assert dialog is not None and dialog.tabs.tabText(2) == "Possible updates (2)"
    assert "2 newer notes may update an older one" in dialog.summary.text()
    dialog.tabs.setCurrentWidget(dialog.updates)
    assert dialog.replaces_button.isVisible() and not dialog.replaces_button.isEnabled()
    rows = {dialog.updates.topLevelItem(i).text(0): dialog.updates.topLevelItem(i)
            for i in range(dialog.updates.topLevelItemCount())}
    assert set(rows) == {"30 days → 90 days", "Alice → Bob"}
    dialog.updates.setCurrentItem(rows["30 days → 90 days"])
    with _wait_job(desktop, qtbot, "Reviewing duplicates and history"):
        dialog.replaces_button.click()
    assert tools.get_memory([rotates]).result.items[0].superseded_by == newer.id
    assert dialog.tabs.tabText(2) == "Possible updates (1)"
    dialog.updates.setCurrentItem(dialog.updates.topLevelItem(0))
    with _wait_job(desktop, qtbot, "Reviewing duplicates and history"):
        dialog.both_button.click()
    assert dialog.tabs.tabText(2) == "Possible updates (0)"
    assert tools.get_memory([owner]).result.items[0].superseded_by is None, "both are true: both stay current"
    assert "kept both" in page.message.text().lower()


def test_a_merged_note_shows_the_texts_merged_into_it_and_split_makes_them_notes_again(
        desktop: Desktop, page: MemoryPage, qtbot: Any) -> None:
    tools = desktop.engine.tools
    kept = tools.store("Deploys roll back only with the on-call lead's approval, as the team agreed.",
                       project="ops").result
    assert kept.merged == "near"
    _select_note(page, qtbot, "Rollback approval")
    shown = _shown(page)
    assert "Merged into this note" in shown and "as the team agreed" in shown and "Its own text" in shown
    assert page.tidy.split_button.isEnabled()
    page.tidy.split_button.click()
    box = page.tidy.question
    assert box is not None and box.isVisible() and "its own text again" in box.informativeText()
    split = next(b for b in box.buttons() if b.text() == "Split")
    with _wait_job(desktop, qtbot, "Splitting a note"):
        split.click()
    assert page.message.text().startswith("Split ") and "1 memory again" in page.message.text()
    qtbot.waitUntil(lambda: page.detail.memory is not None and not page.detail.memory.merged, timeout=30_000)
    assert not page.tidy.split_button.isEnabled()
    contents = sorted(m.content for m in tools.search("rollback approval on-call lead", project="ops").result.hits)
    assert contents[:2] == ["Deploys roll back only with the on-call lead's approval, as the team agreed.",
                            "Deploys roll back only with the on-call lead's approval."]


def test_forget_by_filter_previews_then_forgets_exactly_what_it_listed(desktop: Desktop, page: MemoryPage,
                                                                       qtbot: Any) -> None:
    desktop.engine.tools.store("A note of another project", project="web")
    open_project(page, qtbot)
    page.tree.setCurrentItem(page.project_item("default", "ops"))
    page.tidy.forget_filter_button.click()
    dialog = page.tidy.forget_dialog
    assert dialog is not None and dialog.project.currentText() == "ops" and not dialog.forget_button.isEnabled()
    dialog.project.setCurrentText("Any")
    dialog.preview_button.click()
    assert "Choose at least one filter" in dialog.preview_text.toPlainText()
    dialog.project.setCurrentText("ops")
    with _wait_job(desktop, qtbot, "Listing what would be forgotten"):
        dialog.preview_button.click()
    preview = dialog.preview_text.toPlainText()
    assert preview.startswith("Would forget 2 memories in default: 2 notes; by project: ops 2.")
    assert "Rollback approval" in preview and "confirm=true" not in preview
    assert dialog.forget_button.isEnabled() and dialog.forget_button.text() == "Forget these 2"
    dialog.kind.setCurrentText("Conversation turns")
    assert not dialog.forget_button.isEnabled(), "filters changed after the preview: preview again"
    dialog.kind.setCurrentText("Any")
    with _wait_job(desktop, qtbot, "Listing what would be forgotten"):
        dialog.preview_button.click()
    with _wait_job(desktop, qtbot, "Forgetting"):
        dialog.forget_button.click()
    assert page.message.text().startswith("Forgot 2 memories in default")
    assert [m.project for m in desktop.engine.tools.wake_up().result.recent] == ["web"]


def test_export_writes_a_new_folder_and_import_counts_then_asks(desktop: Desktop, page: MemoryPage, home: Path,
                                                              qtbot: Any) -> None:
    open_project(page, qtbot)
    page.tree.setCurrentItem(page.project_item("default", "ops"))
    page.tidy.export_button.click()
    chooser = page.tidy.transfer.dialog
    assert chooser is not None and Path(chooser.directory().absolutePath()) == Path.home()
    with _wait_job(desktop, qtbot, "Exporting ops"):
        chooser.fileSelected.emit(str(home))
    (folder,) = home.glob("engram-default-ops-*")
    assert page.message.text().startswith(f"Exported default/ops to {folder}: 2 memories")
    peer = home / "mem0.json"
    peer.write_text(json.dumps([{"id": "m1", "memory": "Prefers tea over coffee", "user_id": "ada",
                                 "created_at": "2026-01-02T10:00:00Z"}]), encoding="utf-8")
    with _wait_job(desktop, qtbot, "Reading what to import"):
        page.tidy.transfer.count_import(str(peer), "default")
    box = page.tidy.transfer.question
    assert box is not None and "This would import" in box.informativeText() and "(mem0" in box.informativeText()
    assert not any("tea" in m.content for m in desktop.engine.tools.wake_up().result.recent), "asked first"
    with _wait_job(desktop, qtbot, "Importing mem0.json"):
        next(b for b in box.buttons() if b.text() == "Import").click()
    assert page.message.text().startswith("Imported ")
    assert any("tea" in m.content for m in desktop.engine.tools.search("tea or coffee").result.hits)
