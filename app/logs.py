"""Logging for long-running commands: stderr plus a rotating file in the platform log folder."""

from __future__ import annotations

import logging
import sys
from logging.handlers import RotatingFileHandler

from engram.core import Paths

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(paths: Paths, name: str, *, verbose: bool) -> None:
    """Send warnings (INFO with ``verbose``) to stderr and INFO and above to ``<log dir>/<name>.log``.

    Never to stdout: in the stdio launcher stdout belongs to the MCP protocol.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(console)
    try:
        paths.log_dir.mkdir(parents=True, exist_ok=True)
        file = RotatingFileHandler(paths.log_dir / f"{name}.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        root.warning("cannot write logs to %s (%s); logging to stderr only", paths.log_dir, exc.strerror)
        return
    file.setLevel(logging.INFO)
    file.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(file)
