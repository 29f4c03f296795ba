"""Engram as a Claude Code plugin: its MCP server and its capture hooks, in a local marketplace.

``engram setup claude-code --plugin`` writes the marketplace into Engram's data folder and installs the plugin
from it with Claude Code's own commands (``claude plugin marketplace add``, ``claude plugin install``); without
``claude`` on the PATH it prints those two commands. The folder (``PLUGIN_FOLDER``)::

    .claude-plugin/marketplace.json     the marketplace "engram-local", listing one plugin
    engram/.claude-plugin/plugin.json   the plugin's name, version, description
    engram/.mcp.json                    the "engram" MCP server: this installation's `engram mcp`
    engram/hooks/hooks.json             SessionStart, Stop, PreCompact, SessionEnd: `engram hook claude-code`

Every hook runs the same command; the hook reads which event it is from its input (``app/hook.py``). The
commands are absolute (this installation's ``engram``), with the data and config folders of this setup when
they are not the default ones. Writing the same plugin again changes nothing on disk.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.core.fileio import atomic_write_bytes

MARKETPLACE = "engram-local"
PLUGIN = "engram"
PLUGIN_FOLDER = "claude-code-plugin"
#: The events the hooks run for (``app/hook.py`` captures at each, and gives the brief at SessionStart).
HOOK_EVENTS = ("SessionStart", "Stop", "PreCompact", "SessionEnd")
#: Seconds Claude Code gives a hook; the brief waits ``capture.brief_wait_sec`` (at most 30) for the service.
HOOK_TIMEOUT_S = {"SessionStart": 40, "Stop": 15, "PreCompact": 15, "SessionEnd": 15}
DESCRIPTION = ("Engram, your local memory: remembers each session's turns without the agent storing them, "
               "briefs a new session on its project, and serves recall and search over MCP.")


@dataclass(frozen=True)
class PluginFiles:
    """Where the plugin was written, and whether anything changed."""

    marketplace: Path
    plugin: Path
    changed: bool


def plugin_root(data_dir: Path) -> Path:
    return data_dir / PLUGIN_FOLDER


def _hook_command(command: list[str], env: Mapping[str, str]) -> str:
    """The shell command line of a hook: ``VAR=value … /abs/engram hook claude-code``."""
    assignments = [f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())]
    return " ".join([*assignments, shlex.join([*command, "hook", "claude-code"])])


def plugin_documents(engram: list[str], env: Mapping[str, str], version: str) -> dict[str, Any]:
    """The plugin's files as JSON documents, by path relative to the marketplace folder.

    ``engram`` is the absolute command that runs ``engram`` here; ``env`` the variables it needs (the data and
    config folders of this setup, when not the default).
    """
    hook = _hook_command(engram, env)
    server: dict[str, Any] = {"command": engram[0], "args": [*engram[1:], "mcp"]}
    if env:
        server["env"] = dict(env)
    return {
        ".claude-plugin/marketplace.json": {
            "name": MARKETPLACE, "owner": {"name": "Engram"},
            "metadata": {"description": "Engram's plugin, written by `engram setup claude-code --plugin`.",
                         "version": version},
            "plugins": [{"name": PLUGIN, "source": f"./{PLUGIN}", "description": DESCRIPTION, "version": version}],
        },
        f"{PLUGIN}/.claude-plugin/plugin.json": {
            "name": PLUGIN, "version": version, "description": DESCRIPTION, "author": {"name": "Engram"},
            "keywords": ["memory", "mcp", "recall", "local"],
        },
        f"{PLUGIN}/.mcp.json": {"mcpServers": {"engram": server}},
        f"{PLUGIN}/hooks/hooks.json": {
            "description": "Engram: capture each session's new turns; brief a new session on its project.",
            "hooks": {event: [{"hooks": [{"type": "command", "command": hook, "timeout": HOOK_TIMEOUT_S[event]}]}]
                      for event in HOOK_EVENTS},
        },
    }


def write_plugin(root: Path, engram: list[str], env: Mapping[str, str], version: str) -> PluginFiles:
    """Write the marketplace and its plugin under ``root`` (only the files whose content differs).

    Raises:
        OSError: a file cannot be written.
    """
    changed = False
    for relative, document in plugin_documents(engram, env, version).items():
        path = root / relative
        data = (json.dumps(document, indent=2) + "\n").encode("utf-8")
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            pass
        atomic_write_bytes(path, data)
        changed = True
    return PluginFiles(marketplace=root, plugin=root / PLUGIN, changed=changed)


@dataclass(frozen=True)
class Step:
    """One ``claude plugin …`` command that setup ran, and what it answered."""

    command: list[str]
    returncode: int
    output: str


def claude_steps(claude: str, root: Path, *, remove: bool = False) -> list[list[str]]:
    """The ``claude`` commands that install the plugin from ``root`` (or, ``remove``, take it away)."""
    if remove:
        return [[claude, "plugin", "uninstall", f"{PLUGIN}@{MARKETPLACE}"],
                [claude, "plugin", "marketplace", "remove", MARKETPLACE]]
    return [[claude, "plugin", "marketplace", "add", str(root)],
            [claude, "plugin", "install", f"{PLUGIN}@{MARKETPLACE}"]]


def run_claude(steps: list[list[str]], env: Mapping[str, str] | None = None, timeout: float = 120.0) -> list[Step]:
    """Run each step in order; one that fails ends the run (its output says why).

    Raises:
        OSError: ``claude`` cannot be started.
    """
    import subprocess

    done: list[Step] = []
    for command in steps:
        try:
            ran = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                                 stdin=subprocess.DEVNULL)
            step = Step(command, ran.returncode, (ran.stdout + ran.stderr).strip())
        except subprocess.TimeoutExpired:
            step = Step(command, 124, f"no answer within {timeout:.0f} s")
        done.append(step)
        if step.returncode != 0 and not _already(step):
            break
    return done


def _already(step: Step) -> bool:
    """A step that found its work done (a marketplace added before, a plugin installed or removed before)."""
    words = step.output.lower()
    return any(w in words for w in ("already", "not found", "not installed"))


def step_ok(step: Step) -> bool:
    return step.returncode == 0 or _already(step)
