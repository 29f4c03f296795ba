"""Screenshots of the tray menu and each page of the window (run by scripts/screenshots.sh under Xvfb).

    python scripts/screenshots.py OUT_DIR

Uses a throwaway data folder holding this repository's docs/ and two notes, so the pages show real
content; the person's own Engram data is never touched.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


async def wait_signal(signal: Any, timeout: float = 120.0, check: Any = None) -> tuple[Any, ...]:
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def slot(*args: Any) -> None:
        if not future.done() and (check is None or check(*args)):
            future.set_result(args)

    signal.connect(slot)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(slot)


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)  # let Qt lay out and paint before a grab


async def shoot(out: Path) -> None:
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QScrollArea

    from engram.app.desktop.desktop import Desktop
    from engram.core import Engine, Paths
    from engram.core.settings_file import load_settings

    paths = Paths.from_environ(os.environ)
    settings = load_settings(paths.settings_file, os.environ).settings
    engine = Engine(paths, settings)
    await asyncio.to_thread(engine.call, "ingest_path", {"path": str(ROOT / "docs"), "project": "engram-docs"})
    for note, kind in (("We pin llama-cpp-python to 0.3.36: newer builds changed the embedding API.", "decision"),
                       ("Release checklist: run .ci/run from a fresh clone, then tag.", "todo")):
        await asyncio.to_thread(engine.call, "store", {"content": note, "type": kind, "project": "engram"})
    desktop = Desktop(paths, os.environ, engine=engine, tray=True)
    desktop.start_service()
    desktop.attach_tray()
    window = desktop.window
    window.resize(1000, 760)
    desktop.show_window()
    await wait_signal(desktop.status_changed)  # counts shown in the Overview and the tray
    window.overview.question.setText("how do editors connect to Engram, and what does recall return?")
    window.overview.ask_button.click()
    await wait_signal(window.overview.recall_shown)
    await settle()
    window.grab().save(str(out / "overview.png"))

    window.tabs.setCurrentWidget(window.settings)
    await settle()
    window.grab().save(str(out / "settings.png"))
    body = window.settings.findChild(QScrollArea).widget()
    body.grab().save(str(out / "settings-full.png"))

    window.tabs.setCurrentWidget(window.editors)
    await settle()
    window.grab().save(str(out / "editors.png"))

    menu = desktop.tray.menu
    menu.popup(QPoint(600, 80))
    await settle()
    menu.grab().save(str(out / "tray-menu.png"))
    menu.hide()

    desktop.show_welcome()
    await settle()
    desktop.welcome.grab().save(str(out / "welcome.png"))
    desktop.welcome.reject()
    await desktop.shutdown()
    engine.close()


def main() -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="engram-shots-") as tmp:
        for name, sub in (("ENGRAM_DATA_DIR", "data"), ("ENGRAM_CONFIG_DIR", "config"), ("ENGRAM_LOG_DIR", "logs"),
                          ("HOME", "home")):
            os.environ[name] = str(Path(tmp) / sub)
        Path(tmp, "home", ".cursor").mkdir(parents=True)  # one editor "installed", to show the welcome's offer
        app = QApplication(sys.argv[:1])
        app.setApplicationName("Engram")
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(shoot(out))
    print(f"screenshots written to {out}")


if __name__ == "__main__":
    main()
