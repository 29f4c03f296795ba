"""Old settings files and variables (the helper model's settings under ``tagger.*``) read as ``helper.*``: a
file is rewritten once with the new names, its comments kept."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from engram.core.errors import SettingsError
from engram.core.settings_file import load_settings, reset_value, set_value

TURN2 = Path(__file__).parent / "fixtures" / "settings-turn2.toml"


@pytest.fixture
def turn2_file(tmp_path: Path) -> Path:
    file = tmp_path / "settings.toml"
    shutil.copy(TURN2, file)
    return file


def test_a_turn2_settings_file_is_read_as_helper_settings(turn2_file: Path) -> None:
    loaded = load_settings(turn2_file, {})
    helper, tagger = loaded.settings.helper, loaded.settings.tagger
    assert (helper.provider, helper.base_url, helper.remote_model) == ("ollama", "http://127.0.0.1:11434", "qwen3:4b")
    assert helper.local.model_dump() == {"model": "smollm2-135m-instruct", "n_ctx": 4096, "n_gpu_layers": 0,
                                         "threads": 2, "batch": 128}
    assert (tagger.llm, tagger.llm_concurrency, loaded.settings.search.limit) == (True, 2, 20)
    assert loaded.origins["helper.local.n_ctx"] == "file" and loaded.origins["helper.provider"] == "file"


def test_a_turn2_file_is_rewritten_once_with_new_names_and_its_comments(turn2_file: Path) -> None:
    load_settings(turn2_file, {})
    assert turn2_file.read_text(encoding="utf-8") == """\
# Engram settings, as written by hand in the turn-2 era (before the helper.* group).
# The helper model's settings lived under [tagger] and [tagger.local].

[search]
limit = 20  # more results than the default

[helper]
# An ollama server on the desktop in the other room.
provider = "ollama"
base_url = "http://127.0.0.1:11434"  # loopback: recall may use it
remote_model = "qwen3:4b"

# Tagging new memories, and where the helper model runs.
[tagger]
llm = true
llm_concurrency = 2

# The helper model when it runs here (llm_provider = "local").
[helper.local]
model = "smollm2-135m-instruct"  # small, for a laptop
n_ctx = 4096
# No GPU on this laptop.
n_gpu_layers = 0
threads = 2
batch = 128

[recall]
llm = true
"""
    migrated = turn2_file.read_bytes()
    load_settings(turn2_file, {})
    assert turn2_file.read_bytes() == migrated, "a second load changes nothing"


def test_setting_a_value_in_a_turn2_file_renames_its_old_keys_too(turn2_file: Path) -> None:
    set_value(turn2_file, "helper.local.threads", "3")
    text = turn2_file.read_text(encoding="utf-8")
    assert "threads = 3\n" in text and "\n[tagger.local]\n" not in text and "\nllm_provider =" not in text
    reset_value(turn2_file, "helper.local.batch")
    assert load_settings(turn2_file, {}).settings.helper.local.model_dump(include={"threads", "batch"}) == {
        "threads": 3, "batch": 256}


def test_where_a_file_sets_an_old_key_and_its_new_one_the_new_one_wins(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    file.write_text('[helper.local]\nn_ctx = 2048\n\n[tagger.local]\nn_ctx = 4096\nthreads = 3\n'
                    '\n[tagger]\nllm_provider = "vllm"\nllm = true\n', encoding="utf-8")
    helper = load_settings(file, {}).settings.helper
    assert (helper.local.n_ctx, helper.local.threads, helper.provider) == (2048, 3, "vllm")
    text = file.read_text(encoding="utf-8")
    assert "tagger.local" not in text and "llm_provider" not in text and "llm = true" in text
    assert load_settings(file, {}).settings.helper == helper


def test_old_environment_variables_are_read_as_their_new_names(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        loaded = load_settings(tmp_path / "none.toml", {"ENGRAM_TAGGER_LOCAL_MODEL": "smollm2-135m-instruct",
                                                        "ENGRAM_TAGGER_LLM_PROVIDER": "ollama",
                                                        "ENGRAM_TAGGER_LOCAL_N_CTX": "4096",
                                                        "ENGRAM_HELPER_LOCAL_N_CTX": "2048"})
    helper = loaded.settings.helper
    assert (helper.local.model, helper.provider, helper.local.n_ctx) == ("smollm2-135m-instruct", "ollama", 2048)
    assert loaded.origins["helper.local.model"] == "env"
    assert "ENGRAM_TAGGER_LOCAL_MODEL is read as ENGRAM_HELPER_LOCAL_MODEL" in caplog.text
    assert "ENGRAM_TAGGER_LOCAL_N_CTX is ignored" in caplog.text
    assert not (tmp_path / "none.toml").exists(), "loading creates no file"


def test_a_file_that_is_invalid_once_renamed_is_left_alone_with_the_reason(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    text = "# mine\n[tagger.local]\nn_ctx = 10\n"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError) as err:
        load_settings(file, {})
    assert "helper.local.n_ctx" in err.value.message and "left as it was" in err.value.message
    assert "renamed 'tagger.local.n_ctx' to 'helper.local.n_ctx'" in err.value.message
    assert file.read_text(encoding="utf-8") == text


def test_a_file_that_is_not_toml_is_left_alone(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    file.write_text("[tagger.local\nmodel = 1\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(file, {})
    assert file.read_text(encoding="utf-8") == "[tagger.local\nmodel = 1\n"


def test_setting_an_old_name_says_its_new_one(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    with pytest.raises(SettingsError, match="Unknown setting 'tagger.local.model': it is now 'helper.local.model'"):
        set_value(file, "tagger.local.model", "x")
    with pytest.raises(SettingsError, match="it is now 'helper.provider'"):
        reset_value(file, "tagger.llm_provider")
    assert not file.exists()
