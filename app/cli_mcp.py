"""``engram service``, ``engram mcp`` and ``engram setup``: the MCP side of the command line."""

from __future__ import annotations

import argparse
from typing import Any

from engram.core import Paths, Settings

from .logs import configure_logging

COMMANDS = ("service", "mcp", "setup")


def add_parsers(sub: Any) -> None:
    sub.add_parser("service", help="Run the headless MCP service (Streamable HTTP on a loopback port)",
                   description="Owns the engine and serves MCP over Streamable HTTP on 127.0.0.1; the port, pid and "
                               "a bearer token are written to the data folder. One service per data folder.")
    mcp = sub.add_parser("mcp", help="MCP over stdio, for editors (relays to the service, starting it if needed)",
                         description="What editors are configured to start. Stdout carries only MCP messages.")
    mcp.add_argument("--standalone", action="store_true", help="Run the engine in this process instead of the service.")
    from engram.mcp.setup_clients import CLIENTS

    setup = sub.add_parser("setup", help="Add Engram to an editor's MCP configuration",
                           description="Writes (or with --remove, removes) the 'engram' entry of a client's MCP config, "
                                       "keeping every other server and a backup of the file.")
    setup.add_argument("client", nargs="?", choices=sorted(CLIENTS), help="The editor or agent to configure.")
    setup.add_argument("--list", action="store_true", help="List the clients and where their configs live.")
    setup.add_argument("--remove", action="store_true", help="Remove the entry instead of adding it.")
    setup.add_argument("--dry-run", action="store_true", help="Print the change without writing.")
    setup.add_argument("--plugin", action="store_true",
                       help="Claude Code: install Engram as a plugin (its MCP server plus hooks that remember each "
                            "session and brief a new one), instead of the plain MCP entry.")


def run(args: argparse.Namespace, paths: Paths, settings: Settings) -> int:
    if args.command == "service":
        from engram.mcp.service import run_service

        configure_logging(paths, "service", verbose=args.verbose)
        return run_service(paths, settings)
    if args.command == "mcp":
        from engram.mcp.launcher import run_launcher

        configure_logging(paths, "mcp", verbose=args.verbose)
        return run_launcher(paths, settings, standalone=args.standalone)
    from engram.mcp.setup_clients import run_setup

    return run_setup(args.client, listing=args.list, remove=args.remove, dry_run=args.dry_run, plugin=args.plugin,
                     data_dir=paths.data_dir)
