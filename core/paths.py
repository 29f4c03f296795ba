"""Where Engram keeps things on this computer.

The environment is read once, at the process boundary (``Paths.from_environ``), and the result is
passed down; nothing deeper reads environment variables. Building a ``Paths`` creates no folders.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "engram"


@dataclass(frozen=True)
class Paths:
    """The folders and files Engram uses. ``data_dir`` holds workspaces and models."""

    data_dir: Path
    config_dir: Path
    log_dir: Path
    #: The editors' own folders whose session files capture reads (``None``: not looked at).
    claude_dir: Path | None = None
    codex_dir: Path | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Paths:
        """Platform folders, with ``ENGRAM_DATA_DIR`` and ``ENGRAM_CONFIG_DIR`` overriding them; the editors'
        folders where they keep them (``CLAUDE_CONFIG_DIR`` or ``~/.claude``, ``CODEX_HOME`` or ``~/.codex``)."""
        env = os.environ if environ is None else environ
        data = env.get("ENGRAM_DATA_DIR") or platformdirs.user_data_dir(APP_NAME, appauthor=False)
        config = env.get("ENGRAM_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME, appauthor=False)
        logs = env.get("ENGRAM_LOG_DIR") or platformdirs.user_log_dir(APP_NAME, appauthor=False)
        home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
        claude = Path(env["CLAUDE_CONFIG_DIR"]).expanduser() if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
        codex = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"
        return cls(Path(data).expanduser(), Path(config).expanduser(), Path(logs).expanduser(),
                   claude_dir=claude, codex_dir=codex)

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.toml"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def workspaces_dir(self) -> Path:
        return self.data_dir / "workspaces"

    def workspace_dir(self, name: str) -> Path:
        return self.workspaces_dir / name


def owner_name() -> str:
    """The OS user this process runs as: runs and their allowances belong to one owner."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no login name and no passwd entry (some containers)
        return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "user"
