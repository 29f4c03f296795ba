"""The ``engram`` command's entry: ``engram hook`` without loading the rest of the command line.

An editor runs ``engram hook`` at every turn, so it must start in milliseconds: it imports only what a hook
needs (``app/hook.py``). Every other command goes to ``app/cli.py``.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``engram ARGS`` (``sys.argv``)."""
    if sys.argv[1:2] == ["hook"]:
        from .hook import main as hook_main

        hook_main()
    from .cli import main as cli_main

    cli_main()
