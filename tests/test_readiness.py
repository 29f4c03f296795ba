"""Whether a model can run is decided once (``core/models/readiness.py``): status, recall's gate and the desktop
read the same answer, for the helper and the chat model alike."""

from __future__ import annotations

from pathlib import Path

from engram.core import Paths, Settings
from engram.core.models.readiness import readiness
from engram.core.models.state import inference_state


def _settings(**groups: dict[str, object]) -> Settings:
    return Settings.model_validate(groups)


def test_a_packaged_model_is_ready_and_a_pinned_one_not_downloaded_needs_a_download(paths: Paths) -> None:
    here = readiness(_settings(helper={"local": {"model": "smollm2-135m-instruct"}}), paths)
    assert here.ready and here.entry is not None and here.entry.id == "smollm2-135m-instruct"
    assert here.sentence() == "smollm2-135m-instruct on this computer"
    missing = readiness(_settings(helper={"local": {"model": "qwen3.5-4b"}}), paths)
    assert not missing.ready and missing.needs_download
    assert missing.problem == "qwen3.5-4b is not on this computer (`engram models download qwen3.5-4b`)"


def test_a_model_path_that_is_gone_or_a_name_that_is_no_model_cannot_run_and_no_download_helps(
        paths: Paths, tmp_path: Path) -> None:
    gone = readiness(_settings(helper={"local": {"model": str(tmp_path / "gone.gguf")}}), paths)
    assert not gone.ready and not gone.needs_download and "gone.gguf does not exist" in gone.problem
    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    mine = readiness(_settings(helper={"local": {"model": str(tmp_path / "mine.gguf")}}), paths)
    assert mine.ready and mine.entry is not None and mine.entry.local_path == str((tmp_path / "mine.gguf").resolve())
    nothing = readiness(_settings(helper={"local": {"model": "not-a-model"}}), paths)
    assert not nothing.ready and nothing.problem.startswith("'not-a-model' names no model")


def test_a_server_is_taken_as_ready_and_says_whether_it_is_on_this_computer(paths: Paths) -> None:
    loopback = readiness(_settings(helper={"provider": "ollama", "remote_model": "qwen3:4b"}), paths)
    assert loopback.ready and loopback.where.on_this_computer and loopback.entry is None
    assert loopback.sentence() == "qwen3:4b via ollama at http://127.0.0.1:11434"
    cloud = readiness(_settings(helper={"provider": "openai"}), paths)
    assert cloud.ready and not cloud.where.on_this_computer


def test_the_chat_model_is_read_from_the_chat_settings_not_the_helpers(paths: Paths) -> None:
    settings = _settings(helper={"local": {"model": "smollm2-135m-instruct"}},
                         chat={"provider": "local", "local_model": "qwen3.5-4b"})
    assert readiness(settings, paths).ready
    chat = readiness(settings, paths, "chat")
    assert chat.needs_download and chat.entry is not None and chat.entry.id == "qwen3.5-4b"
    remote = readiness(_settings(chat={"provider": "vllm", "base_url": "http://10.0.0.5:8000/v1",
                                       "remote_model": "m"}), paths, "chat")
    assert remote.ready and not remote.where.on_this_computer and remote.where.url == "http://10.0.0.5:8000/v1"


def test_status_says_what_readiness_decides(paths: Paths) -> None:
    on = {"recall": {"llm": True}}
    assert inference_state(_settings(**on, helper={"local": {"model": "qwen3.5-4b"}}), paths) == (
        "off: qwen3.5-4b is not on this computer (`engram models download qwen3.5-4b`)")
    assert inference_state(_settings(**on, helper={"local": {"model": "smollm2-135m-instruct"}}), paths).startswith(
        "on: smollm2-135m-instruct on this computer (")
    assert inference_state(_settings(**on, helper={"provider": "anthropic"}), paths) == (
        "off: the helper model runs on anthropic at https://api.anthropic.com, not on this computer")
    assert inference_state(_settings(helper={"local": {"model": "smollm2-135m-instruct"}}), paths) == (
        "off (recall.llm is false)")
