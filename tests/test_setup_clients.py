"""Editor setup: each client's documented config entry, merged without clobbering, backed up, undoable."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from engram.mcp.setup_clients import CLIENTS, Places, SetupError, configure

GOLDEN = Path(__file__).parent / "golden" / "setup"
COMMAND = ["/opt/engram/bin/engram", "mcp"]
NOW = datetime(2026, 11, 29, 12, 0, 0)


def places(tmp_path: Path, platform: str = "linux") -> Places:
    return Places(home=tmp_path / "home", appdata=tmp_path / "appdata", platform=platform,
                  codex_home=tmp_path / "home" / ".codex")


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ENGRAM_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_fresh_config_gets_the_documented_entry(tmp_path: Path, client: str) -> None:
    result = configure(CLIENTS[client], places(tmp_path), command=COMMAND, env={}, now=NOW)
    assert result.changed and result.backup is None
    check(f"{client}.{'toml' if CLIENTS[client].toml else 'json'}", result.path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("client", "platform", "expected"), [
    ("claude-desktop", "darwin", "home/Library/Application Support/Claude/claude_desktop_config.json"),
    ("claude-desktop", "win32", "appdata/Claude/claude_desktop_config.json"),
    ("claude-desktop", "linux", "home/.config/Claude/claude_desktop_config.json"),
    ("vscode", "darwin", "home/Library/Application Support/Code/User/mcp.json"),
    ("vscode", "win32", "appdata/Code/User/mcp.json"),
    ("claude-code", "win32", "home/.claude.json"),
    ("cursor", "linux", "home/.cursor/mcp.json"),
    ("windsurf", "linux", "home/.codeium/windsurf/mcp_config.json"),
    ("codex", "linux", "home/.codex/config.toml"),
])
def test_config_files_live_where_each_client_documents(tmp_path: Path, client: str, platform: str,
                                                       expected: str) -> None:
    assert CLIENTS[client].path(places(tmp_path, platform)) == tmp_path / expected


def test_other_servers_and_settings_are_kept_and_a_backup_is_made(tmp_path: Path) -> None:
    p = places(tmp_path)
    path = CLIENTS["claude-code"].path(p)
    path.parent.mkdir(parents=True)
    original = {"numStartups": 12, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}},
                "projects": {"/x": {"allowedTools": []}}}
    path.write_text(json.dumps(original))
    result = configure(CLIENTS["claude-code"], p, command=COMMAND, env={"ENGRAM_DATA_DIR": "/data"}, now=NOW)
    data = json.loads(path.read_text())
    assert data["numStartups"] == 12 and data["projects"] == original["projects"]
    assert data["mcpServers"]["github"] == original["mcpServers"]["github"]
    assert data["mcpServers"]["engram"] == {"type": "stdio", "command": COMMAND[0], "args": ["mcp"],
                                           "env": {"ENGRAM_DATA_DIR": "/data"}}
    assert result.backup == path.with_name(".claude.json.engram-backup-20261129-120000")
    assert json.loads(result.backup.read_text()) == original


def test_a_rerun_changes_nothing_and_makes_no_backup(tmp_path: Path) -> None:
    p = places(tmp_path)
    configure(CLIENTS["cursor"], p, command=COMMAND, env={}, now=NOW)
    before = CLIENTS["cursor"].path(p).read_bytes()
    again = configure(CLIENTS["cursor"], p, command=COMMAND, env={}, now=NOW)
    assert not again.changed and again.backup is None and again.diff == ""
    assert CLIENTS["cursor"].path(p).read_bytes() == before
    assert len(list(CLIENTS["cursor"].path(p).parent.iterdir())) == 1


def test_remove_takes_out_only_the_engram_entry(tmp_path: Path) -> None:
    p = places(tmp_path)
    path = CLIENTS["vscode"].path(p)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"servers": {"other": {"type": "stdio", "command": "x"}}, "inputs": []}))
    configure(CLIENTS["vscode"], p, command=COMMAND, env={}, now=NOW)
    configure(CLIENTS["vscode"], p, command=COMMAND, env={}, remove=True, now=datetime(2026, 11, 29, 13, 0, 0))
    assert json.loads(path.read_text()) == {"servers": {"other": {"type": "stdio", "command": "x"}}, "inputs": []}


def test_codex_toml_keeps_comments_and_other_tables(tmp_path: Path) -> None:
    p = places(tmp_path)
    path = CLIENTS["codex"].path(p)
    path.parent.mkdir(parents=True)
    path.write_text('# my settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = []\n')
    configure(CLIENTS["codex"], p, command=COMMAND, env={}, now=NOW)
    text = path.read_text()
    assert text.startswith('# my settings\nmodel = "o4"\n') and "[mcp_servers.docs]" in text
    assert '[mcp_servers.engram]\ncommand = "/opt/engram/bin/engram"\nargs = ["mcp"]' in text
    configure(CLIENTS["codex"], p, command=COMMAND, env={}, remove=True, now=datetime(2026, 11, 29, 13, 0, 0))
    assert "engram" not in path.read_text() and "[mcp_servers.docs]" in path.read_text()


def test_dry_run_prints_the_change_and_writes_nothing(tmp_path: Path) -> None:
    p = places(tmp_path)
    result = configure(CLIENTS["windsurf"], p, command=COMMAND, env={}, dry_run=True, now=NOW)
    assert result.changed and '+    "engram": {' in result.diff
    assert not CLIENTS["windsurf"].path(p).exists()


def test_a_file_that_is_not_json_is_left_untouched(tmp_path: Path) -> None:
    p = places(tmp_path)
    path = CLIENTS["vscode"].path(p)
    path.parent.mkdir(parents=True)
    path.write_text('{\n  // my servers\n  "servers": {}\n}\n')
    with pytest.raises(SetupError, match="is not valid JSON"):
        configure(CLIENTS["vscode"], p, command=COMMAND, env={}, now=NOW)
    assert path.read_text() == '{\n  // my servers\n  "servers": {}\n}\n'
    assert len(list(path.parent.iterdir())) == 1
