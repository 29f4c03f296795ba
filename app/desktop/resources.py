"""Icons and other packaged files, found the same way from source, an installed wheel and a frozen bundle."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon

TRAY_STATES = ("ready", "indexing", "downloading", "error")
# Pixel sizes drawn by scripts/make_icons.py: the tray's at 100 %, 125 % and 150 % scaling and their @2x
# (16/20/22/24 and 32/44/48, 64/96/128 for panels that ask for more); the app icon's up to a large dock.
TRAY_ICON_SIZES = (16, 20, 22, 24, 32, 44, 48, 64, 96, 128)
APP_ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)


def icon_file_name(stem: str, size: int, sizes: tuple[int, ...]) -> str:
    """The file of ``stem`` drawn at ``size`` px: ``<stem>-<size>.png``, the largest plainly ``<stem>.png``.

    (So ``engram.png`` stays the 256 px icon the installers copy.)
    """
    return f"{stem}.png" if size == max(sizes) else f"{stem}-{size}.png"


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


def sized_icon(stem: str, sizes: tuple[int, ...]) -> QIcon:
    """A QIcon holding every drawn size of ``stem``, so Qt picks a crisp one at any device pixel ratio.

    Raises:
        FileNotFoundError: one of the files is not in this installation.
    """
    icon = QIcon()
    for size in sizes:
        icon.addFile(str(resource_path(icon_file_name(stem, size, sizes))), QSize(size, size))
    return icon


def app_icon() -> QIcon:
    """The app's icon (windows, the task bar, the dock), 16 to 256 px."""
    return sized_icon("engram", APP_ICON_SIZES)


def tray_icon(state: str) -> QIcon:
    """The tray icon for ``state`` (one of ``TRAY_STATES``), 16 to 128 px.

    Raises:
        ValueError: ``state`` is not one of ``TRAY_STATES``.
    """
    if state not in TRAY_STATES:
        raise ValueError(f"unknown tray state {state!r} (expected one of {', '.join(TRAY_STATES)})")
    return sized_icon(f"tray-{state}", TRAY_ICON_SIZES)
