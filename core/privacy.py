"""Engram's files are the user's alone: folders 0700 and files 0600 on POSIX, from the first write on.

Memories, notes, model files and the service token live in the data folder; settings and logs in
their own folders. ``private_from_now_on`` (called once by every entry point, before anything is
written) sets the process umask to 077, so everything this process creates — LanceDB's files
included, which are written by native code — is readable by its owner only; it also closes the
folders an older version left open. On Windows the per-user folders are private to the user already.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .paths import Paths

PRIVATE_UMASK = 0o077


def private_from_now_on(paths: Paths) -> None:
    """Files and folders this process creates from now on are private; Engram's existing folders are closed."""
    if os.name != "posix":
        return
    os.umask(PRIVATE_UMASK)
    for folder in (paths.data_dir, paths.config_dir, paths.log_dir):
        close_folder(folder)


def close_folder(folder: Path) -> None:
    """Make an existing ``folder`` of ours 0700 (a folder of another owner, or a missing one, is left alone)."""
    if os.name != "posix":
        return
    try:
        info = folder.stat()
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
            folder.chmod(0o700)
    except FileNotFoundError:
        pass
    except OSError as exc:
        import logging  # here, not at the top: a hook imports this module and must start fast (app/hook.py)

        logging.getLogger(__name__).warning("cannot make %s private (%s)", folder, exc.strerror)


def private_folder(folder: Path) -> Path:
    """Create ``folder`` (and missing parents) readable by its owner only; returns it.

    Raises:
        OSError: it cannot be created.
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    close_folder(folder)
    return folder
