"""Suite `capture`: LoCoMo conversations written as Claude Code transcripts and captured through the hook path.

    python -m benchmark capture --data ../shared/data/locomo-public.json

Each conversation is remembered twice, in two fresh workspaces: once with one ``store`` call per turn (the
``conversation`` suite's way: an agent that stores), once as a Claude Code session: each LoCoMo session is
appended to a transcript in Claude Code's format (each turn one prompt line, ``Speaker: text``, at the session's
time), then Claude Code's ``Stop`` hook runs (``run_hook``, as ``engram hook claude-code`` runs it) and the
capture worker takes its job. Then every question of categories 1–4 is searched (hybrid, the default) in both
workspaces and evidence recall is read off the rankings: **all@k** when every evidence turn is in the top k.

Also measured: the hook's wall time as the editor waits for it, in a real ``engram hook claude-code`` process
(p50/p95, the target is p95 < 100 ms to return), and captured turns stored per second by the worker.

LoCoMo is CC BY-NC 4.0: it is read from the path given, never committed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.app.hook import run_hook
from engram.core import Settings
from engram.core.capture.storing import turn_memory_id
from engram.core.capture.worker import CaptureWorker
from engram.mcp.service_files import InstanceLock

from .common import Run, engine_at, percentile
from .conversation import CATEGORIES, KS, _recall, evidence_ranks, store_args, turns
from .suites import ConversationOptions

EDITOR = "claude-code"
#: Real hook processes timed per run (each starts Python, as Claude Code's hook does).
HOOK_PROCESSES = 20


def transcript_lines(said: list[dict[str, Any]], session_id: str, cwd: str) -> list[str]:
    """Claude Code transcript lines for ``said``: each turn a prompt of its own, ``Speaker: text``."""
    lines = []
    parent = None
    for turn in said:
        when = turn["date"] or datetime(2023, 1, 1, tzinfo=UTC)
        uuid = f"dia-{turn['dia_id']}"
        lines.append(json.dumps({
            "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session_id, "cwd": cwd,
            "isSidechain": False, "userType": "external", "timestamp": when.astimezone(UTC).isoformat(),
            "message": {"role": "user", "content": f"{turn['speaker']}: {turn['text']}"}}))
        parent = uuid
    return lines


def _ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "n": 0}
    return {"p50_ms": round(1000 * percentile(values, 0.5), 1), "p95_ms": round(1000 * percentile(values, 0.95), 1),
            "n": len(values)}


def _evidence_rows(engine: Any, questions: list[dict[str, Any]],
                   by_memory: dict[str, set[str]]) -> list[dict[str, Any]]:
    rows = []
    for q in questions:
        evidence = [str(e).strip() for e in q["evidence"]]
        hits = engine.call("search", {"query": str(q["question"]), "limit": max(KS)}).result.hits
        ranks = evidence_ranks([h.id for h in hits], by_memory, evidence)
        rows.append({"category": q["category"], "ranks": ranks, "complete": len(ranks) == len(evidence)})
    return rows


def measure_sample(run: Run, sample: dict[str, Any], index: int, embedder: Any) -> dict[str, Any]:
    said = turns(sample["conversation"])
    if run.quick:
        said = said[:120]
    questions = [q for q in sample["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
    if run.quick:
        questions = questions[:20]
    out: dict[str, Any] = {"sample": sample.get("sample_id", str(index)), "turns": len(said),
                           "questions": len(questions)}

    stored_folder = run.workspace(f"capture-store-{index}")
    shutil.rmtree(stored_folder, ignore_errors=True)
    with engine_at(stored_folder, Settings(), embedder=embedder) as engine:
        by_memory: dict[str, set[str]] = {}
        for t in said:
            by_memory.setdefault(engine.call("store", store_args(t)).result.id, set()).add(t["dia_id"])
        out["store"] = _evidence_rows(engine, questions, by_memory)

    folder = run.workspace(f"capture-hook-{index}")
    shutil.rmtree(folder, ignore_errors=True)
    settings = Settings.model_validate({"capture": {"turns_per_session": 100000, "turns_per_day": 1000000,
                                                    "chars_per_day": 1_000_000_000}})
    session = f"locomo-{index}"
    transcript = folder / "projects" / "-conversation" / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True)
    with engine_at(folder, settings, embedder=embedder) as engine:
        paths = engine.paths
        environ = {"ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir),
                   "ENGRAM_LOG_DIR": str(paths.log_dir), "HOME": str(folder)}
        worker = CaptureWorker(paths, lambda: engine.internals().scope(""), lambda: engine.settings)
        # Held as a running service holds it: the hook finds the service there and starts none.
        lock = InstanceLock(paths.data_dir)
        lock.acquire()
        hook_s: list[float] = []
        capture_s = 0.0
        by_session: dict[int, list[dict[str, Any]]] = {}
        for t in said:
            by_session.setdefault(int(t["session"]), []).append(t)
        for number in sorted(by_session):
            with transcript.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(transcript_lines(by_session[number], session, "/conversation")) + "\n")
            given = json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": "/conversation",
                                "hook_event_name": "Stop", "stop_hook_active": False})
            started = time.perf_counter()
            run_hook(["claude-code"], stdin=io.StringIO(given), stdout=io.StringIO(), environ=environ)
            hook_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            worker.take_jobs()
            capture_s += time.perf_counter() - started
        ids = {turn_memory_id(EDITOR, session, f"dia-{t['dia_id']}"): t["dia_id"] for t in said}
        counted = engine.store().duplicate_links(list(ids))  # turns counted on an earlier turn's memory
        by_turn: dict[str, set[str]] = {}
        for memory_id, dia in ids.items():
            kept = str(counted[memory_id]["dst"]) if memory_id in counted else memory_id
            by_turn.setdefault(kept, set()).add(dia)
        out["hook"] = _evidence_rows(engine, questions, by_turn)
        kept_rows = engine.store().memories_by_ids(list(ids), ["id"])
        out["captured"] = len(kept_rows) + len(counted)  # every turn, stored or counted on an earlier one
        out["rows"] = engine.store().count_memories()
        out["hook_in_process_s"] = hook_s
        out["capture_s"] = capture_s
        lock.release()
    return out


def hook_processes(run: Run, n: int) -> list[float]:
    """Wall times of ``n`` real ``engram hook claude-code`` processes (a Stop each, its job left in an inbox)."""
    folder = run.workspace("capture-hook-processes")
    shutil.rmtree(folder, ignore_errors=True)
    transcript = folder / "session.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    env = {**os.environ, "ENGRAM_DATA_DIR": str(folder / "data"), "ENGRAM_CONFIG_DIR": str(folder / "config"),
           "ENGRAM_LOG_DIR": str(folder / "logs")}
    (folder / "data").mkdir(parents=True)
    lock = InstanceLock(folder / "data")  # as a running service holds it: the hooks start none
    lock.acquire()
    given = json.dumps({"session_id": "s", "transcript_path": str(transcript), "cwd": str(folder),
                        "hook_event_name": "Stop"})
    engram = Path(sys.executable).with_name("engram")
    command = [str(engram)] if engram.exists() else [sys.executable, "-m", "engram.app"]
    times = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run([*command, "hook", "claude-code"], input=given, text=True, env=env, check=True,
                       capture_output=True, timeout=60)
        times.append(time.perf_counter() - started)
    lock.release()
    return times


def summarize(samples: list[dict[str, Any]], processes: list[float]) -> dict[str, Any]:
    store_rows = [r for s in samples for r in s["store"]]
    hook_rows = [r for s in samples for r in s["hook"]]
    turns_total = sum(s["turns"] for s in samples)
    capture_s = sum(s["capture_s"] for s in samples)
    store, hook = _recall(store_rows), _recall(hook_rows)
    return {"turns": turns_total, "questions": len(store_rows), "captured": sum(s["captured"] for s in samples),
            "rows": sum(s["rows"] for s in samples),
            "store_path": store, "hook_path": hook,
            "all@10_difference": round(hook["all@10"] - store["all@10"], 3),
            "hook_process": _ms(processes), "hook_in_process": _ms([t for s in samples for t in s["hook_in_process_s"]]),
            "turns_per_second": round(turns_total / capture_s, 1) if capture_s else 0.0,
            "per_sample": [{"sample": s["sample"], "turns": s["turns"], "store all@10": _recall(s["store"], (10,)),
                            "hook all@10": _recall(s["hook"], (10,))} for s in samples]}


def summary(envelope: dict[str, Any]) -> str:
    s = envelope["result"]["summary"]
    lines = [f"# Capture through the hook path — {envelope['result']['data']}{' (quick)' if envelope['quick'] else ''}",
             "", f"{s['turns']:,} turns ({s['captured']:,} captured, kept as {s['rows']:,} memories: "
             f"repeated turns are counted on the first), {s['questions']:,} questions of categories 1–4; "
             "hybrid search.", "", "| path | all@5 | all@10 | all@20 | any@10 |", "|---|---|---|---|---|"]
    for name, key in (("store, one call per turn", "store_path"), ("Claude Code transcript + Stop hook", "hook_path")):
        r = s[key]
        lines.append(f"| {name} | {r['all@5']:.3f} | {r['all@10']:.3f} | {r['all@20']:.3f} | {r['any@10']:.3f} |")
    hp, hi = s["hook_process"], s["hook_in_process"]
    lines += ["", f"all@10 difference (hook − store): {s['all@10_difference']:+.3f}.",
              f"Hook wall time, a real `engram hook claude-code` process: p50 {hp['p50_ms']} ms, p95 {hp['p95_ms']} ms "
              f"({hp['n']} runs); the hook's own work in process: p50 {hi['p50_ms']} ms, p95 {hi['p95_ms']} ms.",
              f"Captured turns stored per second by the worker: {s['turns_per_second']}."]
    return "\n".join(lines) + "\n"


def run_suite(run: Run, options: ConversationOptions) -> dict[str, Any]:
    """Measure every conversation of ``options.data`` through both paths."""
    try:
        samples = json.loads(options.data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"capture: cannot read {options.data}: {exc}") from None
    if not isinstance(samples, list) or not all(isinstance(s, dict) and "conversation" in s and "qa" in s
                                                for s in samples):
        raise SystemExit(f"capture: {options.data} is not a list of LoCoMo samples ({{conversation, qa}} each)")
    if run.quick:
        samples = samples[:1]
    with engine_at(run.workspace("capture-model")) as model_owner:
        embedder = model_owner.embedder()
        started = time.perf_counter()
        measured = [measure_sample(run, sample, i, embedder) for i, sample in enumerate(samples)]
        seconds = time.perf_counter() - started
    processes = hook_processes(run, 5 if run.quick else HOOK_PROCESSES)
    return {"data": options.data.name, "seconds": round(seconds, 1), "summary": summarize(measured, processes)}
