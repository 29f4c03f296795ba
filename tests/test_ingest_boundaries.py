"""What ingest may read: Engram never ingests its own folders, and only folders under ingest.allowed_roots."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from engram.core import Engine, Paths, Settings
from engram.core.errors import IngestError, InvalidArgument

from .conftest import ENGRAM, HashingEmbedder, write_tree

pytestmark = pytest.mark.anyio


@pytest.fixture
def home_engine(home: Path) -> Iterator[Engine]:
    """An engine whose folders lie where a user's do: inside the home folder."""
    paths = Paths(data_dir=home / ".local/share/engram", config_dir=home / ".config/engram",
                  log_dir=home / ".local/state/engram/log")
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        yield engine


def sources(engine: Engine) -> list[str]:
    return [s.source for s in engine.call("list_sources", {"limit": 200}).result.items]


def test_ingesting_the_home_folder_leaves_out_engrams_own_folders(home_engine: Engine, home: Path) -> None:
    home_engine.call("store", {"content": "a note, so the data folder exists"})
    paths = home_engine.paths
    (paths.data_dir / "service.token").write_text("secret-token-value")
    write_tree(paths.config_dir, {"settings.toml": "[search]\nlimit = 7\n"})
    write_tree(paths.log_dir, {"service.log": "INFO serving MCP"})
    write_tree(home, {"notes/plan.md": "# Plan\n\nShip it on Friday.", ".bashrc": "export X=1\n"})
    out = home_engine.call("ingest_path", {"path": "~"}).result
    found = sources(home_engine)
    assert found == sorted([(home / ".bashrc").as_posix(), (home / "notes/plan.md").as_posix()])
    skipped = {Path(s.path): s.reason for s in out.skipped}
    assert skipped[paths.data_dir] == skipped[paths.config_dir] == "Engram's own folder (never ingested)"
    hits = home_engine.call("search", {"query": "secret token value", "channels": ["lexical"]}).result.hits
    assert all("secret-token-value" not in h.content for h in hits)


def test_a_link_that_leads_into_engrams_folders_is_left_out(home_engine: Engine, home: Path) -> None:
    home_engine.call("store", {"content": "a note"})
    (home_engine.paths.data_dir / "service.token").write_text("secret-token-value")
    project = write_tree(home / "project", {"readme.md": "# Readme\n\nhello"})
    (project / "token.txt").symlink_to(home_engine.paths.data_dir / "service.token")
    (project / "data").symlink_to(home_engine.paths.data_dir, target_is_directory=True)
    home_engine.call("ingest_path", {"path": str(home)})
    assert sources(home_engine) == [(project / "readme.md").as_posix()]


@pytest.mark.parametrize("inside", ["", "workspaces", "../../../.config/engram"])
def test_engrams_own_folders_cannot_be_ingested(home_engine: Engine, inside: str) -> None:
    home_engine.call("store", {"content": "a note"})
    home_engine.paths.config_dir.mkdir(parents=True, exist_ok=True)
    target = home_engine.paths.data_dir / inside if inside else home_engine.paths.data_dir
    with pytest.raises(IngestError, match="Engram never ingests its own files"):
        home_engine.call("ingest_path", {"path": str(target)})
    assert sources(home_engine) == []


def test_folders_outside_the_allowed_roots_are_refused_with_the_way_to_allow_them(
        home_engine: Engine, tmp_path: Path) -> None:
    home_engine.settings.ingest.allowed_roots = [str(tmp_path / "allowed")]
    elsewhere = write_tree(tmp_path / "elsewhere", {"a.md": "# A\n\ntext"})
    write_tree(tmp_path / "allowed", {"b.md": "# B\n\ntext"})
    (tmp_path / "allowed" / "escape").symlink_to(elsewhere, target_is_directory=True)
    for path in (elsewhere, Path("/"), tmp_path / "allowed" / "escape", tmp_path / "allowed" / ".." / "elsewhere"):
        with pytest.raises(IngestError, match=r"outside the folders Engram may ingest \(ingest.allowed_roots: "):
            home_engine.call("ingest_path", {"path": str(path)})
    assert home_engine.call("ingest_path", {"path": str(tmp_path / "allowed")}).result.files_indexed == 1


def test_a_relative_path_is_refused_by_the_engine(home_engine: Engine, home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(home, {"docs/a.md": "# A\n\ntext"})
    monkeypatch.chdir(home)  # even where it would resolve: the service's folder is not its caller's
    with pytest.raises(InvalidArgument, match="needs an absolute path; 'docs' is relative"):
        home_engine.call("ingest_path", {"path": "docs"})


@pytest.mark.slow
def test_the_cli_resolves_a_relative_path_against_its_own_folder(home: Path, env: dict[str, str]) -> None:
    write_tree(home, {"proj/docs/a.md": "# Alpha\n\nThe alpha document."})
    done = subprocess.run([*ENGRAM, "ingest", "docs", "--json"], env=env, cwd=home / "proj", capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f'"root": "{(home / "proj/docs").as_posix()}"' in done.stdout


@pytest.mark.slow
async def test_the_stdio_launcher_resolves_relative_paths_against_its_callers_folder(
        home: Path, env: dict[str, str]) -> None:
    write_tree(home, {"proj/docs/a.md": "# Alpha\n\nThe alpha document."})
    params = StdioServerParameters(command=ENGRAM[0], args=[*ENGRAM[1:], "mcp", "--standalone"], env=env,
                                   cwd=str(home / "proj"))
    async with Client(params, mode="legacy") as client:
        done = await client.call_tool("ingest_path", {"path": "docs"})
    assert not done.is_error, done.content[0].text
    assert (home / "proj/docs").as_posix() in done.content[0].text and "1 files indexed" in done.content[0].text
