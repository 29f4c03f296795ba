"""Settings: defaults < file < environment, clear refusals, no files created by loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.core.errors import SettingsError
from engram.core.paths import Paths
from engram.core.settings import Settings, describe_key, setting_keys
from engram.core.settings_file import env_name, load_settings, reset_value, set_value


def test_defaults_apply_without_file_or_environment(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path / "settings.toml", {})
    assert loaded.settings == Settings()
    assert set(loaded.origins.values()) == {"default"}
    assert {"store", "embed", "ingest", "search", "recall", "service"} <= {k.split(".")[0] for k in setting_keys()}


def test_loading_creates_no_files_or_folders(tmp_path: Path) -> None:
    paths = Paths.from_environ({"ENGRAM_DATA_DIR": str(tmp_path / "d"), "ENGRAM_CONFIG_DIR": str(tmp_path / "c")})
    load_settings(paths.settings_file, {"ENGRAM_SEARCH_LIMIT": "7"})
    assert list(tmp_path.iterdir()) == []


def test_environment_beats_file_beats_default(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    file.write_text("[search]\nlimit = 20\nmax_chars = 5000\n")
    loaded = load_settings(file, {"ENGRAM_SEARCH_LIMIT": "30"})
    assert loaded.settings.search.limit == 30
    assert loaded.settings.search.max_chars == 5000
    assert loaded.settings.search.rrf_k == 60
    assert (loaded.origins["search.limit"], loaded.origins["search.max_chars"],
            loaded.origins["search.rrf_k"]) == ("env", "file", "default")


def test_environment_values_are_converted_by_type(tmp_path: Path) -> None:
    env = {"ENGRAM_SEARCH_GRAPH_REVERSE": "true", "ENGRAM_SEARCH_WEIGHT_GRAPH": "0.25",
           "ENGRAM_INGEST_EXCLUDE": "*.log, tmp/", "ENGRAM_STORE_DEFAULT_WORKSPACE": "work"}
    s = load_settings(tmp_path / "none.toml", env).settings
    assert s.search.graph_reverse is True
    assert s.search.weight_graph == 0.25
    assert s.ingest.exclude == ["*.log", "tmp/"]
    assert s.store.default_workspace == "work"


def test_env_name_follows_engram_group_key() -> None:
    assert env_name("recall.max_chars") == "ENGRAM_RECALL_MAX_CHARS"


def test_bad_environment_value_names_the_variable_and_what_it_accepts(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as err:
        load_settings(tmp_path / "none.toml", {"ENGRAM_SEARCH_LIMIT": "500"})
    assert "search.limit" in err.value.message
    assert "ENGRAM_SEARCH_LIMIT" in err.value.message
    assert "an integer from 1 to 50" in err.value.message


def test_misspelt_environment_variable_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="ENGRAM_SEARCH_LIMT names no setting"):
        load_settings(tmp_path / "none.toml", {"ENGRAM_SEARCH_LIMT": "5"})


def test_unrelated_engram_variables_are_not_settings(tmp_path: Path) -> None:
    load_settings(tmp_path / "none.toml", {"ENGRAM_DATA_DIR": "/x", "ENGRAM_CONFIG_DIR": "/y"})


def test_unknown_key_in_file_is_refused_with_the_known_keys(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    file.write_text("[search]\nlimitt = 3\n")
    with pytest.raises(SettingsError) as err:
        load_settings(file, {})
    assert "search.limitt" in err.value.message and "search.limit," in err.value.message


def test_file_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    file.write_text("[search\nlimit=")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(file, {})


@pytest.mark.parametrize("content", ["[search\nlimit=", "[nosuch]\nx = 1\n", "[search]\nlimit = -3\n",
                                     '[tagger]\nllm_provider = "bogus"\n', "\xff\xfe not utf-8"])
def test_reset_all_recovers_a_file_that_cannot_be_loaded(tmp_path: Path, content: str) -> None:
    """Every refusal of a file says `engram config reset --all` writes a fresh one: it must, whatever is in it."""
    file = tmp_path / "settings.toml"
    file.write_bytes(content.encode("latin-1"))
    with pytest.raises(SettingsError):
        load_settings(file, {})
    reset_value(file, None)
    assert load_settings(file, {}).settings == Settings()
    reset_value(tmp_path / "absent.toml", None)
    assert not (tmp_path / "absent.toml").exists(), "resetting no file writes none"


def test_set_validates_then_writes_and_reset_removes(tmp_path: Path) -> None:
    file = tmp_path / "cfg" / "settings.toml"
    assert set_value(file, "search.limit", "15") == 15
    assert set_value(file, "ingest.exclude", '["*.tmp", "cache/"]') == ["*.tmp", "cache/"]
    loaded = load_settings(file, {})
    assert loaded.settings.search.limit == 15 and loaded.origins["search.limit"] == "file"
    reset_value(file, "search.limit")
    assert load_settings(file, {}).settings.search.limit == 10
    reset_value(file, None)
    assert load_settings(file, {}).settings == Settings()


def test_refused_set_leaves_the_file_untouched(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    set_value(file, "search.limit", "15")
    before = file.read_bytes()
    for key, value in [("search.limit", "0"), ("search.limit", "many"), ("store.default_workspace", "Bad Name"),
                       ("search.nope", "1"), ("nogroup", "1"), ("search.graph_reverse", "maybe")]:
        with pytest.raises(SettingsError) as err:
            set_value(file, key, value)
        assert key in err.value.message
    assert file.read_bytes() == before


def test_nested_groups_work_in_the_file_the_environment_and_set(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    assert set_value(file, "helper.local.n_ctx", "4096") == 4096
    assert "[helper.local]" in file.read_text()
    loaded = load_settings(file, {"ENGRAM_HELPER_LOCAL_MODEL": "smollm2-135m-instruct", "ENGRAM_RECALL_LLM": "true"})
    assert loaded.settings.helper.local.n_ctx == 4096 and loaded.origins["helper.local.n_ctx"] == "file"
    assert loaded.settings.helper.local.model == "smollm2-135m-instruct" and loaded.settings.recall.llm is True
    assert loaded.value("helper.local.model") == "smollm2-135m-instruct"
    with pytest.raises(SettingsError, match="helper.local.n_ctx"):
        set_value(file, "helper.local.n_ctx", "10")
    with pytest.raises(SettingsError, match="Unknown setting 'helper.local'"):
        set_value(file, "helper.local", "x")
    with pytest.raises(SettingsError, match="ENGRAM_HELPER_LOCAL_MODLE names no setting"):
        load_settings(file, {"ENGRAM_HELPER_LOCAL_MODLE": "x"})
    reset_value(file, "helper.local.n_ctx")
    assert "[helper" not in file.read_text()


def test_a_new_key_joins_its_table_where_the_file_splits_a_group(tmp_path: Path) -> None:
    file = tmp_path / "settings.toml"
    text = '[helper]\nprovider = "ollama"\n\n# searching\n[search]\nlimit = 5\n\n[helper.local]\nn_ctx = 4096\n'
    file.write_text(text)
    set_value(file, "helper.remote_model", "m")
    set_value(file, "helper.local.threads", "2")
    written = text.replace('provider = "ollama"\n', 'provider = "ollama"\nremote_model = "m"\n') + "threads = 2\n"
    assert file.read_text() == written
    reset_value(file, "search.max_chars")  # not in the file: nothing changes
    assert file.read_text() == written
    loaded = load_settings(file, {}).settings.helper
    assert (loaded.provider, loaded.remote_model, loaded.local.n_ctx, loaded.local.threads) == ("ollama", "m", 4096, 2)


def test_the_helper_reads_256_prompt_tokens_a_step_on_4_threads_by_default(tmp_path: Path) -> None:
    assert describe_key("helper.local.batch") == {
        "description": "Prompt tokens the helper model reads in one step (llama.cpp's n_batch and n_ubatch); larger "
                       "reads long prompts faster on a GPU and needs more memory.",
        "default": 256, "accepts": "an integer from 16 to 8192"}
    assert describe_key("helper.local.threads")["default"] == 4
    file = tmp_path / "settings.toml"
    set_value(file, "helper.local.batch", "512")
    assert load_settings(file, {"ENGRAM_HELPER_LOCAL_THREADS": "0"}).settings.helper.local.model_dump(
        include={"batch", "threads"}) == {"batch": 512, "threads": 0}
    with pytest.raises(SettingsError, match="helper.local.batch"):
        set_value(file, "helper.local.batch", "8")
