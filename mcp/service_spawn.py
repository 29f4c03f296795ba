"""Starting a headless ``engram service`` that outlives the process that starts it.

The launcher and the command line start one when none runs (``locator``), and so does an editor's hook
(``app/hook.py``), which must stay fast: this module imports only the standard library.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Any

from engram.core.paths import Paths

logger = logging.getLogger(__name__)


def service_command() -> list[str]:
    """How to start ``engram service`` from this installation (also from a frozen bundle)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "service"]
    return [sys.executable, "-m", "engram.app", "service"]


def start_detached(paths: Paths) -> None:
    """Start a headless service for ``paths`` that outlives this process; its output goes to the log folder.

    Raises:
        OSError: the log folder cannot be written, or the process cannot be started.
    """
    paths.log_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir),
           "ENGRAM_LOG_DIR": str(paths.log_dir)}
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = (subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
                                   | subprocess.CREATE_NO_WINDOW)
    else:
        kwargs["start_new_session"] = True
    with open(paths.log_dir / "service.out", "ab") as out:
        subprocess.Popen(service_command(), stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                         close_fds=True, **kwargs)
    logger.info("started a headless service for %s", paths.data_dir)
