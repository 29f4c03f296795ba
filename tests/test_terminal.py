"""Stored text shown on a terminal is shown, never obeyed; piped output stays byte-exact."""

from __future__ import annotations

import io
import json
import os
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.app.terminal import escape_controls, escape_json_controls, for_stream

OSC_TITLE = "\x1b]0;pwned\x07"
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals (pty) are POSIX")
NOTE = f"The staging database is db-2 {OSC_TITLE}and the backups run nightly."


@pytest.mark.parametrize(("text", "shown"), [
    ("plain text, ünïcødé, 日本語 and emoji 🙂", "plain text, ünïcødé, 日本語 and emoji 🙂"),
    ("lines\nand\ttabs stay", "lines\nand\ttabs stay"),
    (OSC_TITLE, "\\x1b]0;pwned\\x07"),
    ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"),
    ("over\rwrite", "over\\x0dwrite"),
    ("back\bspace", "back\\x08space"),
    ("\x00nul \x01 \x1f unit", "\\x00nul \\x01 \\x1f unit"),
    ("del\x7f", "del\\x7f"),
    ("c1 \x80 csi \x9b2J \x9d osc \x9f", "c1 \\x80 csi \\x9b2J \\x9d osc \\x9f"),
    ("\xa0 no-break space stays", "\xa0 no-break space stays"),
    ("abc\u202edcba", "abc\\u202edcba"),
    ("\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"),
    ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
    ("\u2065 and \u206a are not bidi isolates", "\u2065 and \u206a are not bidi isolates"),
    ("a literal \\x1b stays as typed", "a literal \\x1b stays as typed"),
    ("", ""),
])
def test_control_characters_are_shown_as_escapes(text: str, shown: str) -> None:
    assert escape_controls(text) == shown


def test_json_keeps_its_meaning_with_controls_escaped_the_json_way() -> None:
    doc = {"text": "csi \x9b2J, del \x7f, rlo \u202e, isolate \u2066, esc \x1b, é"}
    raw = json.dumps(doc, ensure_ascii=False)
    escaped = escape_json_controls(raw)
    assert escaped == '{"text": "csi \\u009b2J, del \\u007f, rlo \\u202e, isolate \\u2066, esc \\u001b, é"}'
    assert json.loads(escaped) == doc


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_text_is_escaped_only_for_a_terminal() -> None:
    assert for_stream(OSC_TITLE, Terminal()) == "\\x1b]0;pwned\\x07"
    assert for_stream(OSC_TITLE, io.StringIO()) == OSC_TITLE
    closed = io.StringIO()
    closed.close()
    assert for_stream(OSC_TITLE, closed) == OSC_TITLE


# ------------------------------------------------------------------ the real command on a real pseudo-terminal


@pytest.fixture
def env(tmp_path: Path, model_file: Path) -> dict[str, str]:
    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    shutil.copy(model_file, models / model_file.name)  # skip the one-off conversion
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
            "ENGRAM_LOG_DIR": str(tmp_path / "logs"), "ENGRAM_EMBED_THREADS": "2"}


def engram(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "engram.app", *args], env=env, capture_output=True, timeout=300)


def on_terminal(env: dict[str, str], *args: str, stream: str) -> tuple[int, bytes, bytes]:
    """Run ``engram ARGS`` with ``stream`` ("stdout" or "stderr") on a pseudo-terminal and the other on a pipe.

    Returns (exit status, what the terminal received, what the pipe received).
    """
    import pty  # POSIX only

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "engram.app", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=slave if stream == "stdout" else subprocess.PIPE,
                            stderr=slave if stream == "stderr" else subprocess.PIPE)
    os.close(slave)
    pipe = proc.stderr if stream == "stdout" else proc.stdout
    assert pipe is not None
    piped = pipe.fileno()
    received = {master: bytearray(), piped: bytearray()}
    deadline = time.monotonic() + 300
    with selectors.DefaultSelector() as selector:
        for fd in received:
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map() and time.monotonic() < deadline:
                for key, _ in selector.select(timeout=deadline - time.monotonic()):
                    try:
                        block = os.read(key.fd, 65536)
                    except OSError:  # Linux: EIO on the master once every writer of the slave end closed it
                        block = b""
                    if block:
                        received[key.fd] += block
                    else:
                        selector.unregister(key.fd)
        finally:
            os.close(master)
            pipe.close()
    return proc.wait(timeout=60), bytes(received[master]), bytes(received[piped])


@POSIX_ONLY
@pytest.mark.slow
def test_stored_escape_sequences_reach_a_terminal_escaped_and_a_pipe_exactly(env: dict[str, str]) -> None:
    stored = engram(env, "remember", NOTE)
    assert stored.returncode == 0, stored.stderr
    status, shown, _ = on_terminal(env, "search", "staging database backups", stream="stdout")
    assert status == 0
    assert b"\x1b" not in shown and b"\x07" not in shown
    assert b"db-2 \\x1b]0;pwned\\x07and the backups" in shown
    piped = engram(env, "search", "staging database backups")
    as_json = json.loads(engram(env, "search", "staging database backups", "--json").stdout)
    assert piped.returncode == 0 and OSC_TITLE in as_json["text"]
    assert piped.stdout == (as_json["text"] + "\n").encode()
    assert shown == escape_controls(as_json["text"] + "\n").encode().replace(b"\n", b"\r\n")


@POSIX_ONLY
@pytest.mark.slow
def test_json_on_a_terminal_stays_valid_json_without_raw_controls(env: dict[str, str]) -> None:
    assert engram(env, "remember", "csi \x9b2J and rlo \u202e in a note").returncode == 0
    status, shown, _ = on_terminal(env, "search", "note", "--json", stream="stdout")
    assert status == 0
    assert "\x9b".encode() not in shown and "\u202e".encode() not in shown
    assert json.loads(shown)["result"]["hits"][0]["content"] == "csi \x9b2J and rlo \u202e in a note"


@POSIX_ONLY
@pytest.mark.slow
def test_an_error_quoting_user_input_reaches_a_terminal_escaped(env: dict[str, str]) -> None:
    source = f"/never/{OSC_TITLE}.md"
    status, shown, stdout = on_terminal(env, "chunks", source, stream="stderr")
    assert (status, stdout) == (1, b"")
    assert b"\x1b" not in shown and b"\x07" not in shown
    assert b"/never/\\x1b]0;pwned\\x07.md" in shown
    piped = engram(env, "chunks", source)
    assert piped.returncode == 1 and f"/never/{OSC_TITLE}.md".encode() in piped.stderr
