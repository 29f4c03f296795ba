"""The engram command as a newcomer runs it: the real model and a real data folder; most commands through the CLI's
entry function in this process, the first and the last test as real `engram` processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import cli_in_process, write_tree

DOC = "# Deploy\n\nWe deploy with systemd units on the home server.\n\n## Rollback\n\nKeep the previous release around.\n"


@pytest.fixture
def env(tmp_path: Path, model_file: Path) -> dict[str, str]:
    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    shutil.copy(model_file, models / model_file.name)  # skip the one-off conversion in every test
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
            "ENGRAM_EMBED_THREADS": "2"}


def engram_process(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engram.app", *args], env=env, capture_output=True, text=True,
                          input=stdin, timeout=300)


def engram(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return cli_in_process(env, *args, stdin=stdin)


@pytest.mark.slow
def test_ingest_then_search_prints_cited_results(env: dict[str, str], tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ops", {"deploy.md": DOC, "notes.txt": "Unrelated grocery list: apples, bread."})
    ingest = engram_process(env, "ingest", str(root), "--project", "ops")
    assert ingest.returncode == 0, ingest.stderr
    assert ingest.stdout.startswith(f"ingested {root.resolve().as_posix()} into default/ops: 2 files indexed")
    assert "ingest: 2/2 files" in ingest.stderr  # plain progress lines when stderr is not a terminal
    search = engram_process(env, "search", "how do we go back to the previous release", "--limit", "2")
    assert search.returncode == 0, search.stderr
    first = search.stdout.splitlines()[0]
    assert first.startswith("[1] ") and "deploy.md:" in first and " · ops · " in first
    assert search.stdout.rstrip().splitlines()[-1].startswith("— ")


def test_json_output_is_one_document(env: dict[str, str]) -> None:
    stored = engram(env, "remember", "Prefer tabs over spaces", "--type", "preference", "--tag", "style", "--json")
    assert stored.returncode == 0, stored.stderr
    doc = json.loads(stored.stdout)
    assert doc["tool"] == "store" and doc["result"]["kind"] == "note" and doc["chars"] == len(doc["text"])
    found = json.loads(engram(env, "search", "tabs or spaces", "--json").stdout)
    hit = found["result"]["hits"][0]
    assert hit["id"] == doc["result"]["id"] and hit["tags"] == ["style", "kind:note"] and hit["channels"]
    assert isinstance(hit["score"], float) and found["chars"] == len(found["text"])


def test_ingest_text_reads_standard_input(env: dict[str, str]) -> None:
    out = engram(env, "ingest-text", "meeting 12 nov", stdin="We agreed to ship on Friday.")
    assert out.returncode == 0, out.stderr
    assert engram(env, "summary", "content:meeting 12 nov").stdout.startswith("content:meeting 12 nov · general")


def test_config_commands_round_trip(env: dict[str, str]) -> None:
    assert engram(env, "config", "set", "search.limit", "7").returncode == 0
    assert engram(env, "config", "get", "search.limit").stdout.strip() == "7"
    listing = json.loads(engram(env, "config", "list", "--json").stdout)
    row = next(r for r in listing["settings"] if r["key"] == "search.limit")
    assert (row["value"], row["origin"], row["accepts"]) == (7, "file", "an integer from 1 to 50")
    assert engram({**env, "ENGRAM_SEARCH_LIMIT": "9"}, "config", "get", "search.limit").stdout.strip() == "9"
    assert engram(env, "config", "reset", "search.limit").returncode == 0
    assert engram(env, "config", "get", "search.limit").stdout.strip() == "10"


HAND_WRITTEN_SETTINGS = """\
# Engram settings, tuned by hand.

[search]
# fewer, shorter results on this laptop
max_chars = 3000
limit = 5  # the default is 10

# Embedding: two threads, the fan is loud
[embed]
threads = 2

[helper.local]
n_ctx = 4096
"""


def test_config_set_and_reset_keep_the_files_comments_and_order(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
           "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config")}
    file = tmp_path / "config" / "settings.toml"
    file.parent.mkdir()
    file.write_text(HAND_WRITTEN_SETTINGS, encoding="utf-8")

    def config(*args: str) -> str:
        done = engram(env, "config", *args)
        assert done.returncode == 0, done.stderr
        return file.read_text(encoding="utf-8")

    assert config("set", "search.limit", "7") == HAND_WRITTEN_SETTINGS.replace("limit = 5 ", "limit = 7 ")
    # A new key goes to the end of its table's keys, before the blank line and the comment about the next table.
    assert config("set", "search.rrf_k", "50") == HAND_WRITTEN_SETTINGS.replace(
        "limit = 5  # the default is 10\n", "limit = 7  # the default is 10\nrrf_k = 50\n")
    assert config("reset", "search.rrf_k") == HAND_WRITTEN_SETTINGS.replace("limit = 5 ", "limit = 7 ")
    assert config("set", "helper.local.model", "smollm2-135m-instruct") == HAND_WRITTEN_SETTINGS.replace(
        "limit = 5 ", "limit = 7 ") + 'model = "smollm2-135m-instruct"\n'
    assert config("set", "ingest.exclude", "*.log,tmp/") == HAND_WRITTEN_SETTINGS.replace(
        "limit = 5 ", "limit = 7 ") + 'model = "smollm2-135m-instruct"\n\n[ingest]\nexclude = ["*.log", "tmp/"]\n'
    # The blank line before a table belongs to the one above it in TOML: it stays when the table goes.
    assert config("reset", "ingest.exclude") == HAND_WRITTEN_SETTINGS.replace(
        "limit = 5 ", "limit = 7 ") + 'model = "smollm2-135m-instruct"\n\n'
    # A table left without keys goes; the comments the user wrote stay.
    assert config("reset", "embed.threads") == HAND_WRITTEN_SETTINGS.replace("limit = 5 ", "limit = 7 ").replace(
        "[embed]\nthreads = 2\n\n", "") + 'model = "smollm2-135m-instruct"\n\n'
    assert engram(env, "config", "get", "search.max_chars").stdout.strip() == "3000"
    assert config("reset", "--all") == ""


def test_refused_input_exits_2_with_a_message_and_changes_nothing(env: dict[str, str], tmp_path: Path) -> None:
    bad = engram(env, "config", "set", "search.limit", "0")
    assert bad.returncode == 2
    assert bad.stderr.startswith("engram: Invalid setting: Setting 'search.limit'")
    assert "an integer from 1 to 50" in bad.stderr
    assert not (tmp_path / "config" / "settings.toml").exists()
    limit = engram(env, "search", "x", "--limit", "99")
    assert limit.returncode == 2 and "argument 'limit' got '99'" in limit.stderr
    env_typo = engram({**env, "ENGRAM_SEARCH_LIMT": "3"}, "status")
    assert env_typo.returncode == 2 and "ENGRAM_SEARCH_LIMT names no setting" in env_typo.stderr


def test_failures_exit_1_with_the_error_title(env: dict[str, str], tmp_path: Path) -> None:
    missing = engram(env, "ingest", str(tmp_path / "nowhere"))
    assert missing.returncode == 1
    assert missing.stderr.startswith("engram: Cannot ingest: ") and "does not exist" in missing.stderr
    unknown = engram(env, "get", "123456789abc")
    assert unknown.returncode == 1 and "No memory with id 123456789abc" in unknown.stderr


@pytest.mark.slow
def test_version_and_help(env: dict[str, str]) -> None:
    assert engram_process(env, "--version").stdout.strip() == "engram 0.1.0"
    helptext = engram_process(env, "--help").stdout
    for command in ("ingest", "search", "remember", "status", "config"):
        assert command in helptext


def test_a_forgotten_file_stays_out_until_ingest_again_names_it(env: dict[str, str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path / "ops", {"deploy.md": DOC, "notes.txt": "Unrelated grocery list: apples, bread."})
    assert engram(env, "ingest", str(root)).returncode == 0
    forgot = engram(env, "delete", "--source", "deploy.md")
    assert forgot.returncode == 0 and "it stays out when its folder is ingested again" in forgot.stdout
    again = engram(env, "ingest", str(root))
    assert "0 files indexed" in again.stdout and "1 skipped" in again.stdout and "forgotten earlier" in again.stdout
    monkeypatch.chdir(root)
    back = engram(env, "ingest", ".", "--again", "deploy.md")  # relative to where the command runs
    assert back.returncode == 0 and "1 files indexed" in back.stdout, back.stdout + back.stderr
    plain = engram(env, "delete", "--source", "deploy.md", "--no-keep-out")
    assert plain.returncode == 0 and "stays out" not in plain.stdout
    assert "1 files indexed" in engram(env, "ingest", str(root)).stdout
