"""Screenshots of the tray menu and each page of the window (run by scripts/screenshots.sh under Xvfb).

    python scripts/screenshots.py OUT_DIR

Each page at 800×600 and 1200×800, in the light and the dark color scheme: ``<page>-<scheme>-<size>.png``,
with the opened advanced settings (``settings-advanced-…``) and the chat's card while its model is not here
(``chat-no-model-…``). Also a note's detail on the Memory page (``memory-detail.png``), a setting search
(``settings-find.png``), the Memory page's review (its possible updates) and forget dialogs, the tray menu (``tray-menu.png``) and the tray icon's four states on a light and a dark panel
(``tray-icons.png``).

Uses a throwaway data folder holding this repository's docs/ and two notes, so the pages show real
content; the person's own Engram data is never touched.
"""

from __future__ import annotations

import asyncio
import os
import shutil
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


SIZES = ((800, 600), (1200, 800))
SCHEMES = ("light", "dark")


def tray_states_image(sizes: tuple[int, ...] = (16, 22, 24, 32, 48, 64)) -> Any:
    """The tray icon's states at ``sizes`` px, on a light panel (top) and a dark one (bottom)."""
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QColor, QImage, QPainter

    from engram.app.desktop.resources import TRAY_STATES, tray_icon

    pad = 8
    width = pad + len(TRAY_STATES) * (sum(sizes) + pad * (len(sizes) + 1))
    row = max(sizes) + 2 * pad
    image = QImage(width, 2 * row, QImage.Format.Format_ARGB32)
    p = QPainter(image)
    for r, panel in enumerate(("#f2f2f2", "#232323")):
        p.fillRect(0, r * row, width, row, QColor(panel))
        x = pad
        for state in TRAY_STATES:
            icon = tray_icon(state)
            for size in sizes:
                p.drawPixmap(x, r * row + pad + (max(sizes) - size) // 2, icon.pixmap(QSize(size, size), 1.0))
                x += size + pad
            x += pad
    p.end()
    return image


async def pages(desktop: Any, out: Path, scheme: str) -> None:
    """Every page of the window at each size, in ``scheme``."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from engram.app.desktop.appearance import dark_palette

    wanted = Qt.ColorScheme.Dark if scheme == "dark" else Qt.ColorScheme.Light
    QGuiApplication.styleHints().setColorScheme(wanted)
    if QGuiApplication.styleHints().colorScheme() != wanted:
        # Xvfb has no platform theme to honour the request: give Fusion the palette a dark desktop would.
        QApplication.setPalette(dark_palette() if scheme == "dark" else QApplication.style().standardPalette())
    await settle()
    window = desktop.window
    for width, height in SIZES:
        window.resize(width, height)
        for name, page in (("home", window.overview), ("ask", window.ask), ("memory", window.memory),
                           ("settings", window.settings), ("editors", window.editors)):
            window.tabs.setCurrentWidget(page)
            await settle()
            if name == "settings":
                scroll = window.settings.scroll_area.verticalScrollBar()
                scroll.setValue(0)
                await settle()
            window.grab().save(str(out / f"{name}-{scheme}-{width}x{height}.png"))
            if name == "settings":  # and the advanced settings, opened, from their first group
                settings = window.settings
                settings.show_advanced(True)
                await settle()
                toggle = settings.advanced_toggle
                scroll.setValue(toggle.mapTo(toggle.parentWidget(), toggle.rect().topLeft()).y())
                await settle()
                window.grab().save(str(out / f"settings-advanced-{scheme}-{width}x{height}.png"))
                settings.show_advanced(False)
            if name == "ask":  # and the chat's card while its model is not on this computer
                window.ask.mode.setCurrentWidget(window.ask.chat)
                await settle()
                window.grab().save(str(out / f"chat-no-model-{scheme}-{width}x{height}.png"))
                window.ask.mode.setCurrentWidget(window.ask.recall_tab)


async def open_memory(memory: Any) -> None:
    """The Memory page with its workspace, a project and that project's files open, and a file selected."""
    tree = memory.tree
    for _ in range(300):  # the workspaces are read in the background
        if tree.topLevelItemCount() and tree.topLevelItem(0).childCount():
            break
        await asyncio.sleep(0.1)
    workspace = tree.topLevelItem(0)
    workspace.setExpanded(True)
    project = next((workspace.child(i) for i in range(workspace.childCount())
                    if workspace.child(i).text(0).startswith("engram-docs")), workspace.child(0))
    project.setExpanded(True)
    for _ in range(300):  # its files and notes are read when it opens
        if project.childCount() and not project.child(0).text(0).startswith("Loading"):
            break
        await asyncio.sleep(0.1)
    files = project.child(0)
    files.setExpanded(True)
    await settle()
    if files.childCount():
        tree.setCurrentItem(files.child(min(2, files.childCount() - 1)))
    await settle()


async def show_a_note(memory: Any) -> None:
    """The Memory page with a note of the "engram" project selected: its detail shows beside the tree."""
    tree = memory.tree
    workspace = tree.topLevelItem(0)
    project = next(workspace.child(i) for i in range(workspace.childCount())
                   if workspace.child(i).text(0).startswith("engram "))
    project.setExpanded(True)
    for _ in range(300):
        if project.childCount() > 1 and not project.child(0).text(0).startswith("Loading"):
            break
        await asyncio.sleep(0.1)
    notes = project.child(project.childCount() - 1)
    notes.setExpanded(True)
    tree.setCurrentItem(notes.child(0))
    for _ in range(300):  # the detail reads the note in the background
        if memory.detail.memory is not None:
            break
        await asyncio.sleep(0.1)
    await settle()


async def shoot(out: Path) -> None:
    from PySide6.QtCore import QPoint

    from engram.app.desktop.desktop import Desktop
    from engram.core import Engine, Paths
    from engram.core.settings_file import load_settings

    paths = Paths.from_environ(os.environ)
    settings = load_settings(paths.settings_file, os.environ).settings
    engine = Engine(paths, settings)
    # A copy of this repository's docs in the throwaway home (Engram ingests only under ingest.allowed_roots).
    docs = Path(os.environ["HOME"]) / "engram-docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("*.png"))
    await asyncio.to_thread(engine.call, "ingest_path", {"path": str(docs), "project": "engram-docs"})
    for note, kind in (("We pin llama-cpp-python to 0.3.36: newer builds changed the embedding API.", "decision"),
                       ("Release checklist: run .ci/run from a fresh clone, then tag.", "todo")):
        await asyncio.to_thread(engine.call, "store", {"content": note, "type": kind, "project": "engram"})
    # Something for the review to show: a note written twice, and one that a newer version superseded.
    await asyncio.to_thread(engine.tools.store, "We pin llama-cpp-python to 0.3.36: newer builds changed the "
                            "embedding API.", type="decision", project="engram")
    old = await asyncio.to_thread(engine.tools.store, "Deploys go out on Mondays.", project="engram")
    await asyncio.to_thread(engine.tools.store, "Deploys go out on Tuesdays, after the review.", project="engram",
                            supersedes=[old.result.id])
    # A possible update (a version changed), and a repeat with a clause added, kept with the note it repeats.
    await asyncio.to_thread(engine.tools.store, "We pin llama-cpp-python to 0.3.37: newer builds changed the "
                            "embedding API.", type="decision", project="engram")
    await asyncio.to_thread(engine.tools.store, "Release checklist: run .ci/run from a fresh clone, then tag, as "
                            "we agreed.", type="todo", project="engram")
    desktop = Desktop(paths, os.environ, engine=engine, tray=True)
    await desktop.start_service()
    desktop.attach_tray()
    window = desktop.window
    desktop.show_window()
    await wait_signal(desktop.status_changed)  # counts shown in the Overview and the tray
    window.overview.question.setText("recall budget")
    window.overview.ask_button.click()
    await wait_signal(window.overview.searched)
    window.ask.question.setText("how do editors connect to Engram, and what does recall return?")
    window.ask.ask_button.click()
    await wait_signal(window.ask.recall_shown)
    # The shots show the Ask page's recall: a chat needs a model that calls tools, which this machine lacks.
    window.ask.mode.setCurrentIndex(window.ask.mode.indexOf(window.ask.recall_tab))
    await open_memory(window.memory)
    for _ in range(600):  # the GPU list, once detection has answered
        if window.settings.gpu_label.text() != "Looking for GPUs…":
            break
        await asyncio.sleep(0.1)
    for scheme in SCHEMES:
        await pages(desktop, out, scheme)

    window.resize(*SIZES[-1])
    window.tabs.setCurrentWidget(window.memory)
    await show_a_note(window.memory)
    window.grab().save(str(out / "memory-detail.png"))
    window.settings.find_box.setText("port")
    window.tabs.setCurrentWidget(window.settings)
    await settle()
    window.grab().save(str(out / "settings-find.png"))
    window.settings.find_box.clear()
    window.tabs.setCurrentWidget(window.memory)
    tidy = window.memory.tidy
    tidy.review()  # the review of duplicates and history, beside the page
    await wait_signal(desktop.jobs.finished, check=lambda job: job.title == "Reviewing duplicates and history")
    tidy.review_dialog.tabs.setCurrentWidget(tidy.review_dialog.updates)  # the possible update, to answer
    tidy.review_dialog.updates.setCurrentItem(tidy.review_dialog.updates.topLevelItem(0))
    await settle()
    tidy.review_dialog.grab().save(str(out / "memory-review.png"))
    tidy.review_dialog.close()
    tidy.forget_by_filter()
    tidy.forget_dialog.project.setCurrentText("engram")
    tidy.forget_dialog.preview()
    await wait_signal(desktop.jobs.finished, check=lambda job: job.title == "Listing what would be forgotten")
    await settle()
    tidy.forget_dialog.grab().save(str(out / "memory-forget.png"))
    tidy.forget_dialog.close()

    menu = desktop.tray.menu
    menu.popup(QPoint(600, 80))
    await settle()
    menu.grab().save(str(out / "tray-menu.png"))
    menu.hide()
    tray_states_image().save(str(out / "tray-icons.png"))

    desktop.show_welcome()
    await settle()
    for step in range(3):  # the first run's three steps
        desktop.welcome.go(step)
        await settle()
        desktop.welcome.grab().save(str(out / f"welcome-{step + 1}.png"))
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
