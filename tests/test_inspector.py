"""A third-party client: the MCP Inspector CLI (Node.js) lists and calls Engram's tools over stdio."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"  # newer releases need Node >= 22
NPX = shutil.which("npx")
pytestmark = pytest.mark.skipif(NPX is None, reason="Node.js (npx) is not installed")


def inspector(env: dict[str, str], *method: str) -> dict:
    assert NPX is not None
    cmd = [NPX, "-y", INSPECTOR, "--cli", sys.executable, "-m", "engram.app", "mcp", "--standalone", *method]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.fixture
def env(tmp_path: Path, model_file: Path) -> dict[str, str]:
    (tmp_path / "data" / "models").mkdir(parents=True)
    shutil.copy(model_file, tmp_path / "data" / "models" / model_file.name)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
            "ENGRAM_LOG_DIR": str(tmp_path / "logs")}


def test_inspector_lists_the_tools(env: dict[str, str]) -> None:
    listed = inspector(env, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert len(names) == 17 and {"search", "store", "kg_edit"} <= names
    search = next(t for t in listed["tools"] if t["name"] == "search")
    assert search["annotations"]["readOnlyHint"] is True


def test_inspector_calls_a_tool_and_sees_a_refusal_as_a_tool_error(env: dict[str, str]) -> None:
    stored = inspector(env, "--method", "tools/call", "--tool-name", "store", "--tool-arg",
                       "content=The inspector was here")
    assert stored["isError"] is False and stored["content"][0]["text"].startswith("stored note ")
    found = inspector(env, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=inspector")
    assert "The inspector was here" in found["content"][0]["text"]
    refused = inspector(env, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=x",
                        "--tool-arg", "limit=500")
    assert refused["isError"] is True and "argument 'limit'" in refused["content"][0]["text"]
