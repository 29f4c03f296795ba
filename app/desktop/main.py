"""``engram tray`` (and ``engram`` with no arguments on a desktop): start the tray app."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping

from engram.core import Paths

logger = logging.getLogger(__name__)


def has_display(environ: Mapping[str, str], platform: str = sys.platform) -> bool:
    """Whether a window can be shown here (Linux needs X11, Wayland, or an explicit Qt platform)."""
    if platform in ("win32", "darwin"):
        return True
    return any(environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def install_signal_handlers(on_signal: Callable[[], None]) -> object:
    """Run ``on_signal`` on the Qt thread for SIGINT and SIGTERM.

    Python runs signal handlers only between bytecodes, and an idle Qt loop runs none: the wake-up
    fd makes the loop wake (a socket notifier), so the handler runs at once. Returns what must stay
    alive for that to keep working.
    """
    from PySide6.QtCore import QSocketNotifier

    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(lambda *_: reader.recv(64))
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _s, _f: on_signal())
    return (reader, writer, notifier)


def run_tray(paths: Paths, environ: Mapping[str, str], *, verbose: bool = False, background: bool = False) -> int:
    """Run the tray app until Quit (or SIGINT/SIGTERM); returns the exit status. It opens its window, unless
    ``background`` (a start at login: the tray icon alone).

    A second start for the same data folder asks the first one to show its window and returns 0. Without the
    system libraries Qt needs (Linux), it says which and how to install them, on the desktop too, and returns 1.
    """
    from ..logs import configure_logging
    from .qt_libraries import explain, missing_libraries, tell

    configure_logging(paths, "tray", verbose=verbose)
    missing = missing_libraries(environ)
    if missing:
        tell(explain(missing), environ)
        return 1
    import qasync
    from PySide6.QtWidgets import QApplication

    from .appearance import follow_color_scheme
    from .desktop import Desktop
    from .instance import InstanceServer, ask_running_instance
    from .resources import app_icon

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "engram"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Engram")
    app.setDesktopFileName("engram")
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(app_icon())
    follow_color_scheme(app)  # a dark system preference where Qt's style would stay light (Fusion without a theme)
    if ask_running_instance(paths.data_dir):
        print(f"Engram is already running for {paths.data_dir}; its window was brought up.", file=sys.stderr)
        return 0
    holder: dict[str, Desktop] = {}
    instance = InstanceServer(paths.data_dir, on_show=lambda: holder["desktop"].show_window() if holder else None)
    if not instance.listen():
        print(f"Engram is already running for {paths.data_dir}.", file=sys.stderr)
        return 0
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        desktop = holder["desktop"] = Desktop(paths, environ, background=background)
        wakeup = install_signal_handlers(desktop.quit)
        logger.info("tray app started for %s (pid %d)", paths.data_dir, os.getpid())
        with loop:
            loop.run_until_complete(desktop.run())
        del wakeup  # held until here: the socket pair and notifier must outlive the loop
    finally:
        instance.close()
        signal.set_wakeup_fd(-1)
    logger.info("tray app stopped")
    return 0
