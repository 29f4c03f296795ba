"""Start at login, per OS: an XDG autostart entry (Linux), a LaunchAgent (macOS), the Run key (Windows).

Off by default (``desktop.start_at_login``). The tray app brings the entry in line with the setting
when it starts and when the setting changes, so the file is never the only place the choice lives.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import sys
from pathlib import Path

from engram.core import EngramError
from engram.core.fileio import atomic_write_bytes
from engram.mcp.setup_clients import engram_command

LABEL = "org.engram.tray"


class AutostartError(EngramError):
    title = "Start at login not changed"


def tray_command() -> list[str]:
    """The command that starts this installation's tray app."""
    command = [*engram_command("tray"), "--background"]  # at login: the tray icon, not the window
    windowed = Path(command[0]).with_name("engramw.exe")  # Windows bundle: the console-less twin
    if getattr(sys, "frozen", False) and sys.platform == "win32" and windowed.exists():
        command[0] = str(windowed)
    return command


def entry_path(home: Path | None = None, platform: str = sys.platform) -> Path | None:
    """Where the login entry lives on this OS (``None`` on Windows, where it is a registry value)."""
    home = home or Path.home()
    if platform == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    if platform == "win32":
        return None
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return config / "autostart" / "engram.desktop"


def _desktop_entry(command: list[str]) -> bytes:
    return ("[Desktop Entry]\nType=Application\nName=Engram\nComment=Local-first memory for AI tools\n"
            f"Exec={shlex.join(command)}\nIcon=engram\nTerminal=false\nX-GNOME-Autostart-enabled=true\n").encode()


def _launch_agent(command: list[str]) -> bytes:
    return plistlib.dumps({"Label": LABEL, "ProgramArguments": command, "RunAtLoad": True, "ProcessType": "Interactive"})


def is_enabled(home: Path | None = None, platform: str = sys.platform) -> bool:
    if platform == "win32":
        return _windows_enabled()
    path = entry_path(home, platform)
    return path is not None and path.exists()


def _windows_enabled() -> bool:
    if sys.platform != "win32":  # winreg exists only there (so mypy checks the registry calls only there)
        raise AssertionError("the Run key exists only on Windows")
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, r"Software\Microsoft\Windows\CurrentVersion\Run") as key:
            winreg.QueryValueEx(key, "Engram")
        return True
    except OSError:
        return False


def set_enabled(enabled: bool, *, command: list[str] | None = None, home: Path | None = None,
                platform: str = sys.platform) -> None:
    """Add or remove the login entry.

    Raises:
        AutostartError: the entry cannot be written or removed (the message names the place).
    """
    command = command or tray_command()
    if platform == "win32":
        _set_windows(enabled, command)
        return
    path = entry_path(home, platform)
    assert path is not None
    try:
        if not enabled:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _launch_agent(command) if platform == "darwin" else _desktop_entry(command)
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise AutostartError(f"Cannot {'write' if enabled else 'remove'} {path}: {exc.strerror}.") from exc


def _set_windows(enabled: bool, command: list[str]) -> None:
    if sys.platform != "win32":  # winreg exists only there (so mypy checks the registry calls only there)
        raise AssertionError("the Run key exists only on Windows")
    import subprocess
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, r"Software\Microsoft\Windows\CurrentVersion\Run", 0,
                            winreg.KEY_SET_VALUE) as key:
            if enabled:
                winreg.SetValueEx(key, "Engram", 0, winreg.REG_SZ, subprocess.list2cmdline(command))
            else:
                try:
                    winreg.DeleteValue(key, "Engram")
                except FileNotFoundError:
                    pass
    except OSError as exc:
        raise AutostartError(f"Cannot change the Run key of the registry: {exc.strerror}.") from exc
