"""Smoke test of a built bundle, in a clean environment (no virtualenv on PATH, a temporary HOME).

    python installers/smoke.py dist/engram/engram      (the bundle's executable)

Checks, each against the bundled executable: ``--version``; an ingest of a small folder and a search
that finds it; ``mcp --standalone`` answering ``initialize`` and ``tools/list`` to a real MCP SDK client
over stdio; the tray app starting offscreen (its service announces itself) and quitting cleanly on
SIGTERM. Needs the ``mcp`` SDK in the Python that runs this script (not in the bundle's). Prints one
JSON line of what it measured; exits non-zero on the first failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def clean_env(home: Path) -> dict[str, str]:
    """No virtualenv, no Python paths, no ENGRAM_* from the caller: only what a fresh login has."""
    keep = ("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "TEMP", "TMP", "LANG", "LC_ALL")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update({
        "PATH": os.pathsep.join(p for p in ("/usr/bin", "/bin", r"C:\Windows\System32") if Path(p).is_dir()),
        "HOME": str(home), "USERPROFILE": str(home), "APPDATA": str(home / "AppData"),
        "ENGRAM_DATA_DIR": str(home / "data"), "ENGRAM_CONFIG_DIR": str(home / "config"),
        "ENGRAM_LOG_DIR": str(home / "logs"), "QT_QPA_PLATFORM": "offscreen",
    })
    return env


def run(exe: Path, env: dict[str, str], *args: str, timeout: float = 120) -> str:
    done = subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"`engram {' '.join(args)}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


async def mcp_standalone(exe: Path, env: dict[str, str]) -> tuple[str, int, float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    started = time.perf_counter()
    params = StdioServerParameters(command=str(exe), args=["mcp", "--standalone"], env=env)
    async with Client(params, mode="legacy") as client:
        ready = time.perf_counter() - started
        tools = (await client.list_tools()).tools
        name = client.server_info.name if client.server_info else ""
    return name, len(tools), ready


def tray(exe: Path, env: dict[str, str], data: Path) -> float:
    proc = subprocess.Popen([str(exe), "tray"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = time.perf_counter()
    try:
        info = data / "service.json"
        while not (info.exists() and json.loads(info.read_text() or "{}").get("pid") == proc.pid):
            if proc.poll() is not None:
                raise AssertionError(f"the tray app exited {proc.returncode}: {proc.stderr.read().decode()}")
            if time.perf_counter() - started > 90:
                raise AssertionError("the tray app's service did not announce itself within 90 s")
            time.sleep(0.05)
        up = time.perf_counter() - started
        if sys.platform == "win32":
            proc.terminate()  # no SIGTERM on Windows; the clean quit is the menu's (tested in the test suite)
            proc.wait(timeout=30)
            return up
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        if code != 0 or info.exists():
            raise AssertionError(f"the tray app did not quit cleanly (exit {code}; service.json left: {info.exists()})")
        return up
    finally:
        if proc.poll() is None:
            proc.kill()


def smoke(exe: Path) -> dict[str, object]:
    exe = exe.resolve()
    with tempfile.TemporaryDirectory(prefix="engram-smoke-") as tmp:
        home = Path(tmp)
        env = clean_env(home)
        version = run(exe, env, "--version").strip()
        notes = home / "notes"
        notes.mkdir()
        (notes / "backup.md").write_text("# Backups\n\nRestic runs the nightly backup at 02:00 to the NAS.\n")
        (notes / "deploy.md").write_text("# Deploy\n\nRoll back with git revert, then redeploy.\n")
        started = time.perf_counter()
        run(exe, env, "ingest", str(notes), "--project", "smoke")
        ingest_s = time.perf_counter() - started
        found = run(exe, env, "search", "when does the nightly backup run")
        if "backup.md" not in found:
            raise AssertionError(f"search did not find the ingested note:\n{found}")
        name, tools, ready = asyncio.run(mcp_standalone(exe, env))
        if tools != 20:
            raise AssertionError(f"mcp --standalone listed {tools} tools, not 20")
        tray_s = tray(exe, env, home / "data")
        # Which llama.cpp backends the bundle loaded here, and the note when a GPU backend found no driver.
        device = [line for line in run(exe, env, "device").splitlines()
                  if line.startswith(("installed llama.cpp devices", "llama.cpp backends", "note:"))]
    return {"version": version, "ingest_s": round(ingest_s, 2), "mcp_server": name, "mcp_tools": tools,
            "mcp_initialize_s": round(ready, 2), "tray_service_up_s": round(tray_s, 2), "llama_cpp": device}


if __name__ == "__main__":
    print(json.dumps(smoke(Path(sys.argv[1]))))
