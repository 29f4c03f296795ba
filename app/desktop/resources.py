"""Icons and other packaged files, found the same way from source, an installed wheel and a frozen bundle."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from PySide6.QtGui import QIcon

TRAY_STATES = ("ready", "indexing", "downloading", "error")


def resource_path(name: str) -> Path:
    """The path of ``resources/<name>``.

    Raises:
        FileNotFoundError: the file is not in this installation (a packaging mistake).
    """
    candidates = [Path(str(resources.files("engram.resources").joinpath(name)))]
    bundle = getattr(sys, "_MEIPASS", None)  # PyInstaller unpacks data files here
    if bundle:
        candidates.append(Path(bundle) / "engram" / "resources" / name)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"Engram resource '{name}' is missing from this installation (looked in "
                            f"{', '.join(str(c.parent) for c in candidates)}).")


def app_icon() -> QIcon:
    return QIcon(str(resource_path("engram.png")))


def tray_icon(state: str) -> QIcon:
    """The tray icon for ``state`` (one of ``TRAY_STATES``)."""
    return QIcon(str(resource_path(f"tray-{state}.png")))
