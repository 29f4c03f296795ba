"""``engram setup``: writing Engram's entry into an MCP client's own configuration file.

Each client documents where its MCP servers live (see the table below). The writer merges: only
the ``engram`` entry is added, changed or removed; every other server and setting stays as it was.
The file is backed up before it is changed, a re-run that would change nothing writes nothing,
and ``--dry-run`` prints the change instead. A file that cannot be parsed (or that holds comments
we could not keep) is never rewritten: the message says what to paste by hand.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from engram.core import EngramError
from engram.core.fileio import atomic_write_bytes

ENTRY_NAME = "engram"


class SetupError(EngramError):
    title = "Editor setup failed"


@dataclass(frozen=True)
class Places:
    """The folders client configs are found under, read once from the environment."""

    home: Path
    appdata: Path  # Windows %APPDATA%
    platform: str  # sys.platform
    codex_home: Path

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, platform: str = sys.platform) -> Places:
        env = os.environ if environ is None else environ
        home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
        appdata = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
        codex = Path(env.get("CODEX_HOME") or home / ".codex")
        return cls(home, appdata, platform, codex)

    def app_support(self, *parts: str) -> Path:
        """The per-user application folder: macOS Application Support, Windows APPDATA, else ~/.config."""
        if self.platform == "darwin":
            return self.home.joinpath("Library", "Application Support", *parts)
        if self.platform == "win32":
            return self.appdata.joinpath(*parts)
        return self.home.joinpath(".config", *parts)


@dataclass(frozen=True)
class Client:
    name: str
    label: str
    path: Callable[[Places], Path]
    container: str  # the key that holds the servers (TOML: the table name)
    typed: bool  # whether entries carry "type": "stdio"
    toml: bool = False
    docs: str = ""


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("claude-code", "Claude Code", lambda p: p.home / ".claude.json", "mcpServers", typed=True,
           docs="https://code.claude.com/docs/en/mcp (user scope)"),
    Client("claude-desktop", "Claude Desktop", lambda p: p.app_support("Claude", "claude_desktop_config.json"),
           "mcpServers", typed=False, docs="https://modelcontextprotocol.io/docs/develop/connect-local-servers"),
    Client("cursor", "Cursor", lambda p: p.home / ".cursor" / "mcp.json", "mcpServers", typed=False,
           docs="https://cursor.com/docs/mcp (global)"),
    Client("vscode", "VS Code", lambda p: p.app_support("Code", "User", "mcp.json"), "servers", typed=True,
           docs="https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (user mcp.json)"),
    Client("codex", "Codex CLI", lambda p: p.codex_home / "config.toml", "mcp_servers", typed=False, toml=True,
           docs="https://developers.openai.com/codex/mcp"),
    Client("windsurf", "Windsurf", lambda p: p.home / ".codeium" / "windsurf" / "mcp_config.json", "mcpServers",
           typed=False, docs="https://docs.windsurf.com/windsurf/cascade/mcp"),
)}


def engram_command(*args: str) -> list[str]:
    """The absolute command that runs ``engram <args>`` from this installation (frozen bundle, the venv's
    script, or the module)."""
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve()), *args]
    script = Path(sys.executable).parent / ("engram.exe" if sys.platform == "win32" else "engram")
    if script.exists():
        return [str(script.absolute()), *args]
    return [str(Path(sys.executable).absolute()), "-m", "engram.app", *args]


def launcher_command() -> list[str]:
    """The absolute command that starts ``engram mcp`` from this installation."""
    return engram_command("mcp")


def entry_for(client: Client, command: list[str], env: Mapping[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry["command"] = command[0]
    entry["args"] = command[1:]
    if env:
        entry["env"] = dict(env)
    return entry


def _load(client: Client, path: Path) -> tuple[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        raise SetupError(f"Cannot read {path}: {exc.strerror}.") from exc
    if not text.strip():
        return text, None
    try:
        if client.toml:
            import tomlkit

            return text, tomlkit.parse(text)
        data = json.loads(text)
    except ValueError as exc:
        raise SetupError(f"{path} is not valid {'TOML' if client.toml else 'JSON'} ({exc}); it was left untouched. "
                         f"Fix it, or add the entry by hand (`engram setup {client.name} --dry-run` shows it).") from exc
    if not isinstance(data, dict):
        raise SetupError(f"{path} does not hold a JSON object; it was left untouched.")
    return text, data


def _render(client: Client, data: Any) -> str:
    if client.toml:
        import tomlkit

        return tomlkit.dumps(data)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def planned_text(client: Client, old_text: str, data: Any, entry: dict[str, Any] | None) -> str:
    """The file's new text with ``entry`` set (or, with ``None``, removed) under the client's container."""
    if client.toml:
        import tomlkit

        doc = data if data is not None else tomlkit.document()
        servers = doc.get(client.container)
        if servers is None:
            if entry is None:
                return old_text
            servers = tomlkit.table(is_super_table=True)
            doc[client.container] = servers
        if entry is None:
            servers.pop(ENTRY_NAME, None)
        else:
            table = tomlkit.table()
            for key, value in entry.items():
                table[key] = value
            servers[ENTRY_NAME] = table
        return tomlkit.dumps(doc)
    doc = data if data is not None else {}
    servers = doc.get(client.container)
    if servers is None:
        if entry is None:
            return old_text
        servers = doc[client.container] = {}
    if not isinstance(servers, dict):
        raise SetupError(f"'{client.container}' in the {client.label} config is not an object; it was left untouched.")
    if entry is None:
        servers.pop(ENTRY_NAME, None)
    else:
        servers[ENTRY_NAME] = entry
    return _render(client, doc)


@dataclass(frozen=True)
class SetupResult:
    client: Client
    path: Path
    changed: bool
    diff: str
    backup: Path | None = None


def configure(client: Client, places: Places, *, command: list[str], env: Mapping[str, str], remove: bool = False,
              dry_run: bool = False, now: datetime | None = None) -> SetupResult:
    """Add (or remove) Engram's entry in ``client``'s config file.

    Raises:
        SetupError: the file cannot be read, parsed or written; it is left as it was.
    """
    path = client.path(places)
    old_text, data = _load(client, path)
    new_text = planned_text(client, old_text, data, None if remove else entry_for(client, command, env))
    diff = "".join(difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        fromfile=f"{path} (now)", tofile=f"{path} (after)"))
    if new_text == old_text or dry_run:
        return SetupResult(client, path, changed=new_text != old_text, diff=diff)
    backup = None
    try:
        if path.exists():
            stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
            backup = path.with_name(f"{path.name}.engram-backup-{stamp}")
            shutil.copy2(path, backup)
        atomic_write_bytes(path, new_text.encode("utf-8"))
    except OSError as exc:
        raise SetupError(f"Cannot write {path}: {exc.strerror}. Nothing was changed.") from exc
    return SetupResult(client, path, changed=True, diff=diff, backup=backup)


def run_setup(client_name: str | None, *, listing: bool, remove: bool, dry_run: bool, plugin: bool = False,
              data_dir: Path | None = None) -> int:
    """The ``engram setup`` command; returns the exit status."""
    places = Places.from_environ()
    if plugin:
        if client_name != "claude-code":
            print("engram: Invalid argument: --plugin is for Claude Code: `engram setup claude-code --plugin`.",
                  file=sys.stderr)
            return 2
        assert data_dir is not None
        return _run_plugin_setup(places, data_dir, remove=remove, dry_run=dry_run)
    if listing or client_name is None:
        for client in CLIENTS.values():
            print(f"{client.name:15} {client.label:15} {client.path(places)}  [{client_state(client, places)}]")
        if client_name is None and not listing:
            print("\nRun `engram setup <client>` to add Engram to one of them.")
        return 0
    client = CLIENTS[client_name]
    try:
        result = configure(client, places, command=launcher_command(), env=launcher_env(), remove=remove, dry_run=dry_run)
    except SetupError as exc:
        print(f"engram: {exc.title}: {exc.message}", file=sys.stderr)
        return 1
    if dry_run:
        print(result.diff or f"No change: {result.path} is already as it should be.")
    elif not result.changed:
        print(f"{client.label}: nothing to do, {result.path} already {'lacks' if remove else 'has'} the engram entry.")
    else:
        saved = f" (backup: {result.backup})" if result.backup else ""
        verb = "removed Engram from" if remove else "added Engram to"
        print(f"{client.label}: {verb} {result.path}{saved}. Restart {client.label} to pick it up.")
    return 0


ClientState = Literal["configured", "exists", "installed", "not found"]


def client_state(client: Client, places: Places) -> ClientState:
    """``configured`` (its config names Engram), ``exists`` (a config without Engram), ``installed`` (no
    config yet, but the folder it lives in exists: the editor is there), or ``not found``."""
    path = client.path(places)
    if _has_entry(client, path):
        return "configured"
    if path.exists():
        return "exists"
    return "installed" if path.parent.exists() and path.parent != places.home else "not found"


def launcher_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables an editor must pass to ``engram mcp`` so that it finds this data and config folder."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if k in ("ENGRAM_DATA_DIR", "ENGRAM_CONFIG_DIR")}


def _has_entry(client: Client, path: Path) -> bool:
    try:
        _, data = _load(client, path)
    except SetupError:
        return False
    servers = (data or {}).get(client.container) or {}
    return ENTRY_NAME in servers


def _run_plugin_setup(places: Places, data_dir: Path, *, remove: bool, dry_run: bool) -> int:
    """``engram setup claude-code --plugin``: write Engram's Claude Code plugin (MCP server and capture hooks) and
    install it with Claude Code's own commands; the plain entry in ~/.claude.json is removed (the plugin serves
    Engram instead, and two entries would start two servers)."""
    from . import claude_plugin
    from .server import version

    root = claude_plugin.plugin_root(data_dir)
    claude = shutil.which("claude")
    steps = claude_plugin.claude_steps(claude or "claude", root, remove=remove)
    if dry_run:
        if not remove:
            print(f"Would write Engram's Claude Code plugin into {root}, then run:")
        for command in steps:
            print("  " + " ".join(command))
        return 0
    if not remove:
        try:
            claude_plugin.write_plugin(root, engram_command(), launcher_env(), version())
        except OSError as exc:
            print(f"engram: {SetupError.title}: Cannot write the plugin into {root}: {exc.strerror}.", file=sys.stderr)
            return 1
        print(f"Claude Code plugin written: {root / claude_plugin.PLUGIN} (hooks: "
              f"{', '.join(claude_plugin.HOOK_EVENTS)}; MCP server: engram)")
    if claude is None:
        print("Claude Code's `claude` command is not on the PATH. Run these once it is:" if not remove else
              "Claude Code's `claude` command is not on the PATH; to remove the plugin run:")
        for command in steps:
            print("  " + " ".join(command))
        return 0
    failed = None
    for ran in claude_plugin.run_claude(steps):
        print(f"$ claude {' '.join(ran.command[1:])}\n  {ran.output or '(no output)'}")
        if not claude_plugin.step_ok(ran):
            failed = ran
    if failed is not None:
        print(f"engram: {SetupError.title}: `claude {' '.join(failed.command[1:])}` failed (exit {failed.returncode}).",
              file=sys.stderr)
        return 1
    if remove:
        shutil.rmtree(root, ignore_errors=True)
        print("Claude Code: removed Engram's plugin. Restart Claude Code to pick it up.")
        return 0
    client = CLIENTS["claude-code"]
    if _has_entry(client, client.path(places)):
        try:
            result = configure(client, places, command=launcher_command(), env=launcher_env(), remove=True)
        except SetupError as exc:
            print(f"engram: {exc.title}: {exc.message}", file=sys.stderr)
            return 1
        saved = f" (backup: {result.backup})" if result.backup else ""
        print(f"Removed the plain engram entry from {result.path}{saved}: the plugin serves Engram now.")
    print("Claude Code: Engram's plugin is installed. Restart Claude Code; `claude mcp list` shows plugin:engram:engram.")
    return 0
