"""The ``engram`` command line.

Every tool of the engine is a command (see ``cli_tools``); ``config`` reads and writes settings.
Errors print as ``engram: <title>: <message>`` on stderr with exit status 2 for refused input and
1 for other failures. Results go to stdout, as text or (``--json``) as one JSON document. Both can
quote stored content, so on a terminal its control characters are shown escaped (see ``terminal``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from engram.core import Engine, EngramError, Paths
from engram.core.errors import InvalidArgument, SettingsError
from engram.core.privacy import private_from_now_on
from engram.core.settings_file import env_name, load_settings
from engram.core.tools.caller_paths import resolve_caller_paths

from . import (
    cli_capture,
    cli_chat,
    cli_config,
    cli_edit,
    cli_forget,
    cli_mcp,
    cli_models,
    cli_recall,
    cli_transfer,
    cli_workspace,
)
from .cli_calls import LocalCalls, open_calls
from .cli_tools import COMMANDS, FACT_COMMAND, add_tool_arguments, tool_arguments, tool_summary
from .progress import ProgressPrinter
from .terminal import for_stream

logger = logging.getLogger("engram")


def _version() -> str:
    try:
        return metadata.version("engram")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram",
        description="Engram: a local-first memory for AI tools. Ingest files and notes, then search them.",
        epilog="Settings: `engram config list`. Data folder: ENGRAM_DATA_DIR or --data-dir.",
    )
    parser.add_argument("--version", action="version", version=f"engram {_version()}")
    parser.add_argument("--data-dir", help="Data folder (default: ENGRAM_DATA_DIR or the platform data folder).")
    parser.add_argument("-v", "--verbose", action="store_true", help="Log progress details to stderr.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-w", "--workspace", default="", help="Workspace (default: store.default_workspace).")
    common.add_argument("--json", action="store_true", help="Print one JSON document instead of text.")
    common.add_argument("--max-chars", type=int, default=None,
                        help="Length cap of the text answer (1,200–12,000; default search.max_chars, recall.max_chars for recall).")

    for cmd in COMMANDS:
        p = sub.add_parser(cmd.command, parents=[common], help=cmd.help, description=tool_summary(cmd.tool))
        add_tool_arguments(p, cmd.tool, cmd.positional)
        p.set_defaults(tool=cmd.tool)

    fact = sub.add_parser(FACT_COMMAND, help="Add or end a knowledge-graph fact")
    fact_sub = fact.add_subparsers(dest="fact_action", metavar="ACTION", required=True)
    add = fact_sub.add_parser("add", parents=[common], help="Add a fact: SUBJECT PREDICATE OBJECT")
    for name in ("subject", "predicate", "object"):
        add.add_argument(name)
    add.add_argument("--project")
    add.add_argument("--valid-from", dest="valid_from", help="When it became true (ISO date/time; default now).")
    add.add_argument("--source", help="Where the fact comes from.")
    end = fact_sub.add_parser("end", parents=[common], help="End a fact by id (it stays in history)")
    end.add_argument("fact_id")
    fact.set_defaults(tool="kg_edit")

    tray = sub.add_parser("tray", help="Start the tray app (also: `engram` with no command, on a desktop)",
                          description="The tray icon and window; it serves your editors like `engram service` does.")
    tray.add_argument("--background", action="store_true",
                      help="Start with the tray icon alone, without opening the window (how a start at login runs).")
    cli_recall.add_parser(sub, common)
    cli_chat.add_parser(sub)
    cli_config.add_parser(sub)
    cli_mcp.add_parsers(sub)
    cli_models.add_parsers(sub)
    cli_workspace.add_parser(sub)
    cli_capture.add_parser(sub)
    cli_transfer.add_parsers(sub)
    cli_forget.add_parser(sub)
    cli_edit.add_parsers(sub)
    hook = sub.add_parser("hook", help="What an editor's hooks run (the Claude Code plugin of `engram setup`)",
                          description="Reads the editor's hook input (JSON) on standard input, leaves the session's "
                                      "capture to the service and, at a session's start, prints its brief. It always "
                                      "exits 0; what went wrong is in hooks.log in Engram's log folder.")
    hook.add_argument("editor", nargs="*", help="claude-code")
    return parser


def _tool_call(args: argparse.Namespace) -> dict[str, Any]:
    if args.tool == "kg_edit":
        values = {k: v for k, v in vars(args).items()
                  if k in ("subject", "predicate", "object", "project", "valid_from", "source", "fact_id")
                  and v is not None}
        values["action"] = args.fact_action
    else:
        values = resolve_caller_paths(args.tool, tool_arguments(args, args.tool), Path.cwd())
    if args.tool == "ingest_content" and "content" not in values:
        values["content"] = sys.stdin.read()
    values["workspace"] = args.workspace
    if args.max_chars is not None:
        values["max_chars"] = args.max_chars
    return values


def run(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.data_dir:
        env["ENGRAM_DATA_DIR"] = str(Path(args.data_dir).expanduser().resolve())
    paths = Paths.from_environ(env)
    private_from_now_on(paths)
    if args.command in (None, "tray"):
        from .desktop.main import has_display

        if has_display(env):
            return _run_tray(paths, env, verbose=args.verbose, background=getattr(args, "background", False))
        if args.command == "tray":
            print("engram: No desktop: the tray app needs a display (DISPLAY or WAYLAND_DISPLAY is not set). "
                  "On a server run `engram service` instead.", file=sys.stderr)
            return 1
        parser.print_help()
        print("\nNo desktop here (no DISPLAY or WAYLAND_DISPLAY), so `engram` printed this help instead of "
              "starting the tray app.")
        return 0
    if args.command == "hook":
        from .hook import run_hook

        return run_hook(args.editor, stdin=sys.stdin, stdout=sys.stdout, environ=env)
    try:
        if args.command == "config":
            return cli_config.run(args, paths, env)
        loaded = load_settings(paths.settings_file, env)
        settings = loaded.settings
        if args.command in cli_mcp.COMMANDS:
            return cli_mcp.run(args, paths, settings)
        if args.command in cli_models.COMMANDS:
            with Engine(paths, settings) as engine:
                return cli_models.run(args, engine)
        if args.command in cli_workspace.COMMANDS:
            # Registrations are files of the data folder and keyring entries: a running service reads them when it
            # next opens the workspace, so this runs here whether or not a service runs.
            with Engine(paths, settings, environ=env) as engine:
                return cli_workspace.run(args, engine)
        if args.command in cli_capture.COMMANDS:
            return cli_capture.run(args, paths, settings)
        if args.command in cli_transfer.COMMANDS:
            return cli_transfer.run(args, paths, settings, env)  # in the service when one runs, as tool calls are
        if args.command in cli_edit.COMMANDS:
            return cli_edit.run(args, paths, settings, env)
        if args.command in cli_forget.COMMANDS:
            return cli_forget.run(args, paths, settings, env)  # in the service when one runs, as tool calls are
        if args.command in cli_chat.COMMANDS:
            return cli_chat.run(args, paths, settings)  # the chat model is loaded in this process
        with open_calls(paths, settings, env) as calls:
            if not isinstance(calls, LocalCalls) and (overridden := _env_overrides(loaded.origins)):
                print(f"engram: note: the running Engram service answers with its own settings; {overridden} in "
                      "this environment does not apply to it.", file=sys.stderr)
            if args.command == "recall":
                doc = cli_recall.run(args, calls, settings)
            else:
                printer = ProgressPrinter()
                out = calls.call(args.tool, _tool_call(args), printer)
                printer.finish()
                doc = {"tool": out.tool, "workspace": out.workspace, "result": out.result, "text": out.text,
                       "chars": len(out.text)}
        if args.json:
            print(for_stream(json.dumps(doc, ensure_ascii=False), sys.stdout, json=True))
        else:
            print(for_stream(doc["text"], sys.stdout))
        return 0
    except (InvalidArgument, SettingsError) as exc:
        _print_error(exc)
        return 2
    except EngramError as exc:
        _print_error(exc)
        return 1
    except KeyboardInterrupt:
        print("engram: interrupted", file=sys.stderr)
        return 130


def _env_overrides(origins: Mapping[str, str]) -> str:
    """The settings this process took from ``ENGRAM_<GROUP>_<KEY>`` variables, named as variables."""
    return ", ".join(env_name(key) for key, origin in sorted(origins.items()) if origin == "env")


def _run_tray(paths: Paths, env: dict[str, str], *, verbose: bool, background: bool = False) -> int:
    from .desktop.main import run_tray

    try:
        return run_tray(paths, env, verbose=verbose, background=background)
    except EngramError as exc:
        _print_error(exc)
        return 2 if isinstance(exc, SettingsError) else 1


def _print_error(exc: EngramError) -> None:
    # The message may quote an id, a source or a value as it was typed or stored.
    print(for_stream(f"engram: {exc.title}: {exc.message}", sys.stderr), file=sys.stderr)


def main() -> None:
    try:
        status = run()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `engram config list | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    sys.exit(status)
