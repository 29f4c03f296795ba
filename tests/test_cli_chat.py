"""``engram chat`` in-process: the real CLI, engine and workspace, with a scripted model at the engine's chat-model
seam (``Engine.chat_model``) and the fake embedder at its embedding seam (``Engine._load_embedder``)."""

from __future__ import annotations

import _thread
import io
import json
import os
import re
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from engram.app import cli, cli_chat
from engram.core import Engine, Paths, Settings
from engram.core.chat.events import ChatAnswer, ChatNote, ChatText, ModelDownload, ToolFinished, ToolStarted

from .chat_support import ScriptedModel, call, citing, first_id
from .conftest import HashingEmbedder

SUMMARY = re.compile(r"^\((\d+) tool calls? · (\d+) rounds? · [\d,]+ tokens · [\d.]+ s · ended: (\w+)\)$", re.M)
HINT = re.compile(r'^Continue with: engram chat --session ([a-z0-9-]+) "…"$', re.M)


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def env(paths: Paths, fake_embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The environment of an in-process ``engram`` on a stocked workspace; every Engine the CLI opens embeds with
    the fake embedder. The umask the CLI sets is put back afterwards."""
    with Engine(paths, Settings(), embedder=fake_embedder) as engine:
        engine.call("store", {"content": "We deploy on Tuesdays after the review.", "title": "Deploy day",
                              "project": "ops"})
        engine.call("store", {"content": "Rollbacks need the on-call lead's approval.", "title": "Rollback approval",
                              "project": "ops"})
    monkeypatch.setattr(Engine, "_load_embedder", lambda self: fake_embedder)
    umask = os.umask(0o022)
    os.umask(umask)
    yield {"ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir),
           "ENGRAM_LOG_DIR": str(paths.log_dir)}
    os.umask(umask)


def scripted(monkeypatch: pytest.MonkeyPatch, *script: Any) -> ScriptedModel:
    """The chat model every Engine gives from now on: one scripted model, replying from ``script``."""
    model = ScriptedModel(list(script))
    monkeypatch.setattr(Engine, "chat_model", lambda self, on_event=None, **_: model)
    return model


def conversation(paths: Paths, fake_embedder: HashingEmbedder, conversation_id: str) -> Any:
    with Engine(paths, Settings(), embedder=fake_embedder) as engine:
        return engine.conversations().load(conversation_id)


def test_a_turn_streams_its_text_and_tool_lines_and_prints_the_answer_once(
        env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scripted(monkeypatch, "Let me look." + call("search", query="deploy"),
             lambda messages, tools: f"We deploy on Tuesdays, after the review [{first_id(messages)}].")
    assert cli.run(["chat", "When do we deploy?"], env) == 0
    out, err = capsys.readouterr()
    assert "Let me look.\n" in out and "<tool_call>" not in out
    assert '  → search {"query": "deploy"}\n    ✓ ' in out
    assert out.count("We deploy on Tuesdays, after the review [") == 1, out
    assert out.endswith("].\n")
    summary = SUMMARY.search(err)
    assert summary and summary.group(3) == "answered" and int(summary.group(2)) == 2, err
    assert HINT.search(err), err


def test_an_answer_that_cites_nothing_is_followed_by_the_note_and_the_answer_that_cites(
        env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scripted(monkeypatch, "We deploy on Tuesdays.",
             lambda messages, tools: f"We deploy on Tuesdays [{first_id(messages)}].")
    assert cli.run(["chat", "When do we deploy?"], env) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[-2] == "We deploy on Tuesdays." and re.fullmatch(r"We deploy on Tuesdays \[[0-9a-f]{12}\]\.",
                                                                   lines[-1]), out
    assert "note: That answer cites none of the memories read" in err
    summary = SUMMARY.search(err)
    assert summary and summary.group(3) == "uncited", err


def test_the_answer_is_printed_once_whether_streamed_or_not() -> None:
    out, err = Terminal(), io.StringIO()
    printer = cli_chat.TurnPrinter(out, err)
    for piece in ("  The answer", " is ", "Tuesday [0123456789ab].  "):
        printer(ChatText(piece, "research"))
    written = out.getvalue()
    printer(ChatAnswer("The answer is Tuesday [0123456789ab].", ("0123456789ab",), False))
    assert out.getvalue() == written + "\n", "streamed already: only the line's end"

    out = Terminal()
    printer = cli_chat.TurnPrinter(out, err)
    printer(ChatText("The ans", "answer"))  # cut short, then the fallback
    printer(ChatNote("The model could not answer: it crashed"))
    printer(ChatAnswer("I could not write an answer in time. This is what I found:\n\n[0123456789ab] x", (), True))
    assert out.getvalue() == "The ans\nI could not write an answer in time. This is what I found:\n\n[0123456789ab] x\n"
    assert err.getvalue() == "note: The model could not answer: it crashed\n"

    out = Terminal()
    printer = cli_chat.TurnPrinter(out, err)
    printer(ChatAnswer("Not streamed.", (), False))
    assert out.getvalue() == "Not streamed.\n"


def test_tool_lines_and_their_ascii_marks() -> None:
    events = [ToolStarted(1, "search", {"query": "deploy"}), ToolFinished(1, "search", "…", False, 3),
              ToolStarted(2, "search", {"query": "deploy"}), ToolFinished(2, "search", "…", False, 0, repeated_of=1),
              ToolStarted(3, "get_memory", {"ids": "x"}), ToolFinished(3, "get_memory", "Error: no such id\nmore",
                                                                        True, 0)]
    out = Terminal()
    printer = cli_chat.TurnPrinter(out, io.StringIO())
    for event in events:
        printer(event)
    assert out.getvalue() == ('  → search {"query": "deploy"}\n    ✓ 3 new memories\n'
                              '  → search {"query": "deploy"}\n    ↺ same as step 1\n'
                              '  → get_memory {"ids": "x"}\n    ✗ Error: no such id\n')
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii")
    printer = cli_chat.TurnPrinter(ascii_out, io.StringIO())
    for event in events:
        printer(event)
    printer(ChatAnswer("Tuesdays — after the review.", (), False))
    assert raw.getvalue().decode("ascii") == (
        '  -> search {"query": "deploy"}\n    ok 3 new memories\n  -> search {"query": "deploy"}\n    = same as step 1\n'
        '  -> get_memory {"ids": "x"}\n    x Error: no such id\nTuesdays ? after the review.\n')


def test_a_download_shows_progress_on_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = cli_chat.TurnPrinter(out, err, stream_text=False)
    printer(ModelDownload("qwen3.5-4b", 0, 2**30))
    printer(ModelDownload("qwen3.5-4b", 2**30, 2**30))
    printer(ChatText("hidden", "answer"))
    assert out.getvalue() == "" and err.getvalue().startswith("qwen3.5-4b: 0.0 / 1,024.0 MB")
    assert "qwen3.5-4b: 1,024.0 / 1,024.0 MB" in err.getvalue()


def test_session_continues_the_same_conversation(env: dict[str, str], paths: Paths, fake_embedder: HashingEmbedder,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    scripted(monkeypatch, citing("Tuesdays."), citing("On the same day."))
    assert cli.run(["chat", "When do we deploy?"], env) == 0
    hint = HINT.search(capsys.readouterr().err)
    assert hint
    assert cli.run(["chat", "--session", hint.group(1), "And rollbacks?"], env) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].startswith("On the same day. [") and out.count("same day") == 1 and not HINT.search(err)
    kept = conversation(paths, fake_embedder, hint.group(1))
    assert [m.content for m in kept.messages if m.role == "user"] == ["When do we deploy?", "And rollbacks?"]


def test_json_prints_one_document_and_streams_nothing(env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    scripted(monkeypatch, call("search", query="rollback"),
             lambda messages, tools: f"The on-call lead approves [{first_id(messages)}].")
    monkeypatch.setattr("sys.stdin", io.StringIO("Who approves rollbacks?\n"))
    assert cli.run(["chat", "-", "--json", "--session", "ops"], env) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["workspace"] == Settings().store.default_workspace and doc["conversation"] == "ops"
    assert doc["answer"].startswith("The on-call lead approves [") and doc["cited"] and not doc["fallback"]
    assert any(s["name"] == "search" and s["arguments"] == {"query": "rollback"} for s in doc["steps"])
    assert {"rounds", "tokens", "seconds", "ended", "evidence", "unread_citations", "notes"} <= doc.keys()
    assert "no conversation 'ops'" in err and not SUMMARY.search(err)


def test_list_rename_and_delete(env: dict[str, str], paths: Paths, fake_embedder: HashingEmbedder,
                                monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scripted(monkeypatch, citing("one"), citing("two"))
    assert cli.run(["chat", "--session", "first", "first question"], env) == 0
    assert cli.run(["chat", "--session", "second", "second question"], env) == 0
    capsys.readouterr()
    assert cli.run(["chat", "--list"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["second", "first"], "latest first"
    kept = len(conversation(paths, fake_embedder, "second").messages)
    assert f" {kept} messages " in lines[0] and lines[0].endswith("second question")

    assert cli.run(["chat", "--rename", "first", "Deploy days"], env) == 0
    assert capsys.readouterr().out == "Renamed first: Deploy days\n"
    assert cli.run(["chat", "--list", "--json"], env) == 0
    listed = json.loads(capsys.readouterr().out)["conversations"]
    assert sorted((c["id"], c["title"], c["messages"]) for c in listed) == [("first", "Deploy days", kept),
                                                                             ("second", "second question", kept)]

    assert cli.run(["chat", "--delete", "second"], env) == 0
    assert "Deleted conversation second" in capsys.readouterr().out
    assert cli.run(["chat", "--delete", "second"], env) == 1
    assert "engram: No such conversation: No conversation 'second'" in capsys.readouterr().err
    assert cli.run(["chat", "--rename", "gone", "x"], env) == 1
    assert "No conversation 'gone'" in capsys.readouterr().err
    assert cli.run(["chat", "--list"], env) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["first"]


def test_bad_input_exits_2_with_a_clear_message(env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    model = scripted(monkeypatch)
    assert cli.run(["chat", "   "], env) == 2
    assert "engram: Invalid argument: Ask a question: the text is empty." in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli.run(["chat", "-"], env) == 2
    assert "Standard input was empty" in capsys.readouterr().err
    assert cli.run(["chat"], env) == 2
    assert 'engram chat "your question"' in capsys.readouterr().err
    assert cli.run(["chat", "--session", "Bad Name", "hi"], env) == 2
    assert "is not a conversation name" in capsys.readouterr().err
    assert cli.run(["chat", "--list", "a question"], env) == 2
    assert not model.calls


def test_stored_escape_sequences_are_shown_escaped_on_a_terminal(env: dict[str, str], paths: Paths,
                                                                 fake_embedder: HashingEmbedder,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with Engine(paths, Settings(), embedder=fake_embedder) as engine:
        engine.call("store", {"content": "Retitle \x1b]0;owned\x07 the window and clear \x1b[2J it.",
                              "title": "Escapes", "project": "ops"})

    def quote(messages: list[dict[str, Any]], tools: Any) -> str:
        tool = next(m["content"] for m in reversed(messages) if m["role"] == "tool")
        return "It says: " + tool[tool.index("Retitle"):tool.index("it.") + 3] + f" [{first_id(messages)}]"

    scripted(monkeypatch, call("search", query="retitle window clear"), quote)
    out, err = Terminal(), Terminal()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    assert cli.run(["chat", "What does the window note say?"], env) == 0
    shown = out.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\x1b" not in err.getvalue()
    assert "It says: Retitle \\x1b]0;owned\\x07 the window and clear \\x1b[2J it." in shown
    assert shown.count("It says:") == 1


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT as a fresh ``engram chat`` process has it (Python's ``KeyboardInterrupt``): the pytest worker's own
    handler may be another (one CI run's Ctrl+C test never saw its interrupt)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.slow
@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_ends_the_turn_with_what_it_has_and_exits_130(env: dict[str, str], paths: Paths,
                                                             fake_embedder: HashingEmbedder,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    stopping: list[Any] = []
    real_wait = cli_chat.wait_stoppable

    def wait(done: Any, event: Any, err: Any) -> bool:
        stopping.append(event)
        return real_wait(done, event, err)

    def press_ctrl_c(messages: list[dict[str, Any]], tools: Any) -> str:
        _thread.interrupt_main()  # as SIGINT: KeyboardInterrupt in the main thread, which waits for the turn
        assert stopping[0].wait(10), f"the main thread never set the stop (SIGINT: {signal.getsignal(signal.SIGINT)!r})"
        return "I will search more." + call("search", query="rollback")

    monkeypatch.setattr(cli_chat, "wait_stoppable", wait)
    scripted(monkeypatch, call("search", query="deploy"), press_ctrl_c)
    assert cli.run(["chat", "--session", "stopped", "When do we deploy?"], env) == 130
    out, err = capsys.readouterr()
    assert "engram: stopping" in err and "ended: stopped" in err
    assert "This is what I found" in out and "Tuesdays" in out, "the reply is the evidence found so far"
    kept = conversation(paths, fake_embedder, "stopped")
    assert kept.messages[0].content == "When do we deploy?" and kept.messages[-1].role == "assistant"


def test_the_help_says_the_model_runs_in_this_process(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.run(["chat", "--help"], {})
    assert "loaded in this process" in " ".join(capsys.readouterr().out.split())

