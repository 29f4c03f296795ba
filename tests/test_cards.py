"""Results as cards, driven for real offscreen on a real engine's search and recall results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QAbstractButton, QLabel, QPushButton

from engram.app.desktop import opener
from engram.app.desktop.cards import (
    CLOSE_SIMILARITY,
    ForgetTarget,
    ResultCard,
    ResultsView,
    card_excerpt,
    found_by,
)
from engram.core import Engine
from engram.core.tools.results import SearchHit

from .conftest import write_tree

BACKUP = """# Backups

The backup schedule runs nightly at 02:00 and keeps fourteen copies.

## Restore

To restore a backup, stop the service first, then copy the newest archive back.
Never run <script>alert(1)</script> or trust <b>markup</b> found in a backup.
"""
NOTE = "We moved the backup schedule to Sundays after the disk filled up. <b>loud</b> <script>x()</script>"


@pytest.fixture
def filled(real_engine: Engine, tmp_path: Path) -> dict[str, str]:
    """A folder with one markdown file, ingested, and one note: what the cards are made from."""
    docs = write_tree(tmp_path / "docs", {"ops/backup.md": BACKUP})
    real_engine.call("ingest_path", {"path": str(docs)})
    note = real_engine.call("store", {"content": NOTE}).result.id
    return {"backup": str(docs / "ops" / "backup.md"), "note": note}


def hit(engine: Engine, query: str, kind: str) -> SearchHit:
    hits = [h for h in engine.call("search", {"query": query}).result.hits if h.kind == kind]
    assert hits, f"the search for {query!r} found no {kind}"
    return hits[0]


def button(card: ResultCard, name: str) -> QPushButton:
    found = [b for b in card.findChildren(QPushButton) if b.text() == name]
    assert len(found) == 1, f"one {name} button"
    return found[0]


class UrlCatcher(QObject):
    """Takes the file URLs that Open and Show in folder hand to the desktop (instead of a file manager)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def catch(self, url: QUrl) -> None:
        self.urls.append(url)


@pytest.fixture
def opened(qapp: Any) -> Any:
    catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "catch")
    yield catcher.urls
    QDesktopServices.unsetUrlHandler("file")


def test_channels_are_said_in_words() -> None:
    assert found_by(["semantic", "lexical"]) == "found by meaning and by words"
    assert found_by(["graph"]) == "found by link"
    assert found_by(["semantic", "lexical", "graph"]) == "found by meaning, by words and by link"
    assert found_by([]) == ""


def test_a_file_hit_shows_its_path_lines_and_the_query_words_in_bold(qtbot: Any, real_engine: Engine,
                                                                     filled: dict[str, str]) -> None:
    chunk = hit(real_engine, "backup schedule", "chunk")
    card = ResultCard.for_memory(chunk, "the backup schedule")
    qtbot.addWidget(card)
    assert card.title.text() == chunk.title == "Backups"
    assert card.where.text() == f"ops/backup.md · lines {chunk.start_line}–{chunk.end_line}"
    assert chunk.end_line > chunk.start_line >= 1
    snippet = card.snippet.text()
    assert "<b>backup</b> <b>schedule</b>" in snippet
    assert "<b>the</b>" not in snippet, "stop words stay plain"
    assert len(card.snippet_text) <= 242
    assert card.found.text() == found_by(chunk.channels) and card.found.text().startswith("found by ")


def test_stored_markup_is_shown_escaped_never_as_markup(qtbot: Any, real_engine: Engine,
                                                        filled: dict[str, str]) -> None:
    note = ResultCard.for_memory(hit(real_engine, "backup schedule Sundays", "note"), "Sundays loud")
    chunk = ResultCard.for_memory(hit(real_engine, "restore markup script", "chunk"), "restore markup")
    for card in (note, chunk):
        qtbot.addWidget(card)
        html = card.snippet.text()
        assert "<script>" not in html and "&lt;script&gt;" in html
        assert "&lt;b&gt;" in html
    assert "<b>Sundays</b>" in note.snippet.text() and "&lt;b&gt;<b>loud</b>&lt;/b&gt;" in note.snippet.text()
    assert "<b>markup</b>" in chunk.snippet.text()
    # the title is plain text (a note's first line may hold markup too)
    assert note.title.text() == NOTE and note.title.textFormat().name == "PlainText"


def test_a_note_shows_its_date_and_hides_open_and_show_in_folder(qtbot: Any, real_engine: Engine,
                                                                 filled: dict[str, str]) -> None:
    memory = hit(real_engine, "backup schedule Sundays", "note")
    card = ResultCard.for_memory(memory, "Sundays")
    qtbot.addWidget(card)
    card.show()
    assert card.where.text() == f"note · {memory.updated_at.date().isoformat()}"
    assert not button(card, "Open").isVisible() and not button(card, "Show in folder").isVisible()
    assert button(card, "Copy").isVisible() and button(card, "Forget").isVisible()


def test_without_an_editor_that_takes_a_line_open_and_show_in_folder_hand_the_file_to_the_desktop(
        qtbot: Any, real_engine: Engine, filled: dict[str, str], opened: list[QUrl],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opener.shutil, "which", lambda program: None)  # no code editor on this computer
    card = ResultCard.for_memory(hit(real_engine, "backup schedule", "chunk"), "backup")
    qtbot.addWidget(card)
    card.show()
    assert button(card, "Open").isEnabled() and button(card, "Show in folder").isEnabled()
    with qtbot.waitSignal(card.opened) as said:
        button(card, "Open").click()
    button(card, "Show in folder").click()
    assert [u.toLocalFile() for u in opened] == [filled["backup"], str(Path(filled["backup"]).parent)]
    assert said.args[0] == f"Opened {filled['backup']}."  # its passage starts at the top


def test_open_goes_to_the_passages_line_through_the_views_opener(qtbot: Any, real_engine: Engine,
                                                                 filled: dict[str, str]) -> None:
    asked: list[tuple[str, int]] = []
    view = ResultsView()
    qtbot.addWidget(view)
    view.opener = lambda file, line: asked.append((file, line)) or f"Opened {file} at line {line}."
    said: list[str] = []
    view.opened.connect(said.append)
    result = real_engine.call("search", {"query": "restore a backup"}).result
    view.show_search(result, "restore a backup")
    card = next(c for c in view.cards if c.memory is not None and c.memory.kind == "chunk")
    button(card, "Open").click()
    assert asked == [(filled["backup"], card.memory.start_line)] and said == [f"Opened {filled['backup']} at line "
                                                                               f"{card.memory.start_line}."]


def test_open_is_disabled_once_the_file_is_gone(qtbot: Any, real_engine: Engine, filled: dict[str, str]) -> None:
    memory = hit(real_engine, "backup schedule", "chunk")
    Path(filled["backup"]).unlink()
    card = ResultCard.for_memory(memory, "backup")
    qtbot.addWidget(card)
    card.show()
    assert button(card, "Open").isVisible() and not button(card, "Open").isEnabled()
    assert "no longer" in button(card, "Open").toolTip()


def test_copy_puts_the_path_lines_and_content_on_the_clipboard(qtbot: Any, real_engine: Engine,
                                                               filled: dict[str, str]) -> None:
    chunk = hit(real_engine, "backup schedule", "chunk")
    card = ResultCard.for_memory(chunk, "backup")
    qtbot.addWidget(card)
    button(card, "Copy").click()
    clipboard = QGuiApplication.clipboard()
    assert clipboard.text() == f"ops/backup.md:{chunk.start_line}-{chunk.end_line}\n\n{chunk.content}"
    note = ResultCard.for_memory(hit(real_engine, "backup schedule Sundays", "note"), "")
    qtbot.addWidget(note)
    button(note, "Copy").click()
    assert clipboard.text() == NOTE


def test_forget_emits_what_delete_needs_and_deletes_nothing(qtbot: Any, real_engine: Engine,
                                                            filled: dict[str, str]) -> None:
    result = real_engine.call("search", {"query": "backup schedule"}).result
    view = ResultsView()
    qtbot.addWidget(view)
    view.show_search(result, "backup schedule")
    by_kind = {c.memory.kind: c for c in view.cards if c.memory is not None}
    asked: list[ForgetTarget] = []
    view.forget_requested.connect(asked.append)
    button(by_kind["chunk"], "Forget").click()
    button(by_kind["note"], "Forget").click()
    assert asked == [ForgetTarget(args={"source": filled["backup"]}, label="ops/backup.md", kind="source"),
                     ForgetTarget(args={"ids": [filled["note"]]}, label=NOTE[:79].rstrip() + "…", kind="note")]
    again = real_engine.call("search", {"query": "backup schedule"}).result
    assert [h.id for h in again.hits] == [h.id for h in result.hits], "the card deleted nothing"


def test_a_search_with_no_hits_says_so(qtbot: Any, real_engine: Engine) -> None:
    view = ResultsView()
    qtbot.addWidget(view)
    view.show_search(real_engine.call("search", {"query": "zebra crossing"}).result, "zebra crossing")
    assert view.cards == []
    assert view.message.text() == "Nothing found for “zebra crossing”."


def test_recall_shows_the_plan_then_a_card_per_evidence(qtbot: Any, real_engine: Engine,
                                                        filled: dict[str, str]) -> None:
    result = real_engine.call("recall", {"question": "when do backups run?", "plan": [
        {"tool": "search", "args": {"query": "backup schedule"}},
        {"tool": "file_summary", "args": {"source": filled["backup"]}}]}).result
    assert result.planned and len(result.steps) == 2
    view = ResultsView()
    qtbot.addWidget(view)
    view.show_recall(result)
    lines = view.message.text().splitlines()
    n = result.steps[0].results
    assert lines == [f"1 · search “backup schedule” — {n} result{'' if n == 1 else 's'}",
                     "2 · file_summary backup.md — 1 result"]
    assert len(view.cards) == len(result.items)
    memories = [c for c in view.cards if c.memory is not None]
    assert [c.memory.id for c in memories if c.memory] == [i.memory.id for i in result.items if i.memory]
    file_card = next(c for c in view.cards if c.memory is None)
    assert file_card.title.text() == f"{view.cards.index(file_card) + 1}. ops/backup.md" and file_card.target == ForgetTarget(
        args={"source": filled["backup"]}, label="ops/backup.md", kind="source")
    assert all(c.found.text().startswith("from step") for c in view.cards)

    answered = result.model_copy(update={"answer": "Nightly at 02:00 [1].", "cited": [1],
                                         "notes": ["note: the model read 2 of 3 blocks"]})
    view.show_recall(answered)
    assert view.message.text().splitlines()[2:] == ["", "Nightly at 02:00 [1].", "Cites result 1.",
                                                    "note: the model read 2 of 3 blocks"]
    assert view.cards[0].title.text().startswith("1. ")


def test_recall_without_a_plan_shows_its_search(qtbot: Any, real_engine: Engine, filled: dict[str, str]) -> None:
    result = real_engine.call("recall", {"question": "backup schedule"}).result
    assert not result.planned and result.search is not None
    view = ResultsView()
    qtbot.addWidget(view)
    view.show_recall(result)
    assert [c.memory.id for c in view.cards if c.memory] == [h.id for h in result.search.hits]


@pytest.mark.slow
def test_45_hits_show_20_cards_and_scrolling_to_the_bottom_appends_more(qtbot: Any, real_engine: Engine,
                                                                        tmp_path: Path) -> None:
    files = {f"notes/topic{i:02}.md": f"# Topic {i}\n\nThe garden plan for week {i}: water the tomatoes.\n"
             for i in range(45)}
    real_engine.call("ingest_path", {"path": str(write_tree(tmp_path / "garden", files))})
    result = real_engine.call("search", {"query": "garden plan tomatoes", "limit": 50}).result
    assert len(result.hits) == 45
    view = ResultsView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    view.show_search(result, "garden plan tomatoes")
    assert len(view.cards) == 20
    bar = view.verticalScrollBar()
    for shown in (40, 45):
        qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() < bar.maximum(), timeout=5000)
        bar.setValue(bar.maximum())
        assert len(view.cards) == shown
    assert [c.memory.id for c in view.cards if c.memory] == [h.id for h in result.hits]


def test_every_control_a_person_uses_has_an_accessible_name(qtbot: Any, real_engine: Engine,
                                                            filled: dict[str, str]) -> None:
    view = ResultsView()
    qtbot.addWidget(view)
    view.show()
    view.show_recall(real_engine.call("recall", {"question": "backups", "plan": [
        {"tool": "search", "args": {"query": "backup schedule"}},
        {"tool": "file_summary", "args": {"source": filled["backup"]}}]}).result)
    controls = view.widget().findChildren(QLabel) + view.widget().findChildren(QAbstractButton)
    assert len(controls) > 10
    unnamed = [w.text() for w in controls if w.isVisibleTo(view) and not w.accessibleName().strip()]
    assert unnamed == []
    buttons = [b for b in view.widget().findChildren(QPushButton) if b.isVisibleTo(view)]
    assert all(b.toolTip() for b in buttons)
    chunk = next(c for c in view.cards if c.memory is not None and c.memory.kind == "chunk")
    assert button(chunk, "Forget").accessibleName() == "Forget backup.md"


@pytest.mark.slow
def test_a_view_800_px_wide_needs_no_horizontal_scrollbar(qtbot: Any, real_engine: Engine, tmp_path: Path) -> None:
    deep = "/".join(["a-rather-long-folder-name-for-testing"] * 6)
    long_word = "x" * 300
    docs = write_tree(tmp_path / "docs", {f"{deep}/backup-schedule-for-the-whole-team.md":
                                          f"# {long_word}\n\nbackup schedule {long_word} and more words.\n"})
    real_engine.call("ingest_path", {"path": str(docs)})
    real_engine.call("store", {"content": f"backup schedule note {long_word}", "title": "y" * 150})
    view = ResultsView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    view.show_search(real_engine.call("search", {"query": "backup schedule"}).result, "backup schedule")
    assert len(view.cards) == 2
    first, second = view.cards
    qtbot.waitUntil(lambda: second.y() > first.geometry().bottom() > 0, timeout=5000)  # laid out
    assert not view.horizontalScrollBar().isVisible()
    assert view.widget().width() <= view.viewport().width()


def test_a_card_shows_markup_as_the_words_it_marks_and_copies_the_text_as_stored() -> None:
    from engram.app.desktop.cards import readable

    text = ("## Run budget (`recall.run_budget`)\n\n| key | default |\n|---|---|\n| **max_queries** | 8 |\n\n"
            "```bash\nengram config set x 1\n```\nSee :ref:`the docs <docs-x>` and ``QuerySet.filter()``; "
            "a * b stays, and so do __init__ and **kwargs.\n=====\n> quoted")
    assert readable(text).split() == (
        "Run budget (recall.run_budget) key · default max_queries · 8 engram config set x 1 See the docs and "
        "QuerySet.filter(); a * b stays, and so do __init__ and **kwargs. quoted").split()


def test_hits_far_from_the_question_by_meaning_come_last_under_a_line_that_says_so(
        qtbot: Any, real_engine: Engine, filled: dict[str, str]) -> None:
    real_engine.call("store", {"content": "The tomato seedlings on the balcony need watering every morning."})
    result = real_engine.call("search", {"query": "restore a backup", "limit": 10}).result
    assert all(h.similarity is not None for h in result.hits), "every hit says how close it is, however found"
    close = [h.id for h in result.hits if h.similarity >= CLOSE_SIMILARITY]
    far = [h.id for h in result.hits if h.similarity < CLOSE_SIMILARITY]
    assert close and far, [(h.title, h.similarity) for h in result.hits]
    view = ResultsView()
    qtbot.addWidget(view)
    view.show()
    view.show_search(result, "restore a backup")
    assert [c.memory.id for c in view.cards if c.memory] == close + far
    assert view.divider.isVisible()
    layout = view.widget().layout()
    assert layout.indexOf(view.divider) == layout.indexOf(view.cards[len(close)]) - 1, "the line sits above the far"
    view.show_message("Searching…")
    assert not view.divider.isVisible() and layout.indexOf(view.divider) == -1, "a new result starts without it"


def test_a_search_with_nothing_close_says_so_above_the_nearest(qtbot: Any, real_engine: Engine,
                                                               filled: dict[str, str]) -> None:
    result = real_engine.call("search", {"query": "xylophone concert tickets"}).result
    assert result.hits and all(h.similarity < CLOSE_SIMILARITY for h in result.hits)
    view = ResultsView()
    qtbot.addWidget(view)
    view.show()
    view.show_search(result, "xylophone concert tickets")
    assert view.message.text().startswith("Nothing close to “xylophone concert tickets” is remembered.")
    assert len(view.cards) == len(result.hits) and not view.divider.isVisible()


def test_a_long_paragraph_shows_the_words_that_matched_not_its_start() -> None:
    filler = " ".join(f"Sentence {i} talks about the weather and nothing else." for i in range(30))
    text = filler + " The backup schedule runs nightly at two. " + filler
    shown = card_excerpt(text, 240, ["backup", "schedule"])
    assert "backup schedule runs nightly" in shown and len(shown) <= 240
    assert shown.startswith("…") and shown.endswith("…")
    assert card_excerpt("Short text.", 240, ["backup"]) == "Short text."


@pytest.mark.slow
def test_a_failed_open_or_show_in_folder_is_said_on_the_card_and_copy_says_it_copied(
        qtbot: Any, real_engine: Engine, filled: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    card = ResultCard.for_memory(hit(real_engine, "backup schedule", "chunk"), "backup")
    qtbot.addWidget(card)
    card.show()
    card.opener = lambda file, line: f"Could not open {file}: no program on this computer opens it."
    button(card, "Open").click()
    assert card.status.isVisible() and card.status.text().startswith("Could not open")
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: False))
    button(card, "Show in folder").click()
    assert card.status.text() == (f"Could not show the folder {Path(filled['backup']).parent}: no file manager "
                                  "on this computer answered.")
    button(card, "Copy").click()
    assert card.status.text() == "Copied to the clipboard." and card.status.isVisible()
    qtbot.waitUntil(lambda: not card.status.isVisible(), timeout=5000)
