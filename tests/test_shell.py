"""The shell between ``Desktop`` and what it shows: the tray and the pages ask the app through it and follow its
signals, built without a ``Desktop`` at all; ``Desktop`` tells them what changed only through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from engram.app.desktop.counts import capture_sentence
from engram.app.desktop.editors import EditorsController
from engram.app.desktop.jobs import Job, Jobs
from engram.app.desktop.shell import Shell
from engram.app.desktop.tray import STATE_TIPS, Tray
from engram.core import Paths
from engram.core.errors import ModelError
from engram.mcp.setup_clients import Places
from standins.embedder import HashingEmbedder

from .desktop_support import desktop_environ, desktops


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


@pytest.fixture
def make_desktop(qapp: Any, paths: Paths, home: Path, fake_embedder: HashingEmbedder) -> Iterator[Any]:
    with desktops(paths, desktop_environ(paths, home), fake_embedder, tray=True) as build:
        yield build


class Asked:
    """A shell whose actions are recorded, and whether a tray is shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.tray = False
        self.shell = Shell(show_window=lambda page: self.calls.append(("show_window", page)),
                           quit=lambda: self.calls.append(("quit",)),
                           choose_folder_to_ingest=lambda: self.calls.append(("choose_folder",)),
                           set_indexing_paused=lambda paused: self.calls.append(("paused", paused)),
                           cancel_ingest=lambda job_id: self.calls.append(("cancel", job_id)) is None and job_id == 7,
                           notify=self.notify, has_tray=lambda: self.tray,
                           set_watching_paused=lambda paused: self.calls.append(("watching paused", paused)))

    def notify(self, title: str, message: str, *, error: bool = False, warning: bool = False,
               page: str = "home") -> None:
        self.calls.append(("notify", title, message, error, warning, page))


def test_the_shell_hands_each_action_to_the_callable_given_for_it(qapp: Any) -> None:
    asked = Asked()
    shell = asked.shell
    shell.show_window("memory")
    shell.show_window()
    shell.choose_folder_to_ingest()
    shell.set_indexing_paused(True)
    shell.set_watching_paused(True)
    assert shell.cancel_ingest(7) and not shell.cancel_ingest(8)
    shell.notify("Memory", "Forgot it.", warning=True, page="memory")
    shell.quit()
    assert asked.calls == [("show_window", "memory"), ("show_window", None), ("choose_folder",), ("paused", True),
                           ("watching paused", True), ("cancel", 7), ("cancel", 8), ("notify", "Memory", "Forgot it.", False, True, "memory"),
                           ("quit",)]
    assert not shell.has_tray
    asked.tray = True
    assert shell.has_tray
    said: list[tuple[str, int]] = []
    shell.message.connect(lambda text, ms: said.append((text, ms)))
    shell.show_message("Opened notes.md", 10000)
    assert said == [("Opened notes.md", 10000)]


def test_the_tray_asks_the_shell_and_follows_its_signals(qapp: Any, home: Path) -> None:
    asked = Asked()
    jobs = Jobs()
    try:
        tray = Tray(asked.shell, EditorsController(jobs, Places.from_environ({"HOME": str(home)})))
        tray.open_action.trigger()
        tray.ingest_action.trigger()
        tray.pause_action.trigger()
        tray.watch_action.trigger()
        tray.quit_action.trigger()
        assert asked.calls == [("show_window", None), ("choose_folder",), ("paused", True), ("watching paused", True),
                               ("quit",)]

        asked.calls.clear()
        asked.shell.paused_changed.emit(True)  # already ticked: nothing is asked again
        assert asked.calls == [] and tray.pause_action.isChecked()
        asked.shell.paused_changed.emit(False)  # resumed from the window: the menu follows
        assert not tray.pause_action.isChecked() and asked.calls == [("paused", False)]

        asked.shell.state_changed.emit("indexing", "paused")
        assert tray.icon.toolTip() == STATE_TIPS["indexing"] + "\npaused"
        asked.shell.status_changed.emit("Remembers 2 passages from 1 file · local AI off")
        assert tray.status_action.text() == "Remembers 2 passages from 1 file · local AI off"

        asked.calls.clear()
        tray.notify("Ingest finished", "docs: 3 files indexed.", page="memory")
        tray.icon.messageClicked.emit()
        tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
        assert asked.calls == [("show_window", "memory"), ("show_window", None)]
    finally:
        jobs.shutdown()


def test_the_settings_page_shows_the_gpus_the_desktop_found_or_why_it_could_not(make_desktop: Any,
                                                                                qtbot: Any) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    desktop.shell.gpus_found.emit(Job(1, "task", "Looking for GPUs", finished=True,
                                      error=ModelError("nvidia-smi did not answer.")))
    assert page.gpu_label.text() == "Model unavailable: nvidia-smi did not answer."
    with qtbot.waitSignal(desktop.jobs.finished, timeout=30_000,
                          check_params_cb=lambda job: job.title == "Looking for GPUs") as found:
        desktop.detect_gpus()
    job = found.args[0]
    if job.error is not None:
        assert page.gpu_label.text() == f"{job.error.title}: {job.error.message}"
    else:
        assert page.gpu_label.text().endswith(f" Chosen now: {job.result[1]}.")


def test_the_desktop_tells_the_tray_and_home_the_counts_through_the_shell(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    desktop.attach_tray()
    counted: list[Job] = []
    desktop.shell.counts_changed.connect(counted.append)
    with qtbot.waitSignal(desktop.shell.status_changed, timeout=30_000) as status:
        desktop.refresh()
    assert status.args[0] == "Remembers nothing yet · local AI off"
    assert desktop.tray.status_action.text() == status.args[0]
    assert len(counted) == 1 and counted[0].error is None
    assert desktop.window.overview.state.text().startswith("Engram remembers nothing yet")

    desktop.notify("Memory", "Forgot the note “deploys”.", page="memory")
    assert desktop.window.statusBar().currentMessage() == "Memory: Forgot the note “deploys”."
    assert desktop.shell.has_tray


def test_home_shows_what_capture_stored_today_against_its_caps(make_desktop: Any, qtbot: Any, tmp_path: Path) -> None:
    desktop = make_desktop()
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes((Path(__file__).parent / "fixtures" / "capture" / "claude-code-session.jsonl").read_bytes())
    assert desktop.engine.capture_file("claude-code", transcript).stored.new == 2
    with qtbot.waitSignal(desktop.shell.counts_changed, timeout=30_000):
        desktop.refresh()
    assert desktop.window.overview.capture.text() == (
        "Sessions remembered from Claude Code and Codex today: 2 of 3,000 turns, "
        f"{desktop.engine.capture_ledger().today().chars:,} of 5,000,000 characters (at most 1,000 turns a session)")


def test_the_capture_line_says_when_a_cap_was_reached_capture_is_off_or_the_watch_paused() -> None:
    base = {"editors": ["Codex"], "turns": 3000, "turns_cap": 3000, "chars": 10, "chars_cap": 100, "capped": 4,
            "sessions": 2, "session_cap": 500, "watching": 3, "watch_paused": False}
    assert capture_sentence(base) == ("Sessions remembered from Codex today: 3,000 of 3,000 turns, 10 of 100 "
                                      "characters (at most 500 turns a session); 4 turns left out over a limit · 3 "
                                      "folders kept current")
    assert capture_sentence({**base, "editors": [], "watching": 1, "watch_paused": True}) == (
        "AI tool sessions are not remembered (Settings: Remembering) · keeping folders current is paused")
