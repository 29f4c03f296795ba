"""A third-party client: the MCP Inspector CLI (Node.js) lists and calls Engram's tools over stdio."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"  # newer releases need Node >= 22
NPX = shutil.which("npx")
pytestmark = [pytest.mark.skipif(NPX is None, reason="Node.js (npx) is not installed"), pytest.mark.slow]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Inspector installed once for the module from the npm registry, as a user's `npm install` would (each
    `npx -y` would resolve and unpack it again); its command-line entry point."""
    assert NPX is not None
    prefix = tmp_path_factory.mktemp("inspector")
    npm = Path(NPX).with_name("npm")
    subprocess.run([str(npm), "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                    INSPECTOR], check=True, capture_output=True, timeout=600)
    entry = prefix / "node_modules" / ".bin" / "mcp-inspector"
    assert entry.exists(), f"npm installed no mcp-inspector under {prefix}"
    return entry


@pytest.fixture
def inspector(installed: Path) -> Callable[..., dict[str, Any]]:
    def call(env: dict[str, str], *method: str) -> dict[str, Any]:
        cmd = [str(installed), "--cli", sys.executable, "-m", "engram.app", "mcp", "--standalone", *method]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    return call


@pytest.fixture
def env(tmp_path: Path, model_file: Path) -> dict[str, str]:
    (tmp_path / "data" / "models").mkdir(parents=True)
    shutil.copy(model_file, tmp_path / "data" / "models" / model_file.name)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
            "ENGRAM_LOG_DIR": str(tmp_path / "logs")}


def test_inspector_lists_the_tools(env: dict[str, str], inspector: Callable[..., dict[str, Any]]) -> None:
    listed = inspector(env, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert len(names) == 20 and {"search", "store", "kg_edit", "forget", "tidy"} <= names
    search = next(t for t in listed["tools"] if t["name"] == "search")
    assert search["annotations"]["readOnlyHint"] is True


def test_inspector_calls_a_tool_and_sees_a_refusal_as_a_tool_error(env: dict[str, str],
                                                                  inspector: Callable[..., dict[str, Any]]) -> None:
    stored = inspector(env, "--method", "tools/call", "--tool-name", "store", "--tool-arg",
                       "content=The inspector was here")
    assert stored["isError"] is False and stored["content"][0]["text"].startswith("stored note ")
    found = inspector(env, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=inspector")
    assert "The inspector was here" in found["content"][0]["text"]
    refused = inspector(env, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=x",
                        "--tool-arg", "limit=500")
    assert refused["isError"] is True and "argument 'limit'" in refused["content"][0]["text"]
