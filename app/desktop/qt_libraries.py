"""The system libraries Qt needs on Linux, checked before Qt is loaded, so that a machine without them hears
which ones and how to install them, on its desktop as well as in a terminal.

Without them Qt prints "Could not load the Qt platform plugin" to a terminal nobody sees (a launch from the menu
has none) and aborts. PySide6's wheels carry Qt but not these libraries of the system. The list matches
``scripts/qt-deps.sh``; the message names the Debian packages and the command that installs them.

Nothing here imports Qt.
"""

from __future__ import annotations

import ctypes
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping

logger = logging.getLogger(__name__)

#: Library file → the Debian package that carries it, needed by Qt on every platform plugin.
CORE: dict[str, str] = {
    "libglib-2.0.so.0": "libglib2.0-0",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libfreetype.so.6": "libfreetype6",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}
#: … and by its X11 plugin (xcb), the one a desktop with DISPLAY set uses.
XCB: dict[str, str] = {
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
}
#: Tools that show a message on a Linux desktop without Qt, tried in order.
NOTIFIERS: tuple[tuple[str, ...], ...] = (
    ("zenity", "--error", "--no-wrap", "--title=Engram cannot start", "--text={message}"),
    ("kdialog", "--title", "Engram cannot start", "--error", "{message}"),
    ("notify-send", "--urgency=critical", "Engram cannot start", "{message}"),
    ("xmessage", "-center", "{message}"),
)


def loadable(library: str) -> bool:
    """Whether the dynamic loader finds ``library`` (loading it: Qt would load it next anyway)."""
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def needed(environ: Mapping[str, str]) -> dict[str, str]:
    """The libraries Qt will load here: the core ones, plus X11's when the xcb plugin is the one it would use
    (``QT_QPA_PLATFORM`` unset or xcb, and a ``DISPLAY``)."""
    platform = environ.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform in ("offscreen", "minimal", "vnc", "eglfs", "linuxfb"):
        return dict(CORE)
    if platform == "xcb" or (not platform and environ.get("DISPLAY")):
        return {**CORE, **XCB}
    return dict(CORE)


def missing_libraries(environ: Mapping[str, str], *, platform: str = sys.platform,
                      find: Callable[[str], bool] | None = None) -> dict[str, str]:
    """The libraries (file → Debian package) Qt needs here that this computer lacks (``find``: whether one is
    found, default ``loadable``); always empty off Linux."""
    if not platform.startswith("linux"):
        return {}
    found = find or loadable
    return {library: package for library, package in needed(environ).items() if not found(library)}


def explain(missing: Mapping[str, str]) -> str:
    """What is missing and the command that installs it, in a few sentences."""
    packages = " ".join(sorted(set(missing.values())))
    return (f"Engram's window needs system libraries this computer lacks: {', '.join(sorted(missing))}. "
            f"Install them (Debian, Ubuntu): sudo apt-get install -y {packages} — or run scripts/qt-deps.sh "
            "from Engram's folder — then start Engram again. Nothing was changed; `engram service` works "
            "without them.")


def tell(message: str, environ: Mapping[str, str], *, which: Callable[[str], str | None] = shutil.which) -> str:
    """Say ``message`` on stderr, in the log, and on the desktop through the first of ``NOTIFIERS`` found (a
    launch from the menu has no terminal); returns the notifier's name, ``""`` when none was found."""
    print(f"engram: Engram cannot start: {message}", file=sys.stderr)
    logger.error("Engram cannot start: %s", message)
    for command in NOTIFIERS:
        program = which(command[0])
        if program is None:
            continue
        try:
            subprocess.Popen([program, *(part.format(message=message) for part in command[1:])],
                             env=dict(environ), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            continue
        return command[0]
    return ""
