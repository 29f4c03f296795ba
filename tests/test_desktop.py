"""The desktop app, driven for real offscreen: the window's pages, the tray menu, the service inside
the Qt loop answering a real MCP client, single instance and signals with real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import keyring
import pytest
from keyring.backends.fail import Keyring as FailKeyring
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QLabel, QLineEdit, QSlider

from engram.app import cli
from engram.app.desktop import autostart
from engram.app.desktop.instance import InstanceServer, ask_running_instance
from engram.app.desktop.settings_page import SECTIONS
from engram.app.desktop.welcome import MARKER
from engram.core import Paths
from engram.core.errors import IngestCancelled, ModelError
from engram.core.settings_file import load_settings
from engram.mcp.service_files import read_info
from engram.mcp.setup_clients import Places

from .conftest import MemoryKeyring, write_tree
from .desktop_support import enter, settle

ENGRAM = [sys.executable, "-m", "engram.app"]

# A valid and (where the key has one) a refused value for every key the Settings page edits.
VALUES: dict[str, tuple[str, str | None]] = {
    "recall.llm_timeout_sec": ("45", "0.5"),
    "recall.max_chars": ("5000", "99999"),
    "search.max_chars": ("3000", "many"),
    "recall.run_budget.max_queries": ("8", "0"),
    "recall.run_budget.max_rounds": ("3", "many"),
    "recall.run_budget.deadline_sec": ("20", "0.01"),
    "recall.run_budget.max_tokens_per_query": ("128", "-1"),
    "search.limit": ("15", "0"),
    "search.weight_semantic": ("0.8", "heavy"),
    "search.weight_lexical": ("1.2", "-3"),
    "search.weight_graph": ("0.2", "x"),
    "helper.provider": ("ollama", None),
    "helper.base_url": ("http://127.0.0.1:11434", None),
    "helper.remote_model": ("qwen3:4b", None),
    "helper.local.model": ("qwen3.5-35b-a3b", None),
    "helper.local.threads": ("1", "-1"),
    "helper.local.batch": ("512", "8"),
    "model.gpu_device": ("cpu", None),
    "service.port": ("8765", "70000"),
    "capture.brief_chars": ("4000", "20000"),
    "capture.turns_per_day": ("500", "0"),
    "capture.turns_per_session": ("200", "0"),
    "watch.quiet_sec": ("5", "0.01"),
    "chat.local_model": ("qwen3.5-4b", None),
    "chat.tool_format": ("hermes", None),
    "chat.provider": ("ollama", None),
    "chat.base_url": ("http://127.0.0.1:11434", None),
    "chat.remote_model": ("qwen3:4b", None),
    "chat.n_ctx": ("16384", "10"),
    "chat.max_tokens": ("2048", "1"),
    "chat.research_timeout_sec": ("120", "1"),
    "chat.research_token_budget": ("32768", "5"),
    "chat.research_no_progress_rounds": ("3", "0"),
    "chat.answer_timeout_sec": ("60", "1"),
    "desktop.open_with": ("code --goto {file}:{line}", "code --goto"),
}


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


def as_typed(value: Any) -> str:
    """A saved value as the page shows it: ``45`` for 45.0 seconds, ``0.8`` for a weight."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() and value >= 1 else str(value)


def saved(paths: Paths, key: str) -> Any:
    return load_settings(paths.settings_file, {}).value(key)


# ----------------------------------------------------------------------------- settings


@pytest.mark.slow
def test_every_setting_on_the_page_is_saved_and_refused_values_are_not(make_desktop: Any, paths: Paths,
                                                                       qtbot: Any) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    assert [k for _, keys in SECTIONS for k in keys] == list(page.rows)
    for key, row in page.rows.items():
        if isinstance(row.editor, QCheckBox):
            before = saved(paths, key)
            row.editor.setChecked(not before)
            settle(desktop, qtbot)
            assert saved(paths, key) is (not before), key
            continue
        good, bad = VALUES[key]
        enter(row, good)
        settle(desktop, qtbot)
        assert as_typed(saved(paths, key)) == good, key
        assert row.error.isHidden(), key
        if bad is None:
            continue
        file_before = paths.settings_file.read_bytes()
        enter(row, bad)
        settle(desktop, qtbot)
        if isinstance(row.editor, (QAbstractSpinBox, QSlider)):  # the control never takes it: nothing to refuse
            assert row.error.isHidden(), key
        else:
            assert not row.error.isHidden(), f"{key}: a refused value shows why"
            assert key in row.error.text() and row.error.text(), key
        assert paths.settings_file.read_bytes() == file_before, f"{key}: nothing written"
        assert as_typed(saved(paths, key)) == good
    assert desktop.engine.settings.search.limit == 15, "saved values reach the running engine"
    assert "after Engram restarts" in page.rows["service.port"].note.text()


def test_a_setting_from_the_environment_is_shown_but_not_editable(make_desktop: Any, environ: dict[str, str]) -> None:
    desktop = make_desktop(env={**environ, "ENGRAM_SEARCH_LIMIT": "7"})
    row = desktop.window.settings.rows["search.limit"]
    assert row.editor.value() == 7 and not row.editor.isEnabled()
    assert "ENGRAM_SEARCH_LIMIT" in row.note.text()


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG autostart entry is Linux's mechanism")
def test_start_at_login_writes_and_removes_the_login_entry(make_desktop: Any, home: Path, qtbot: Any) -> None:
    desktop = make_desktop()
    entry = home / ".config" / "autostart" / "engram.desktop"
    desktop.window.settings.rows["desktop.start_at_login"].editor.setChecked(True)
    settle(desktop, qtbot)
    assert entry.exists() and " tray" in entry.read_text()
    desktop.window.settings.rows["desktop.start_at_login"].editor.setChecked(False)
    settle(desktop, qtbot)
    assert not entry.exists()


def test_a_login_agent_on_macos_runs_the_tray(tmp_path: Path) -> None:
    autostart.set_enabled(True, command=["/Applications/Engram.app/engram", "tray"], home=tmp_path, platform="darwin")
    plist = tmp_path / "Library" / "LaunchAgents" / "org.engram.tray.plist"
    assert b"<string>tray</string>" in plist.read_bytes() and autostart.is_enabled(tmp_path, "darwin")
    autostart.set_enabled(False, home=tmp_path, platform="darwin")
    assert not plist.exists()


def test_api_keys_go_to_the_keyring_and_never_to_the_settings_file(make_desktop: Any, paths: Paths, qtbot: Any,
                                                                   memory_keyring: MemoryKeyring) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    settle(desktop, qtbot)
    page.key_provider.setCurrentText("anthropic")
    page.key_input.setText("sk-ant-secret")
    page.key_store.click()
    settle(desktop, qtbot)
    assert memory_keyring.items[("engram", "anthropic")] == "sk-ant-secret"
    assert "Stored the anthropic key" in page.key_state.text() and page.key_input.text() == ""
    assert not paths.settings_file.exists() or b"sk-ant" not in paths.settings_file.read_bytes()
    page.key_remove.click()
    settle(desktop, qtbot)
    assert ("engram", "anthropic") not in memory_keyring.items


def test_without_a_keyring_the_page_says_so_and_stores_nothing(make_desktop: Any, qtbot: Any) -> None:
    keyring.set_keyring(FailKeyring())
    desktop = make_desktop()
    page = desktop.window.settings
    settle(desktop, qtbot)
    assert "No usable OS keyring" in page.key_state.text()
    assert not page.key_store.isEnabled() and not page.key_input.isEnabled()


def test_recall_llm_explains_whether_it_can_be_on(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    assert "Now off" in page.llm_state.text() and "not downloaded yet" in page.llm_state.text()
    enter(page.rows["helper.provider"], "ollama")  # a server on this computer: its own models, no file here
    settle(desktop, qtbot)
    assert "It can be on: the default model via ollama at http://127.0.0.1:11434." in page.llm_state.text()
    enter(page.rows["helper.provider"], "openai")
    settle(desktop, qtbot)
    assert "not on this computer" in page.llm_state.text()


def test_a_helper_model_downloads_from_the_settings_page_with_progress(make_desktop: Any, paths: Paths,
                                                                       qtbot: Any) -> None:
    from .model_server import ModelServer

    blob = os.urandom(3_000_000)
    with ModelServer({"tiny.gguf": blob}) as server:
        desktop = make_desktop()
        page = desktop.window.settings
        assert "Pinned by hash" in page.model_state.text(), "the default helper (qwen3.5-4b) is pinned by hash"
        enter(page.rows["helper.local.model"], "qwen3.5-35b-a3b")
        settle(desktop, qtbot)
        assert "Pinned by revision only" in page.model_state.text()
        enter(page.rows["helper.local.model"], f"{server.url}/files/tiny.gguf")
        settle(desktop, qtbot)
        assert "not downloaded" in page.model_state.text() and page.download_button.isEnabled()
        with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "download") as done:
            page.download_button.click()
            assert not page.model_progress.isHidden() and desktop.state == "downloading"
    job = done.args[0]
    assert job.error is None and job.percent == 100 and "3,000,000 bytes" in job.result
    assert "downloaded at" in page.model_state.text() and page.model_progress.isHidden()
    assert "Your own model: used as it is, not checked." in page.model_state.text()
    assert page.verify_button.isEnabled() and page.remove_button.isEnabled()
    assert Path(desktop.engine.model_files().status(page._model_entry()).path).read_bytes() == blob
    with qtbot.waitSignal(desktop.jobs.finished, timeout=30_000, check_params_cb=lambda j: j.title.startswith("Remove")):
        page.remove_button.click()
    assert "not downloaded" in page.model_state.text()


# ------------------------------------------------------------------ ingest, recall, jobs


@pytest.mark.slow
def test_an_ingest_shows_progress_up_to_100_percent(make_desktop: Any, tmp_path: Path, qtbot: Any, home: Path) -> None:
    desktop = make_desktop()
    folder = write_tree(home / "notes", {f"n{i:02}.md": f"# Note {i}\n\nTopic {i} of the ingest test."
                                              for i in range(60)})
    seen: list[tuple[int | None, bool]] = []
    bars: list[int] = []

    def watch(job: Any) -> None:
        if job.kind != "ingest":
            return
        seen.append((job.percent, job.finished))
        row = desktop.window.overview.job_row(job.id)
        if row is not None:
            bars.append(row.bar.value())

    desktop.jobs.changed.connect(watch)
    with qtbot.waitSignal(desktop.jobs.finished, timeout=120_000,
                          check_params_cb=lambda job: job.kind == "ingest") as done:
        desktop.ingest_folder(str(folder), project="notes")
    job = done.args[0]
    assert job.error is None and job.result.result.files_indexed == 60
    assert job.percent == 100 and seen[-1] == (100, True)
    assert [p for p, _ in seen if p is not None and 0 < p < 100], "progress in between (24 files a batch)"
    assert bars and bars[-1] >= 80, "the Overview's bar followed the job"
    assert desktop.window.overview.job_row(job.id) is None, "a finished job leaves the list"


@pytest.mark.slow
def test_an_editors_ingest_that_fails_ends_its_job_in_the_tray(make_desktop: Any, home: Path, qtbot: Any,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                real_embedder: Any) -> None:
    desktop = make_desktop()
    folder = write_tree(home / "notes", {f"n{i:02}.md": f"# Note {i}\n\nTopic {i}." for i in range(60)})
    original = real_embedder.embed
    batches: list[int] = []

    def stops_after_one_batch(texts: Any) -> Any:
        batches.append(len(texts))
        if len(batches) > 1:
            raise ModelError("The embedding model stopped answering; restart Engram.")
        return original(texts)

    monkeypatch.setattr(real_embedder, "embed", stops_after_one_batch)
    refused: list[BaseException] = []

    def editor() -> None:  # an editor's call reaches the engine on a thread of the service, not a job's worker
        try:
            desktop.engine.call("ingest_path", {"path": str(folder), "project": "notes"})
        except ModelError as exc:
            refused.append(exc)

    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda job: job.external) as done:
        worker = threading.Thread(target=editor)
        worker.start()
    worker.join()
    job = done.args[0]
    assert refused, "the editor was told"
    assert job.finished and job.error is not None and "stopped answering" in job.error.message
    assert [j for j in desktop.jobs.running() if j.kind == "ingest"] == [], "no ingest is left running in the tray"
    assert desktop.state != "indexing" and desktop.window.overview.job_row(job.id) is None


@pytest.mark.slow
def test_an_editors_ingest_cancelled_in_the_app_is_told_as_cancelled(make_desktop: Any, home: Path, qtbot: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    desktop = make_desktop()
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(desktop, "notify", lambda title, message, **_: shown.append((title, message)))
    folder = write_tree(home / "notes", {f"n{i:02}.md": f"# Note {i}\n\nTopic {i}." for i in range(60)})
    desktop.engine.pause_indexing()  # the editor's ingest holds after its first batch
    editor = threading.Thread(target=lambda: pytest.raises(IngestCancelled, desktop.engine.call, "ingest_path",
                                                           {"path": str(folder), "project": "notes"}))
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda job: job.external) as done:
        editor.start()
        qtbot.waitUntil(lambda: bool(desktop.engine.running_ingests()), timeout=30_000)
        (ingest,) = desktop.engine.running_ingests()
        assert desktop.engine.cancel_ingest(ingest)
    editor.join()
    desktop.engine.resume_indexing()
    job = done.args[0]
    assert isinstance(job.error, IngestCancelled), "the typed event says cancelled, not a failure"
    assert shown and shown[-1][0] == "Stopped remembering a folder"


def test_memories_an_editor_stores_are_counted_once_writes_go_quiet(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    desktop._recount.setInterval(500)
    counted: list[str] = []
    desktop.status_changed.connect(counted.append)
    stores = threading.Thread(target=lambda: [desktop.engine.call("store", {"content": f"Exchange {i} of a chat."})
                                              for i in range(5)])
    with qtbot.waitSignal(desktop.status_changed, timeout=30_000,
                          check_params_cb=lambda text: text.startswith("Remembers 5 notes")):
        stores.start()
    stores.join()
    assert len(counted) < 5, f"quick writes are recounted once they pause, not once each: {counted}"


def test_home_says_in_one_sentence_what_is_remembered_and_who_uses_it(make_desktop: Any, home: Path,
                                                                       qtbot: Any) -> None:
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"engram": {"command": "engram"}}}))
    desktop = make_desktop()
    folder = write_tree(home / "ops", {"deploy.md": "# Deploy\n\nRoll back with git revert.",
                                       "backup.md": "# Backups\n\nRestic runs nightly."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    desktop.engine.call("store", {"content": "The on-call lead approves rollbacks."})
    # (the ingest's own recount may still be in flight: wait for the one that counts the note)
    with qtbot.waitSignal(desktop.status_changed, timeout=30_000, check_params_cb=lambda t: t.startswith("Remembers 2 passages from 2 files and 1 note")):
        desktop.refresh()
    settle(desktop, qtbot)
    assert desktop.window.overview.state.text() == (
        "Engram remembers 2 passages from 2 files and 1 note · 1 AI tool connected · local AI off")
    desktop.engine.call("store", {"content": "A long note " + "about deploys and rollbacks " * 20})
    with qtbot.waitSignal(desktop.status_changed, timeout=30_000, check_params_cb=lambda t: "and 2 notes" in t):
        desktop.refresh()
    desktop.show_window()
    desktop.window.resize(800, 600)
    qtbot.wait(100)
    overview = desktop.window.overview
    for view in (overview.recent, overview.results, desktop.window.ask.results):
        assert not view.horizontalScrollBar().isVisible(), f"{view.accessibleName()} scrolls sideways at 800×600"


def test_toggling_recall_llm_changes_what_a_real_recall_returns(make_desktop: Any, tmp_path: Path, qtbot: Any, home: Path) -> None:
    desktop = make_desktop()
    folder = write_tree(home / "ops", {"deploy.md": "# Deploy\n\nRoll back with git revert, then redeploy."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    overview = desktop.window.ask

    def ask() -> str:
        overview.question.setText("how do we roll back a deploy?")
        with qtbot.waitSignal(overview.recall_shown, timeout=60_000) as shown:
            overview.ask_button.click()
        return shown.args[0]

    plain = ask()
    assert "deploy.md" in plain and "recall.llm is on" not in plain
    desktop.window.settings.rows["recall.llm"].editor.setChecked(True)
    settle(desktop, qtbot)
    with_llm = ask()
    assert "note: recall.llm is on, but the helper model is not usable" in with_llm
    assert "deploy.md" in with_llm, "the deterministic evidence still comes back"
    assert "recall.llm is on" in overview.results.message.text(), "the note is shown above the cards"
    assert any("deploy.md" in card.where.text() for card in overview.results.cards)


def test_forgetting_a_file_from_its_card_asks_first_and_removes_that_file_alone(make_desktop: Any, home: Path,
                                                                                 qtbot: Any) -> None:
    desktop = make_desktop()
    folder = write_tree(home / "ops", {"deploy.md": "# Deploy\n\nRoll back a deploy with git revert.",
                                       "backup.md": "# Backups\n\nRestic runs the nightly backup."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    desktop.engine.call("store", {"content": "Deploys roll back only with the on-call lead's approval."})
    overview = desktop.window.ask
    overview.question.setText("how do we roll back a deploy?")
    with qtbot.waitSignal(overview.recall_shown, timeout=60_000):
        overview.ask_button.click()
    card = next(c for c in overview.results.cards if "deploy.md" in c.where.text())
    card.forget_button.click()
    assert overview.confirm is not None and overview.confirm.isVisible() and "deploy.md" in overview.confirm.text()
    overview.confirm.button(overview.confirm.StandardButton.Cancel).click()  # a second thought: nothing goes
    assert desktop.engine.call("list_sources", {}).result.total == 2
    card.forget_button.click()
    forget = next(b for b in overview.confirm.buttons() if b.text() == "Forget")
    with qtbot.waitSignal(overview.forgotten, timeout=30_000) as done:
        forget.click()
    assert done.args[0].startswith("Forgot ") and "deploy.md" in done.args[0]
    sources = desktop.engine.call("list_sources", {}).result
    assert [s.path for s in sources.items] == ["backup.md"], "only that file was forgotten"
    found = desktop.engine.call("search", {"query": "roll back deploy approval"}).result
    assert any("on-call lead" in h.content for h in found.hits), "the note about deploys stays"
    assert not any("git revert" in h.content for h in found.hits)


# ------------------------------------------------------------------------------ the tray


@pytest.mark.slow
def test_the_status_line_says_local_ai_is_on_only_when_its_model_can_run(
        make_desktop: Any, environ: dict[str, str], qtbot: Any) -> None:
    """The status line reads the one readiness decision: recall.llm on without its model is not "local AI on"."""
    lines = []
    for model in ("qwen3.5-4b", "smollm2-135m-instruct"):
        desktop = make_desktop(tray=False, env={**environ, "ENGRAM_RECALL_LLM": "true",
                                                "ENGRAM_HELPER_LOCAL_MODEL": model})
        with qtbot.waitSignal(desktop.status_changed, timeout=30_000) as status:
            desktop.refresh()
        lines.append(status.args[0])
    assert lines == ["Remembers nothing yet · local AI on, its model not downloaded yet",
                     "Remembers nothing yet · local AI on"]


def test_the_tray_menu_actions(make_desktop: Any, home: Path, tmp_path: Path, qtbot: Any) -> None:
    (home / ".cursor").mkdir()
    desktop = make_desktop()
    desktop.attach_tray()
    tray = desktop.tray
    assert tray is not None
    labels = [a.text() for a in tray.menu.actions() if a.text()]
    assert labels[1:] == ["Open Engram", "Connect an AI tool", "Remember a folder…", "Pause indexing",
                          "Pause watching folders", "Quit Engram"]

    with qtbot.waitSignal(desktop.status_changed, timeout=30_000) as status:
        desktop.refresh()
    assert status.args[0] == tray.status_action.text()
    assert status.args[0] == "Remembers nothing yet · local AI off"

    tray.open_action.trigger()
    assert desktop.window.isVisible()

    settle(desktop, qtbot)
    tray.editor_actions["cursor"].trigger()
    settle(desktop, qtbot)
    config = json.loads((home / ".cursor" / "mcp.json").read_text())
    assert config["mcpServers"]["engram"]["args"][-1] == "mcp"
    assert tray.editor_actions["cursor"].isChecked() and "connected" in tray.editor_actions["cursor"].text()
    assert desktop.window.editors.buttons["cursor"].text() == "Disconnect"

    tray.pause_action.trigger()
    assert desktop.engine.indexing_paused and "paused" in tray.icon.toolTip()
    folder = write_tree(home / "docs", {f"d{i}.md": f"# Doc {i}\n\nText {i}." for i in range(30)})
    tray.ingest_action.trigger()
    assert desktop.folder_dialog is not None and desktop.folder_dialog.isVisible()
    with qtbot.waitSignal(desktop.jobs.changed, timeout=60_000,
                          check_params_cb=lambda j: j.kind == "ingest" and j.done == 24):
        desktop.folder_dialog.fileSelected.emit(str(folder))
    assert desktop.state == "indexing", "held after its first batch while paused"
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest") as done:
        tray.pause_action.trigger()  # resume
    assert not desktop.engine.indexing_paused and done.args[0].result.result.files_indexed == 30
    assert desktop.state == "ready"


@pytest.mark.asyncio
async def test_quit_in_the_tray_menu_stops_the_service_and_ends_the_app(make_desktop: Any, paths: Paths) -> None:
    (paths.data_dir).mkdir(parents=True)
    (paths.data_dir / MARKER).touch()
    desktop = make_desktop(serve=True)
    serving = asyncio.get_running_loop().create_future()
    desktop.service_changed.connect(lambda note: serving.done() or serving.set_result(note))
    running = asyncio.ensure_future(desktop.run())
    assert "Serving editors at" in await asyncio.wait_for(serving, 30)
    assert read_info(paths.data_dir) is not None and desktop.tray is not None
    desktop.tray.quit_action.trigger()
    await asyncio.wait_for(running, 30)
    assert read_info(paths.data_dir) is None and not desktop.tray.icon.isVisible()


def test_a_failed_job_shows_the_error_state_until_the_window_is_opened(make_desktop: Any, tmp_path: Path,
                                                                       qtbot: Any) -> None:
    desktop = make_desktop()
    desktop.attach_tray()
    with qtbot.waitSignal(desktop.state_changed, timeout=30_000, check_params_cb=lambda s: s == "error"):
        desktop.ingest_folder(str(tmp_path / "no-such-folder"))
    assert "no-such-folder" in desktop.tray.icon.toolTip()
    desktop.show_window()
    assert desktop.state == "ready"


def test_the_first_run_welcome_connects_the_editors_found(make_desktop: Any, home: Path, paths: Paths,
                                                          qtbot: Any) -> None:
    (home / ".cursor").mkdir()
    desktop = make_desktop()
    desktop.show_welcome()
    qtbot.waitUntil(lambda: desktop.welcome is not None, timeout=10_000)  # once the editors' files were read
    welcome = desktop.welcome
    assert welcome is not None and welcome.isVisible() and list(welcome.checks) == ["cursor"]
    assert welcome.step_label.text() == "Step 1 of 3" and not welcome.connect_button.isVisible()
    welcome.next_button.click()
    assert welcome.steps.currentIndex() == 1 and welcome.folder_button.isVisible()
    welcome.next_button.click()
    local_ai = welcome.steps.currentWidget().findChild(QLabel).text()
    assert "Local AI is off" in local_ai and "2.7 GB" in local_ai and "memory" in local_ai, local_ai
    assert welcome.connect_button.isVisible() and not welcome.next_button.isVisible()
    with qtbot.waitSignal(welcome.done_with, timeout=10_000) as done:
        welcome.connect_button.click()
    settle(desktop, qtbot)
    assert "Connected Cursor" in done.args[0][0]
    assert (home / ".cursor" / "mcp.json").exists() and (paths.data_dir / MARKER).exists()
    # (a recount of memories may still be running: background reads are not what this is about)
    assert [j for j in desktop.jobs.running() if j.kind != "task"] == [], "the welcome started nothing (no download)"


# -------------------------------------------------------- the service inside the Qt loop


@pytest.mark.asyncio
@pytest.mark.slow
async def test_the_service_in_the_qt_loop_answers_mcp_while_the_window_stays_responsive(
        make_desktop: Any, paths: Paths, tmp_path: Path, home: Path) -> None:
    desktop = make_desktop(serve=True)
    await desktop.start_service()
    assert desktop.service is not None, desktop.service_note
    info = read_info(paths.data_dir)
    assert info is not None and info.pid == os.getpid() and info.url in desktop.service_note
    folder = write_tree(home / "src", {f"m{i}.py": f"def handler_{i}():\n    return {i}\n" for i in range(40)})

    lags: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    probe = QTimer()
    probe.setInterval(20)
    last = [clock.elapsed()]

    def tick() -> None:
        now = clock.elapsed()
        lags.append((now - last[0] - 20) / 1000)
        last[0] = now

    probe.timeout.connect(tick)
    probe.start()
    external: list[Any] = []
    desktop.jobs.changed.connect(lambda job: external.append(job) if job.external else None)

    token = (paths.data_dir / "service.token").read_text().strip()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(info.url, http_client=http)) as client:
        assert len((await client.list_tools()).tools) == 20
        ingest = await client.call_tool("ingest_path", {"path": str(folder), "project": "src"})
        assert not ingest.is_error, ingest.content[0].text
        for i in range(8):
            found = await client.call_tool("search", {"query": f"handler {i}"})
            assert not found.is_error and f"m{i}.py" in found.content[0].text
    probe.stop()
    assert len(lags) > 10, "the Qt loop kept ticking while the client worked"
    assert max(lags) < 1.0, f"the window froze for {max(lags):.2f} s (blocking work on the Qt thread?)"
    assert external and external[-1].finished, "an editor's ingest shows as a job in the app"
    print(f"event-loop lag under MCP load: max {max(lags) * 1000:.0f} ms over {len(lags)} ticks")
    await desktop.shutdown()
    assert read_info(paths.data_dir) is None, "service.json withdrawn at quit"


class SlowKeyring(MemoryKeyring):
    """A keyring that keeps every caller waiting 2 s, as one waiting on an unlock prompt does."""

    def get_password(self, service: str, username: str) -> str | None:
        time.sleep(2)
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        time.sleep(2)
        super().set_password(service, username, password)


@pytest.mark.asyncio
@pytest.mark.slow
async def test_slow_keyring_and_editor_files_never_stall_the_qt_loop_or_an_editors_call(
        make_desktop: Any, paths: Paths, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.app.desktop import editors

    ring = SlowKeyring()
    keyring.set_keyring(ring)
    real_state = editors.client_state

    def slow_state(client: Any, places: Places) -> str:
        if client.name == "cursor":
            time.sleep(2)  # a config file on a slow disk (a network home, a waking drive)
        return real_state(client, places)

    monkeypatch.setattr(editors, "client_state", slow_state)
    (home / ".cursor").mkdir()
    desktop = make_desktop(serve=True)
    await desktop.start_service()
    assert desktop.service is not None, desktop.service_note
    info = read_info(paths.data_dir)
    assert info is not None
    desktop.engine.call("store", {"content": "The deploy key rotates every ninety days."})
    loop = asyncio.get_running_loop()
    ready = loop.create_future()  # the start's own keyring check and editors read are done
    desktop.editors.when_loaded(lambda: desktop.jobs.submit(
        "task", "test: keyring idle", lambda _r: None, on_done=lambda _j: ready.set_result(None), lane="keyring"))
    await asyncio.wait_for(ready, 30)
    # A person opens Settings (painting a page the first time is Qt's own work on its thread: done before the
    # heartbeat starts, so what it measures is waiting) ...
    desktop.show_window()
    page = desktop.window.settings
    desktop.window.tabs.setCurrentWidget(page)
    await asyncio.sleep(0.3)

    clock = QElapsedTimer()
    clock.start()
    gaps: list[int] = []
    last = [clock.elapsed()]

    def beat() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setInterval(20)
    heartbeat.timeout.connect(beat)
    heartbeat.start()
    stored, read = loop.create_future(), loop.create_future()
    desktop.keys.state.connect(lambda text, *_: stored.done() or "Stored" in text and stored.set_result(clock.elapsed()))
    desktop.editors.changed.connect(lambda: read.done() or read.set_result(clock.elapsed()))

    # ... saves an API key and refreshes Editors ...
    page.key_provider.setCurrentText("openai")
    page.key_input.setText("sk-test-secret")
    clicked = clock.elapsed()  # the keyring's 2 s start at the click, a moment before ``asked``
    page.key_store.click()
    desktop.window.editors.refresh()
    asked = clock.elapsed()
    # ... while an editor searches through the app's service.
    token = (paths.data_dir / "service.token").read_text().strip()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(info.url, http_client=http)) as client:
        found = await client.call_tool("search", {"query": "deploy key rotation"})
    answered = clock.elapsed()
    assert not found.is_error and "ninety days" in found.content[0].text
    assert not stored.done() and not read.done(), (f"the editor was answered while the slow calls were in flight: "
                                                    f"asked {asked}, answered {answered}, stored {stored.done() and stored.result()}, "
                                                    f"read {read.done() and read.result()}")
    await asyncio.wait_for(asyncio.gather(stored, read), 30)
    heartbeat.stop()
    assert ring.items[("engram", "openai")] == "sk-test-secret"
    assert desktop.editors.states["cursor"].state in ("exists", "installed")
    assert stored.result() - clicked >= 2000, "the key was stored after the keyring's wait"
    assert max(gaps) < 250 + 20, f"the Qt loop stalled {max(gaps)} ms (gaps {sorted(gaps)[-5:]})"
    print(f"Qt loop: longest gap {max(gaps)} ms over {len(gaps)} beats; search answered after "
          f"{answered - asked} ms while the keyring and an editor file took 2 s each")
    await desktop.shutdown()


# ------------------------------------------------ single instance and signals, real processes


def test_one_instance_per_data_folder_in_process(qapp: Any, paths: Paths, qtbot: Any) -> None:
    paths.data_dir.mkdir(parents=True)
    shown: list[bool] = []
    first = InstanceServer(paths.data_dir, on_show=lambda: shown.append(True))
    assert first.listen()
    second = InstanceServer(paths.data_dir, on_show=lambda: None)
    assert not second.listen(), "a live first instance keeps the name"
    assert ask_running_instance(paths.data_dir)
    qtbot.waitUntil(lambda: bool(shown), timeout=5_000)
    first.close()
    assert not ask_running_instance(paths.data_dir)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM is POSIX")
@pytest.mark.slow
def test_the_tray_app_process_single_instance_mcp_and_sigterm(tmp_path: Path, model_file: Path, home: Path) -> None:
    data = tmp_path / "data"
    (data / "models").mkdir(parents=True)
    (data / "models" / model_file.name).write_bytes(model_file.read_bytes())
    (data / MARKER).touch()  # no welcome dialog: this test is about the process
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}, "QT_QPA_PLATFORM": "offscreen",
           "HOME": str(home), "ENGRAM_DATA_DIR": str(data), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
           "ENGRAM_LOG_DIR": str(tmp_path / "logs"), "ENGRAM_EMBED_THREADS": "2"}
    proc = subprocess.Popen([*ENGRAM, "tray"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not ((info := read_info(data)) and info.pid == proc.pid):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the tray app's service did not announce itself"
            time.sleep(0.05)
        second = subprocess.run([*ENGRAM, "tray"], env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 0 and "already running" in second.stderr
        log = tmp_path / "logs" / "tray.log"
        deadline = time.monotonic() + 10
        while "a second start asked for the window" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)

        async def tools() -> int:
            token = (data / "service.token").read_text().strip()
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
            async with Client(streamable_http_client(info.url, http_client=http)) as client:
                return len((await client.list_tools()).tools)

        assert asyncio.run(tools()) == 20
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert read_info(data) is None and "tray app stopped" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_without_a_desktop_engram_prints_help_and_tray_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    bare = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    assert cli.run([], bare) == 0
    assert "No desktop here" in capsys.readouterr().out
    assert cli.run(["tray"], bare) == 1
    assert "needs a display" in capsys.readouterr().err


def test_the_device_section_shows_what_was_detected(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    with qtbot.waitSignal(desktop.jobs.finished, timeout=30_000, check_params_cb=lambda j: j.title == "Looking for GPUs"):
        desktop.detect_gpus()
    text = desktop.window.settings.gpu_label.text()
    assert "Chosen now:" in text and "Looking" not in text
    gpus = desktop.engine.gpus()
    assert ("No GPU found" in text) == (not gpus)


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_running_headless_service_keeps_serving_and_the_window_says_so(make_desktop: Any,
                                                                               paths: Paths) -> None:
    from engram.core import Settings
    from engram.mcp.service import Service

    headless = Service(paths, Settings())
    info = headless.open()
    try:
        desktop = make_desktop(serve=True)
        await desktop.start_service()
        assert desktop.service is None
        assert "already running" in desktop.service_note and str(info.pid) in desktop.service_note
        assert read_info(paths.data_dir) == info, "the running service's announcement is untouched"
    finally:
        headless.close()


def test_without_a_system_tray_the_window_alone_runs_the_app(make_desktop: Any) -> None:
    desktop = make_desktop(tray=False)
    desktop.start()
    assert desktop.tray is None and desktop.window.isVisible()


def test_errors_are_notified_by_type(make_desktop: Any, tmp_path: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.core.errors import ModelError

    desktop = make_desktop()
    desktop.attach_tray()
    shown: list[tuple[str, str, bool, bool]] = []
    monkeypatch.setattr(desktop.tray, "notify", lambda title, message, *, error=False, warning=False, page="home":
                        shown.append((title, message, error, warning)))
    with qtbot.waitSignal(desktop.jobs.finished, timeout=30_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(tmp_path / "missing"))
    title, message, error, warning = shown[-1]
    assert (error, warning) == (False, True) and "missing" in message, "refused input is a warning"
    desktop._fail(ModelError("The helper model failed to load."))
    assert shown[-1][2:] == (True, False) and shown[-1][0] == ModelError.title, "a failure is an error"


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG autostart entry is Linux's mechanism")
def test_a_start_writes_a_missing_login_entry_but_never_deletes_one(make_desktop: Any, paths: Paths, qtbot: Any,
                                                                   environ: dict[str, str], home: Path) -> None:
    entry = home / ".config" / "autostart" / "engram.desktop"
    entry.parent.mkdir(parents=True)
    entry.write_text("[Desktop Entry]\nExec=/opt/other-engram/engram tray\n")
    desktop = make_desktop(tray=False)
    desktop.start()
    settle(desktop, qtbot)
    assert "/opt/other-engram" in entry.read_text(), "setting off: a start leaves the entry alone"
    entry.unlink()
    desktop = make_desktop(tray=False, env={**environ, "ENGRAM_DESKTOP_START_AT_LOGIN": "true"})
    desktop.start()
    settle(desktop, qtbot)
    assert entry.exists() and " tray" in entry.read_text()


def test_the_keyboard_reaches_every_page_and_a_notification_opens_its_page(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    desktop.attach_tray()
    window = desktop.window
    desktop.show_window()
    with qtbot.waitActive(window):
        window.activateWindow()
    for number, page in enumerate((window.overview, window.ask, window.memory, window.editors, window.settings),
                                  start=1):
        qtbot.keyClick(window, getattr(Qt.Key, f"Key_{number}"), Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.currentWidget() is page
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "Home", "Ask", "Memory", "AI tools", "Settings"]
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.overview and window.overview.question.hasFocus()
    # Ctrl let go: Qt keeps the last key event's modifiers as the application's, and a later test's tree
    # selection would otherwise toggle (as if Ctrl were held) instead of selecting
    qtbot.keyRelease(window, Qt.Key.Key_Control)
    desktop.notify("Download finished", "qwen3.5-4b downloaded and verified.", page="settings")
    assert desktop.tray is not None
    desktop.tray.icon.messageClicked.emit()
    assert window.tabs.currentWidget() is window.settings and window.isVisible()


def _interactive(window: Any) -> list[Any]:
    from PySide6.QtWidgets import (
        QAbstractButton,
        QAbstractItemView,
        QAbstractSlider,
        QAbstractSpinBox,
        QPlainTextEdit,
        QTabBar,
        QTextEdit,
        QWidget,
    )

    kinds = (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox, QAbstractItemView, QAbstractSlider,
             QPlainTextEdit, QTextEdit, QTabBar)
    return [w for w in window.findChildren(QWidget) if isinstance(w, kinds) and w.isVisibleTo(window)
            and w.focusPolicy() != Qt.FocusPolicy.NoFocus]


def test_every_control_of_every_page_has_an_accessible_name(make_desktop: Any, qtbot: Any) -> None:
    from PySide6.QtGui import QAccessible

    desktop = make_desktop()
    desktop.show_window()
    settle(desktop, qtbot)
    window = desktop.window
    nameless: list[str] = []
    checked = 0

    def check(where: str, top: Any) -> None:
        nonlocal checked
        for widget in _interactive(top):
            checked += 1
            face = QAccessible.queryAccessibleInterface(widget)
            name = face.text(QAccessible.Text.Name) if face is not None else ""
            if not name.strip():
                nameless.append(f"{where}: {type(widget).__name__} {widget.objectName()!r} "
                                f"{getattr(widget, 'text', lambda: '')()!r} tooltip {widget.toolTip()!r}")

    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        qtbot.wait(50)
        if window.tabs.widget(index) is window.ask:  # both of Ask's tabs: chat and recall
            for mode in range(window.ask.mode.count()):
                window.ask.mode.setCurrentIndex(mode)
                qtbot.wait(50)
                check(f"Ask › {window.ask.mode.tabText(mode)}", window)
        else:
            check(window.tabs.tabText(index), window)
    desktop.show_welcome()
    for step in range(3):  # the first run's steps
        desktop.welcome.go(step)
        qtbot.wait(50)
        check(f"Welcome step {step + 1}", desktop.welcome)
    desktop.welcome.reject()
    assert checked > 40, f"only {checked} controls were found to check"
    assert not nameless, "controls a screen reader cannot name:\n" + "\n".join(nameless)
