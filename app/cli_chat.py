"""``engram chat``: ask your memory a question; a local model researches with the read tools and answers.

One command, one turn. The reply streams to stdout as the model writes it, each tool call on a line of its
own; notes, a model download's progress and a summary of the turn go to stderr. Without ``--session`` a new
conversation starts and its id is printed at the end, so the next turn can continue it. ``--list``,
``--rename`` and ``--delete`` manage the conversations kept in the workspace.

The chat model runs in this process: chat opens its own engine, as the ``models`` commands do, even when
the tray app or ``engram service`` runs. Ctrl+C asks the turn to stop: it ends with what it has (the
conversation is saved) and the exit status is 130; a second Ctrl+C stops waiting.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, TextIO

from engram.core import Engine, Paths, Settings
from engram.core.chat.events import (
    ChatAnswer,
    ChatEvent,
    ChatNote,
    ChatText,
    ChatTurn,
    ModelDownload,
    ToolFinished,
    ToolStarted,
)
from engram.core.errors import InvalidArgument, NotFound

from .progress import DownloadPrinter
from .terminal import for_stream

COMMANDS = ("chat",)
#: Longest tool-call arguments and tool error shown on a tool line (the rest is cut with "…").
ARGUMENTS_CHARS = 100
ERROR_CHARS = 120
_UNICODE_MARKS = {"call": "→", "ok": "✓", "error": "✗", "again": "↺", "dot": "·"}
_ASCII_MARKS = {"call": "->", "ok": "ok", "error": "x", "again": "=", "dot": "-"}


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "chat", help="Ask your memory: a local model researches with the read tools, then answers citing them",
        description="One turn of a chat with your memory: the chat model (chat.local_model) searches and reads "
                    "your memories, then answers citing them by id. The model runs on this computer and is "
                    "loaded in this process, even when the tray app or `engram service` runs (the first chat "
                    "downloads it once). Without --session a new conversation starts; its id is printed at the "
                    "end. Ctrl+C ends the turn with what it found so far.",
        epilog="Settings: `engram config list` (the chat.* group). Conversations are kept in the workspace.")
    p.add_argument("question", nargs="?", help='The question ("-": read it from standard input).')
    p.add_argument("-s", "--session", metavar="ID",
                   help="Continue the conversation ID (a new ID starts a conversation under that name).")
    p.add_argument("-w", "--workspace", default="", help="Workspace (default: store.default_workspace).")
    p.add_argument("--json", action="store_true",
                   help="Stream nothing; print the turn (or the listing) as one JSON document.")
    manage = p.add_mutually_exclusive_group()
    manage.add_argument("--list", action="store_true", help="List the workspace's conversations, latest first.")
    manage.add_argument("--rename", nargs=2, metavar=("ID", "TITLE"), help="Give a conversation a new title.")
    manage.add_argument("--delete", metavar="ID", help="Delete a conversation (asks nothing).")


def run(args: argparse.Namespace, paths: Paths, settings: Settings) -> int:
    """Run ``engram chat``; returns the exit status. Raises ``EngramError`` (the caller prints it)."""
    managing = args.list or args.rename is not None or args.delete is not None
    if managing and (args.question is not None or args.session):
        raise InvalidArgument("--list, --rename and --delete take no question and no --session.")
    question = None if managing else _question(args.question)
    with Engine(paths, settings) as engine:
        if args.list:
            return _list(engine, args, sys.stdout)
        if args.rename is not None:
            return _rename(engine, args, sys.stdout)
        if args.delete is not None:
            return _delete(engine, args, sys.stdout)
        assert question is not None
        return _turn(engine, args, question, sys.stdout, sys.stderr)


def _question(given: str | None) -> str:
    if given is None:
        raise InvalidArgument('Ask a question: engram chat "your question" (or "-" to read it from standard '
                              "input), or manage conversations with --list, --rename or --delete.")
    text = sys.stdin.read() if given == "-" else given
    if not text.strip():
        raise InvalidArgument("Ask a question: the text is empty." + (" (Standard input was empty.)"
                                                                      if given == "-" else ""))
    return text


# -------------------------------------------------------------------- one turn


def _turn(engine: Engine, args: argparse.Namespace, question: str, out: TextIO, err: TextIO) -> int:
    store = engine.conversations(args.workspace)
    workspace = engine.open_workspace(args.workspace)
    if args.session and not store.exists(args.session):
        _write(err, for_stream(f"note: no conversation '{args.session}' in workspace {workspace} yet; starting "
                               "it.\n", err))
    printer = TurnPrinter(out, err, stream_text=not args.json)
    stopping = threading.Event()
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["turn"] = engine.chat(question, conversation=args.session or None, workspace=args.workspace,
                                          on_event=printer, stop=stopping.is_set)
        except BaseException as exc:  # handed to the main thread, which raises it
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="engram-chat", daemon=True).start()
    interrupted = wait_stoppable(done, stopping, err)
    printer.close()
    if "error" in outcome:
        raise outcome["error"]
    turn: ChatTurn = outcome["turn"]
    if args.json:
        doc = {**asdict(turn), "workspace": workspace}
        print(for_stream(json.dumps(doc, ensure_ascii=False), out, json=True), file=out)
    else:
        printer.summary(turn, continue_hint=not args.session)
    return 130 if interrupted else 0


def wait_stoppable(done: threading.Event, stopping: threading.Event, err: TextIO) -> bool:
    """Wait until ``done`` is set; the first Ctrl+C sets ``stopping`` (the turn ends with what it has), a
    second one raises ``KeyboardInterrupt`` without waiting. Returns whether Ctrl+C was pressed.

    It waits on an event the worker sets as it ends, not with ``Thread.join``: a join that Ctrl+C interrupts
    can leave the thread marked as ended while it still runs (CPython 3.11)."""
    while True:
        try:
            while not done.wait(0.2):
                pass
            return stopping.is_set()
        except KeyboardInterrupt:
            if stopping.is_set():
                raise
            stopping.set()
            _write(err, "\nengram: stopping: the turn ends with what it has (Ctrl+C again quits without "
                        "waiting).\n")


@dataclass(frozen=True)
class _Download:
    """A ``ModelDownload`` with the rate and time left ``DownloadPrinter`` shows."""

    name: str
    done: int
    total: int
    bytes_per_s: float
    eta_s: float | None


class TurnPrinter:
    """Shows a turn's events as they come: reply text and tool lines on ``out``, notes and downloads on ``err``.

    The final answer is printed once in full: when its text was streamed already only what is missing is
    written; a fallback answer (or one that was not streamed) is printed whole. With ``stream_text`` false
    (``--json``) only a model download's progress is shown.
    """

    def __init__(self, out: TextIO, err: TextIO, *, stream_text: bool = True) -> None:
        self.out = out
        self.err = err
        self.stream_text = stream_text
        self.marks = _UNICODE_MARKS if _encodes(out, "".join(_UNICODE_MARKS.values())) else _ASCII_MARKS
        self.dot = "·" if _encodes(err, "·") else "-"
        self.segment = ""  # text streamed since the last tool call, note or change of phase
        self.phase = ""
        self.at_line_start = True
        self._download: tuple[DownloadPrinter, float] | None = None

    def __call__(self, event: ChatEvent) -> None:
        if isinstance(event, ModelDownload):
            self._show_download(event)
            return
        self._end_download()
        if not self.stream_text:
            return
        if isinstance(event, ChatText):
            if event.phase != self.phase:
                self._new_line()
                self.phase, self.segment = event.phase, ""
            self._text(event.text)
            self.segment += event.text
        elif isinstance(event, ToolStarted):
            self._new_line()
            self.segment = ""
            shown = _cut(json.dumps(event.arguments, ensure_ascii=False), ARGUMENTS_CHARS)
            self._line(f"  {self.marks['call']} {event.name} {shown}")
        elif isinstance(event, ToolFinished):
            self._line(f"    {self._finished(event)}")
        elif isinstance(event, ChatNote):
            self._new_line()
            self.segment = ""
            _write(self.err, for_stream(f"note: {event.text}", self.err) + "\n")
        elif isinstance(event, ChatAnswer):
            self._answer(event)

    def _finished(self, event: ToolFinished) -> str:
        if event.repeated_of is not None:
            return f"{self.marks['again']} same as step {event.repeated_of}"
        if event.error:
            first = event.text.strip().splitlines()[0] if event.text.strip() else "Error"
            return f"{self.marks['error']} {_cut(first, ERROR_CHARS)}"
        found = {0: "no new memories", 1: "1 new memory"}.get(event.new_ids, f"{event.new_ids} new memories")
        return f"{self.marks['ok']} {found}"

    def _answer(self, event: ChatAnswer) -> None:
        shown = self.segment.lstrip()
        if not event.fallback and shown.strip() and event.text.startswith(shown.rstrip()):
            # Streamed already (the answer is that text, stripped): write only what was not shown.
            self._text(event.text[len(shown):] if event.text.startswith(shown) else event.text[len(shown.rstrip()):])
        else:
            self._new_line()
            self._text(event.text)
        self._new_line()
        self.segment = ""

    def summary(self, turn: ChatTurn, *, continue_hint: bool) -> None:
        """The closing lines on ``err``: what the turn did, unread citations, and how to continue."""
        self._new_line()
        dot = f" {self.dot} "
        calls = f"{len(turn.steps)} tool call{'' if len(turn.steps) == 1 else 's'}"
        rounds = f"{turn.rounds} round{'' if turn.rounds == 1 else 's'}"
        parts = [calls, rounds, f"{turn.tokens:,} tokens", f"{turn.seconds:.1f} s", f"ended: {turn.ended}"]
        lines = [f"({dot.join(parts)})"]
        if turn.unread_citations:
            lines.append(f"note: the answer cites {', '.join(turn.unread_citations)}, which no tool returned in "
                         "this turn.")
        if continue_hint:
            lines.append(f'Continue with: engram chat --session {turn.conversation} "…"')
        _write(self.err, for_stream("\n".join(lines) + "\n", self.err))

    def close(self) -> None:
        """End a half-written line and a download bar (after the turn, or when it failed)."""
        self._end_download()
        self._new_line()

    # ------------------------------------------------------------- writing

    def _text(self, text: str) -> None:
        if text:
            _write(self.out, for_stream(text, self.out))
            self.at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        _write(self.out, for_stream(text, self.out) + "\n")
        self.at_line_start = True

    def _new_line(self) -> None:
        if not self.at_line_start:
            _write(self.out, "\n")
            self.at_line_start = True

    def _show_download(self, event: ModelDownload) -> None:
        if self._download is None:
            self._new_line()
            self._download = (DownloadPrinter(self.err), time.monotonic())
        printer, started = self._download
        elapsed = time.monotonic() - started
        rate = event.done / elapsed if elapsed > 0 else 0.0
        eta = (event.total - event.done) / rate if rate > 0 and event.total else None
        printer(_Download(event.model, event.done, event.total, rate, eta))

    def _end_download(self) -> None:
        if self._download is not None:
            self._download[0].finish()
            self._download = None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _encodes(stream: TextIO, text: str) -> bool:
    """Whether ``stream`` can write ``text`` (its encoding has those characters)."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True  # an in-memory text stream takes any text
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _write(stream: TextIO, text: str) -> None:
    """Write and flush; characters the stream's encoding lacks are replaced instead of failing the turn."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "replace").decode(encoding))
    stream.flush()


# ------------------------------------------------------------ conversations


def _list(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    workspace = engine.open_workspace(args.workspace)
    conversations = engine.conversations(args.workspace).list()
    rows: list[dict[str, Any]] = [{"id": c.id, "title": c.title, "messages": len(c.messages),
                                    "last": c.messages[-1].at if c.messages else c.created} for c in conversations]
    if args.json:
        doc = {"workspace": workspace, "conversations": rows}
        print(for_stream(json.dumps(doc, ensure_ascii=False), out, json=True), file=out)
        return 0
    if not rows:
        print(f'No conversations in workspace {workspace} yet; start one with: engram chat "…"', file=out)
        return 0
    width = max(len(r["id"]) for r in rows)
    for r in rows:
        messages = f"{r['messages']} message{'' if r['messages'] == 1 else 's'}"
        line = f"{r['id']:{width}}  {_when(r['last'])}  {messages:>12}  {r['title']}"
        print(for_stream(line, out), file=out)
    return 0


def _when(iso: str) -> str:
    """An ISO time as local time to the minute (as stored when it does not parse)."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _rename(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    conversation_id, title = args.rename
    renamed = engine.conversations(args.workspace).rename(conversation_id, title)
    if args.json:
        print(for_stream(json.dumps({"renamed": renamed.id, "title": renamed.title}, ensure_ascii=False), out,
                         json=True), file=out)
    else:
        print(for_stream(f"Renamed {renamed.id}: {renamed.title}", out), file=out)
    return 0


def _delete(engine: Engine, args: argparse.Namespace, out: TextIO) -> int:
    workspace = engine.open_workspace(args.workspace)
    if not engine.conversations(args.workspace).delete(args.delete):
        raise NotFound(f"No conversation '{args.delete}' in workspace {workspace}; `engram chat --list` lists "
                       "them.", title="No such conversation")
    if args.json:
        print(json.dumps({"deleted": args.delete}), file=out)
    else:
        print(for_stream(f"Deleted conversation {args.delete} from workspace {workspace}.", out), file=out)
    return 0
