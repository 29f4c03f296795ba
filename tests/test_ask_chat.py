"""The Ask page's chat on a real desktop and engine, with a scripted model at the seam: streamed text, tool
lines, citations as links, Stop, and the workspace's conversations reopened, renamed and deleted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from engram.app.desktop.ask_page import ChatPanel
from engram.app.desktop.chat_view import ToolLine, linked_answer
from engram.app.desktop.desktop import Desktop
from engram.core import Paths
from engram.core.chat.events import ChatTurn
from engram.core.settings_file import set_value

from .chat_support import ScriptedModel, call, first_id
from .desktop_support import desktops


@pytest.fixture
def desktop(qapp: Any, paths: Paths, environ: dict[str, str], fake_embedder: Any,
            tmp_path: Path) -> Iterator[Desktop]:
    own = tmp_path / "own-chat-model.gguf"  # a model file of one's own is on this computer: chat can run
    own.write_bytes(b"GGUF")
    set_value(paths.settings_file, "chat.local_model", str(own))
    with desktops(paths, environ, fake_embedder, tray=False) as build:
        made = build()
        made.engine.call("store", {"content": "We deploy on Tuesdays after the review.", "title": "Deploy day"})
        made.engine.call("store", {"content": "Rollbacks need the on-call lead's approval.", "title": "Rollbacks"})
        yield made


def _script(desktop: Desktop, monkeypatch: pytest.MonkeyPatch, steps: list[Any]) -> ScriptedModel:
    model = ScriptedModel(steps)
    monkeypatch.setattr(desktop.engine, "chat_model", lambda on_event=None, **_: model)
    return model


def _finish(chat: ChatPanel, qtbot: Any, action: Any) -> ChatTurn:
    with qtbot.waitSignal(chat.controller.finished, timeout=30_000) as done:
        action()
    assert isinstance(done.args[0], ChatTurn), done.args[0]
    return done.args[0]


def _links(chat: ChatPanel) -> list[QLabel]:
    return [w for w in chat.view.entries if isinstance(w, QLabel) and 'href="memory:' in w.text()]


def test_an_answer_streams_in_with_its_tool_lines_and_citations_that_open_the_memory(
        desktop: Desktop, qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    cited: list[str] = []

    def answer(messages: list[dict[str, Any]], _tools: Any) -> str:
        gate.wait(30)
        cited.append(first_id(messages))
        return f"We deploy on Tuesdays <i>after</i> the review [{cited[0]}]."

    _script(desktop, monkeypatch, ["Let me look." + call("search", query="deploy day"), answer])
    desktop.show_window()
    desktop.window.show_page("ask")
    page = desktop.window.ask
    chat = page.chat
    assert page.mode.currentWidget() is chat, "chat comes first when it can run"
    chat.question.setText("When do we deploy?")
    with qtbot.waitSignal(chat.controller.finished, timeout=30_000) as done:
        chat.ask_button.click()
        assert chat.stop_button.isEnabled() and not chat.ask_button.isEnabled()
        qtbot.waitUntil(lambda: "Let me look." in chat.view.text() and len(chat.view.tools) == 2, timeout=30_000)
        assert chat.controller.busy, "the text is shown while the turn still runs"
        gate.set()
    turn = done.args[0]
    assert isinstance(turn, ChatTurn) and turn.ended == "answered" and turn.cited == cited
    shown = chat.view.text()
    assert shown.startswith("When do we deploy?") and 'search {"query": "deploy day"}' in shown
    line = chat.view.tools[2]
    assert isinstance(line, ToolLine) and "new memor" in line.toggle.text() and not line.result.isVisible()
    line.toggle.click()
    assert line.result.isVisible() and cited[0] in line.result.toPlainText()
    [label] = _links(chat)
    assert f'<a href="memory:{cited[0]}">' in label.text() and "&lt;i&gt;after&lt;/i&gt;" in label.text(), \
        "the answer is escaped, only its citation is a link"
    label.linkActivated.emit(f"memory:{cited[0]}")
    qtbot.waitUntil(lambda: "Tuesdays after the review" in chat.memory.toPlainText(), timeout=30_000)
    assert chat.memory.isVisible() and chat.stop_button.isEnabled() is False and chat.conversation_id == turn.conversation


def test_stop_ends_the_turn_with_what_research_found(desktop: Desktop, qtbot: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    started, gate = threading.Event(), threading.Event()

    def slow(_messages: list[dict[str, Any]], _tools: Any) -> str:
        started.set()
        gate.wait(30)
        return "Still looking, still looking." + call("search", query="rollback")

    model = _script(desktop, monkeypatch, [slow])
    chat = desktop.window.ask.chat
    chat.question.setText("Who approves a rollback?")
    with qtbot.waitSignal(chat.controller.finished, timeout=30_000) as done:
        chat.ask()
        qtbot.waitUntil(started.is_set, timeout=30_000)
        chat.stop_button.click()
        gate.set()
    turn = done.args[0]
    assert turn.ended == "stopped" and turn.fallback and len(model.calls) == 1
    assert "Stopped" in chat.view.text() and turn.evidence[0] in chat.view.text(), "the fallback cites what it found"
    assert chat.ask_button.isEnabled() and not chat.stop_button.isEnabled()
    assert desktop.engine.conversations().load(turn.conversation).messages[0].content == "Who approves a rollback?"


def test_a_conversation_is_reopened_continued_renamed_and_deleted(desktop: Desktop, qtbot: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _script(desktop, monkeypatch, [lambda messages, _tools: f"Tuesdays [{first_id(messages)}].",
                                   lambda messages, _tools: f"The on-call lead [{first_id(messages)}]."])
    desktop.show_window()
    desktop.window.show_page("ask")
    chat = desktop.window.ask.chat
    chat.question.setText("When do we deploy?")
    first = _finish(chat, qtbot, chat.ask)
    qtbot.waitUntil(lambda: chat.conversations.findData(first.conversation) > 0, timeout=30_000)
    assert chat.conversations.currentData() == first.conversation and chat.rename_button.isEnabled()
    chat.new_button.click()
    assert chat.conversation_id is None and chat.view.entries == []
    # Reopened from the list: its question, tool line and answer come back, with the citation a link.
    with qtbot.waitSignal(chat.controller.loaded, timeout=30_000):
        chat.conversations.setCurrentIndex(chat.conversations.findData(first.conversation))
    shown = chat.view.text()
    assert shown.startswith("When do we deploy?") and "search {" in shown and "Tuesdays" in shown
    assert _links(chat), "a stored answer's citation is a link too"
    # The next question continues it.
    chat.question.setText("Who approves a rollback?")
    second = _finish(chat, qtbot, chat.ask)
    assert second.conversation == first.conversation
    assert desktop.engine.conversations().load(first.conversation).turns == 2
    # Renamed.
    chat.rename_button.click()
    assert chat.rename_dialog is not None and chat.rename_dialog.isVisible()
    chat.rename_dialog.setTextValue("Deploys")
    chat.rename_dialog.accept()
    qtbot.waitUntil(lambda: chat.conversations.currentText() == "Deploys", timeout=30_000)
    assert desktop.engine.conversations().load(first.conversation).title == "Deploys"
    # Deleted, after a question; Cancel first keeps it.
    chat.delete_button.click()
    assert chat.confirm is not None and chat.confirm.isVisible() and "Deploys" in chat.confirm.text()
    chat.confirm.button(chat.confirm.StandardButton.Cancel).click()
    assert desktop.engine.conversations().exists(first.conversation)
    chat.delete_button.click()
    delete = next(b for b in chat.confirm.buttons() if b.text() == "Delete")
    delete.click()
    qtbot.waitUntil(lambda: chat.conversations.count() == 1, timeout=30_000)
    assert not desktop.engine.conversations().exists(first.conversation)
    assert chat.conversation_id is None and chat.view.entries == []


def test_an_answer_is_escaped_before_its_citations_become_links() -> None:
    text = linked_answer('<script>x</script> "a" [0123456789ab] [ffffffffffff]', {"0123456789ab"})
    assert text.startswith("&lt;script&gt;x&lt;/script&gt;")
    assert '[<a href="memory:0123456789ab">0123456789ab</a>]' in text
    assert "[ffffffffffff]" in text, "an id research never read is not a link"


def test_reading_a_long_question_shows_one_progress_line_updated_in_place(qapp: Any) -> None:
    from engram.app.desktop.chat_view import ChatView
    from engram.core.chat.events import ChatNote, ChatProgress

    view = ChatView()
    view.add_question("A very long paste…")
    for n in (1, 2, 3):
        view.add_event(ChatProgress(f"Reading the long text: section {n} of 3 (reader 1)…"))
    lines = [w.text() for w in view.entries if isinstance(w, QLabel)]
    assert lines == ["A very long paste…", "Reading the long text: section 3 of 3 (reader 1)…"]
    view.add_event(ChatNote("The question (70,000 characters) was read in 3 sections in 4 s."))
    view.add_event(ChatProgress("Reading the long text: section 1 of 2 (reader 1)…"))
    assert len([w for w in view.entries if isinstance(w, QLabel)]) == 4, "a later long step gets a line of its own"


def test_an_answer_asked_again_for_its_citations_gets_a_reply_of_its_own(qapp: Any) -> None:
    from engram.app.desktop.chat_view import ChatView
    from engram.core.chat.events import ChatAnswer, ChatNote, ChatText

    view = ChatView()
    view.add_question("When do we deploy?")
    view.add_event(ChatText("On Tuesdays.", "research"))
    view.add_event(ChatNote("That answer cites none of the memories read; the model is asked once more, with them "
                            "listed by id."))
    view.add_event(ChatText("On Tuesdays [0123456789ab].", "answer"))
    view.add_event(ChatAnswer("On Tuesdays [0123456789ab].", ("0123456789ab",), False))
    lines = [w.text() for w in view.entries if isinstance(w, QLabel)]
    assert lines[1] == "On Tuesdays." and lines[2].startswith("That answer cites none")
    assert "On Tuesdays" in lines[3] and "memory:0123456789ab" in lines[3] and len(lines) == 4, \
        "the draft stays as written; the answer is a reply of its own, not appended to it"
