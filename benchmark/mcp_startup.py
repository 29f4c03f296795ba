"""How fast an editor gets a ready MCP server, and how big Engram's tool list is.

    python -m benchmark mcp [--runs 5]

Starts `engram mcp` with a real SDK client over stdio (as an editor does) and times the
`initialize` answer and the first tool call, with the service already running ("warm") and with
no service ("cold": the launcher starts one), and for `--standalone`. Also measures the tools/list
payload in characters and in tokens of the bundled model's tokenizer (all-MiniLM-L6-v2 WordPiece;
named in the result: an LLM's own tokenizer will differ).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from engram.mcp.service_files import read_info

from .common import Run, engine_at
from .suites import McpOptions

ENGRAM = [sys.executable, "-m", "engram.app"]


async def one_start(env: dict[str, str], *args: str) -> tuple[float, float, list[dict[str, Any]]]:
    params = StdioServerParameters(command=ENGRAM[0], args=[*ENGRAM[1:], "mcp", *args], env=env)
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        ready = time.perf_counter() - started
        tools = (await client.list_tools()).tools
        before = time.perf_counter()
        await client.call_tool("search", {"query": "warm up"})
        first_call = time.perf_counter() - before
    listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    return ready, first_call, listed


def stop_service(data: Path) -> None:
    info = read_info(data)
    if info is None:
        return
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while read_info(data) is not None and time.monotonic() < deadline:
        time.sleep(0.05)


def summary_of(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(1000 * statistics.median(values)), "min_ms": round(1000 * min(values)),
            "max_ms": round(1000 * max(values))}


async def measure(run: Run, runs: int) -> dict[str, Any]:
    base = run.workspace("mcp-startup")
    with engine_at(base) as engine:  # builds the model once and creates the workspace
        engine.call("store", {"content": "a note so searches have something to find"})
        tokenizer = engine.embedder()
        data = engine.paths.data_dir
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
               "ENGRAM_DATA_DIR": str(data), "ENGRAM_CONFIG_DIR": str(base / "config"),
               "ENGRAM_LOG_DIR": str(base / "logs")}
        results: dict[str, Any] = {}
        listed: list[dict[str, Any]] = []
        for label in ("cold", "warm", "standalone"):
            ready_times, call_times = [], []
            for _ in range(runs):
                if label == "cold":
                    stop_service(data)
                args = ("--standalone",) if label == "standalone" else ()
                ready, first_call, listed = await one_start(env, *args)
                ready_times.append(ready)
                call_times.append(first_call)
            results[label] = {"initialize": summary_of(ready_times), "first_tool_call": summary_of(call_times)}
            print(label, results[label], flush=True)
        stop_service(data)
        payload = json.dumps({"tools": listed}, ensure_ascii=False)
        size = {"tools": len(listed), "chars": len(payload), "tokens": tokenizer.count_tokens(payload),
                "tokenizer": "all-MiniLM-L6-v2 WordPiece (the bundled GGUF)"}
    return {"runs": runs, "startup": results, "tool_list": size}


def run_suite(run: Run, options: McpOptions) -> dict[str, Any]:
    result: dict[str, Any] = anyio.run(measure, run, 1 if run.quick else options.runs)
    return result


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    lines = ["# MCP start-up and tool-list size", "",
             "| launcher | initialize (median, min–max) | first tool call (median, min–max) |", "|---|---|---|"]
    for label, r in result["startup"].items():
        i, c = r["initialize"], r["first_tool_call"]
        lines.append(f"| {label} | {i['median_ms']} ms ({i['min_ms']}–{i['max_ms']}) | "
                     f"{c['median_ms']} ms ({c['min_ms']}–{c['max_ms']}) |")
    t = result["tool_list"]
    lines += ["", f"tools/list: {t['tools']} tools, {t['chars']:,} characters, {t['tokens']:,} tokens "
                  f"({t['tokenizer']}).", ""]
    return "\n".join(lines)
