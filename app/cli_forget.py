"""``engram forget``: many memories at once, chosen by filters; the list of what would go is shown, then asked about.

It calls the ``forget`` tool twice: once without ``confirm`` (the preview, printed), then, after a yes (or with
``--yes``), once with it. Without a terminal to ask on and without ``--yes`` nothing is forgotten.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from engram.core import Paths, Settings
from engram.core.catalog import validate_call
from engram.core.tools.results import Forgotten

from .cli_calls import Calls, open_calls, typed
from .terminal import for_stream

COMMANDS = ("forget",)
_FILTERS = ("query", "project", "source", "kind", "since", "until")


def add_parser(sub: Any) -> None:
    forget = sub.add_parser(
        "forget", help="Forget many memories at once, after showing which",
        description="Forgets every memory that matches all the filters given (at least one): the first LIMIT that "
                    "search finds for --query, a --project, a --source (a name as `engram sources` prints it, a "
                    "full path, or a glob such as 'docs/old/*'), a --kind, a creation time --since/--until "
                    "(2026-05-01 or 2026-05-01T12:00). A file's chunk takes the whole file, which later ingests of "
                    "its folder leave out. It lists what would go and asks first.")
    forget.add_argument("query", nargs="?", help="Words: what search finds for them (the best --limit).")
    forget.add_argument("--limit", type=int, default=50, help="With a query: how many of its matches (1–500; 50).")
    forget.add_argument("--project", help="Only this project.")
    forget.add_argument("--source", help="Only this source, or the sources a glob matches.")
    forget.add_argument("--kind", choices=("note", "exchange", "chunk", "content"), help="Only this kind.")
    forget.add_argument("--since", help="Only memories created at or after this time.")
    forget.add_argument("--until", help="Only memories created at or before this time.")
    forget.add_argument("-w", "--workspace", default="", help="Workspace (default: store.default_workspace).")
    forget.add_argument("-y", "--yes", action="store_true", help="Forget without asking.")
    forget.add_argument("--dry-run", dest="dry_run", action="store_true", help="Only list what would go.")
    forget.add_argument("--json", action="store_true", help="Print the result as one JSON document.")


def _arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The filters given, checked as the tool checks them (a bad date or kind is refused here, nothing asked)."""
    values: dict[str, Any] = {k: getattr(args, k) for k in _FILTERS if getattr(args, k) is not None}
    if args.query is not None:
        values["limit"] = args.limit
    values["workspace"] = args.workspace
    return validate_call("forget", values).model_dump(exclude_unset=True)


def run(args: argparse.Namespace, paths: Paths, settings: Settings, environ: Mapping[str, str] | None = None,
        ask: Callable[[str], str] | None = None, stdin: TextIO | None = None) -> int:
    """Carry out ``engram forget``: 0 when forgotten (or nothing matched, or a dry run), 1 when the user said no
    or could not be asked (errors propagate as ``EngramError``; the CLI prints them)."""
    with open_calls(paths, settings, environ) as calls:
        return _forget(calls, args, ask or input, stdin or sys.stdin)


def _forget(calls: Calls, args: argparse.Namespace, ask: Callable[[str], str], stdin: TextIO) -> int:
    arguments = _arguments(args)
    tools = typed(calls)
    preview = tools.forget(**arguments)
    count = preview.result.count
    if args.dry_run or not count:
        _show(args, preview.result, preview.text)
        return 0
    if not args.yes:
        print(for_stream(preview.text.rsplit("\n", 1)[0], sys.stdout))  # without the agent's "call again" line
        if not stdin.isatty():
            print(for_stream("Nothing was forgotten: there is no terminal to ask on. Run it again with --yes to "
                             "forget these without being asked.", sys.stderr), file=sys.stderr)
            return 1
        try:
            answer = ask(f"Forget {'this memory' if count == 1 else f'these {count:,} memories'}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was forgotten.")
            return 1
    done = tools.forget(**arguments, confirm=True)
    _show(args, done.result, done.text)
    return 0


def _show(args: argparse.Namespace, result: Forgotten, text: str) -> None:
    if args.json:
        print(for_stream(json.dumps(result.model_dump(mode="json"), ensure_ascii=False), sys.stdout, json=True))
    else:
        print(for_stream(text, sys.stdout))
