"""Suite `reliability`: a day of faults, counted. The same scenarios run smaller in tests/test_reliability.py.

    python -m benchmark reliability [--kills 20 --files 96 --editors 8 --calls 250]

1. **Kills during ingest**: a folder of ``files`` Markdown files is ingested ``kills`` times by a worker process
   (benchmark/reliability_worker.py: it stores one note, then ingests, with the deterministic embedder so that a
   kill lands in the store's writes), each time after a quarter of the files changed, and killed with SIGKILL at
   a point drawn from: after its note was stored, after ingest batch 1–4. A last worker runs to the end. Then the
   workspace is read: memories written twice, sources missing or not current, chunk counts that disagree, notes
   whose `store` returned but that are gone, and `part_of` edges duplicated or missing.
2. **Editors at once**: ``editors`` clients of one running service (`engram service`, a real process, the bundled
   model) each make ``calls`` calls drawn from store, search, get_memory, status, kg_edit, list_sources and
   recall; every error is counted, then every acknowledged store and the last facts are read back.
3. **Two machines, one bucket**: two processes (benchmark/shared_worker.py) join one shared workspace in an
   S3-compatible bucket on loopback (moto) and store ``notes`` notes each at the same time; each machine, opened
   again, must see every note of both exactly once.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from engram.core import Engine, Paths, Settings
from engram.core.store import filters as sql
from engram.core.store import inspection
from standins.embedder import HashingEmbedder

from .common import ROOT, Run, percentile
from .suites import ReliabilityOptions

KILL_POINTS = ("stored", "batch 1", "batch 2", "batch 3", "batch 4")


def document(i: int, version: int) -> str:
    sections = "\n\n".join(f"## Part {k}\n\n" + f"File {i} version {version} part {k} talks about topic{i % 9}. " * 12
                           for k in range(3))
    return f"# Document {i}\n\n{sections}\n"


def kills_during_ingest(folder: Path, kills: int, files: int, seed: int) -> dict[str, Any]:
    """Run the kill scenario in ``folder`` (a fresh one) and read back what survived.

    Raises:
        RuntimeError: the last worker, which nobody kills, did not finish (its exit status is in the message).
    """
    rng = random.Random(seed)
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    for i in range(files):
        (corpus / f"f{i:03d}.md").write_text(document(i, 0))
    notes: list[str] = []
    kill_points: list[str] = []

    def worker(note: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "benchmark.reliability_worker", str(folder), str(corpus), note],
                                cwd=ROOT.parent, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    started = time.perf_counter()
    for round_ in range(kills):
        for i in rng.sample(range(files), max(1, files // 4)):  # every run finds work: a quarter changed
            (corpus / f"f{i:03d}.md").write_text(document(i, round_ + 1))
        proc = worker(f"note of round {round_}")
        kill_after = rng.choice(KILL_POINTS)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("stored "):
                notes.append(line.split()[1])
            if line.strip() in (kill_after, "done"):
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kill_points.append(kill_after)
    final = worker("note of the last round")
    out, _ = final.communicate(timeout=600)
    if final.returncode != 0 or not out.rstrip().endswith("done"):
        raise RuntimeError(f"the last ingest, which nobody killed, ended with status {final.returncode}: {out[-500:]}")
    notes.append(out.split()[1])
    seconds = time.perf_counter() - started

    paths = Paths(folder / "data", folder / "config", folder / "logs")
    with Engine(paths, UNIQUE_NOTES, embedder=HashingEmbedder()) as engine:
        store = engine.store()
        memories = inspection.rows(store, "memories", None, ["id", "source", "kind", "content"])
        ids = [m["id"] for m in memories]
        sources = {r["source"]: r for r in inspection.rows(store, "sources", None)}
        expected = {(corpus / f"f{i:03d}.md").resolve().as_posix() for i in range(files)}
        not_current, wrong_chunks = [], []
        for source, row in sources.items():
            chunks = [m for m in memories if m["source"] == source]
            text = Path(source).read_text()
            if row["content_hash"] != hashlib.sha256(text.encode()).hexdigest():
                not_current.append(source)
            if len(chunks) != row["chunk_count"] or not all(c["content"] in text for c in chunks):
                wrong_chunks.append(source)
        kept = {m["id"] for m in memories if m["kind"] == "exchange"}
        edges = inspection.rows(store, "edges", sql.in_list("relation", ["part_of"]), ["id", "src"])
    return {"kills": kills, "files": files, "seconds": round(seconds, 1),
            "kill_points": {p: kill_points.count(p) for p in KILL_POINTS},
            "memories": len(ids), "written_twice": len(ids) - len(set(ids)),
            "sources_missing": sorted(expected - set(sources)), "sources_unexpected": sorted(set(sources) - expected),
            "sources_not_current": sorted(not_current), "sources_with_wrong_chunks": sorted(wrong_chunks),
            "notes_acknowledged": len(notes), "notes_lost": sorted(set(notes) - kept),
            "notes_unacknowledged_kept": sorted(kept - set(notes)),
            "part_of_edges": len(edges), "part_of_edges_duplicated": len(edges) - len({e["id"] for e in edges}),
            "part_of_edges_expected": sum(r["chunk_count"] for r in sources.values())}


async def editors_at_once(paths: Paths, editors: int, calls: int, limit_s: float = 900) -> dict[str, Any]:
    """``editors`` clients of the service announced in ``paths``' data folder, ``calls`` calls each; then every
    acknowledged store and the last 50 facts read back. Returns the counts and latencies."""
    from engram.mcp.remote import RemoteBackend

    stored: dict[str, str] = {}
    facts: list[str] = []
    errors: list[str] = []
    latency: dict[str, list[float]] = {}

    async def editor(n: int) -> None:
        rng = random.Random(n)
        backend = RemoteBackend(paths, start_timeout=60)
        try:
            for i in range(calls):
                action = rng.choices(["store", "search", "get", "status", "fact", "sources", "recall"],
                                     weights=[5, 4, 1, 1, 1, 1, 1])[0]
                started = time.perf_counter()
                try:
                    if action == "store":
                        marker = f"editor{n}call{i}"
                        text = await backend.call("store", {"content": f"{marker}: we decided to use plan {i % 7}"})
                        stored[text.split()[2]] = marker
                    elif action == "search":
                        await backend.call("search", {"query": f"plan {rng.randrange(7)}", "limit": 5})
                    elif action == "get" and stored:
                        await backend.call("get_memory", {"ids": rng.sample(sorted(stored), min(3, len(stored)))})
                    elif action == "fact":
                        text = await backend.call("kg_edit", {"action": "add", "subject": f"editor{n}",
                                                              "predicate": "made", "object": f"call {i}"})
                        facts.append(text.split()[1].rstrip(":"))
                    elif action == "sources":
                        await backend.call("list_sources", {})
                    elif action == "recall":
                        await backend.call("recall", {"question": "which plan did we decide on?",
                                                      "plan": [{"tool": "search", "args": {"query": "plan"}}]})
                    else:
                        await backend.call("status", {})
                except Exception as exc:
                    errors.append(f"editor {n} call {i} ({action}): {type(exc).__name__}: {exc}")
                latency.setdefault(action, []).append(time.perf_counter() - started)
        finally:
            await backend.aclose()

    started = time.perf_counter()
    with anyio.fail_after(limit_s):
        async with anyio.create_task_group() as tasks:
            for n in range(editors):
                tasks.start_soon(editor, n)
    seconds = time.perf_counter() - started
    lost: list[str] = []
    check = RemoteBackend(paths)
    try:
        ids = sorted(stored)
        for start in range(0, len(ids), 20):
            text = await check.call("get_memory", {"ids": ids[start:start + 20], "max_chars": 12000})
            lost += [stored[i] for i in ids[start:start + 20] if stored[i] not in text]
        status = await check.call("status", {})
        found = await check.call("kg_query", {"predicate": "made", "limit": 200})
    finally:
        await check.aclose()
    return {"editors": editors, "calls_per_editor": calls, "calls": editors * calls, "seconds": round(seconds, 1),
            "errors": errors, "stores_acknowledged": len(stored), "stores_lost": lost,
            "status_counts_every_store": f"{len(stored)} memories" in status,
            "facts_added": len(facts), "last_facts_missing": [f for f in facts[-50:] if f not in found],
            "latency_ms": {a: {"p50": round(1000 * percentile(v, 0.5), 1), "p95": round(1000 * percentile(v, 0.95), 1),
                               "n": len(v)} for a, v in sorted(latency.items())}}


def two_machines_storing(folder: Path, endpoint: str, uri: str, notes: int) -> dict[str, Any]:
    """Two worker processes store ``notes`` notes each into the shared workspace at ``uri`` (endpoint
    ``endpoint``, the loopback bucket's open key); then each machine's view is read back.

    Raises:
        RuntimeError: a worker failed (its stderr's end is in the message).
    """
    from collections import Counter

    from standins.s3 import OPEN_KEY

    started = time.perf_counter()
    workers = [subprocess.Popen([sys.executable, "-m", "benchmark.shared_worker", str(folder / tag), endpoint, uri,
                                 tag, str(notes)], cwd=ROOT.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for tag in ("alpha", "beta")]
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=1800)
        if worker.returncode != 0:
            raise RuntimeError(f"a shared-workspace worker failed: {err[-3000:]}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    seconds = time.perf_counter() - started
    expected = {f"note {i} of {tag}: the {tag} machine remembers item {i}" for tag in ("alpha", "beta")
                for i in range(notes)}
    views: dict[str, Any] = {}
    environ = {"AWS_ACCESS_KEY_ID": OPEN_KEY[0], "AWS_SECRET_ACCESS_KEY": OPEN_KEY[1]}
    for tag in ("alpha", "beta"):  # each machine, opened again
        base = folder / tag
        with Engine(Paths(base / "data", base / "config", base / "logs"), UNIQUE_NOTES, embedder=HashingEmbedder(),
                    environ=environ) as engine:
            store = engine.store("team")
            seen = Counter(r["content"] for r in inspection.rows(store, "memories", None, ["content"]))
            hit = engine.call("search", {"query": f"beta machine remembers item {notes - 1}", "workspace": "team",
                                         "limit": 3}).result.hits
        views[tag] = {"notes": sum(seen.values()), "missing": sorted(expected - set(seen))[:20],
                      "missing_count": len(expected - set(seen)),
                      "twice": sorted(n for n, times in seen.items() if times > 1)[:20],
                      "twice_count": sum(1 for times in seen.values() if times > 1),
                      "search_finds_the_last_note": bool(hit) and hit[0].content ==
                      f"note {notes - 1} of beta: the beta machine remembers item {notes - 1}"}
    return {"notes_per_machine": notes, "seconds": round(seconds, 1),
            "stored": {r["tag"]: r["stored"] for r in reports}, "errors": [e for r in reports for e in r["errors"]],
            "views": views}


#: The suite's notes are unique by construction and alike but for a number: only exact duplicates are looked for.
UNIQUE_NOTES = Settings.model_validate({"upkeep": {"duplicates": "exact"}})


def start_service(folder: Path, model_file: Path | None = None) -> tuple[subprocess.Popen[bytes], Paths, dict[str, str]]:
    """A headless ``engram service`` on ``folder``'s data, config and log folders, announced and answering.

    Raises:
        RuntimeError: it did not announce itself within 60 s.
    """
    from engram.mcp.service_files import read_info

    paths = Paths(folder / "data", folder / "config", folder / "logs")
    if model_file is not None:
        (paths.data_dir / "models").mkdir(parents=True, exist_ok=True)
        shutil.copy(model_file, paths.data_dir / "models" / model_file.name)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
           "ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir),
           "ENGRAM_LOG_DIR": str(paths.log_dir), "ENGRAM_EMBED_THREADS": "2",
           # The editors' notes differ by a marker alone, unique by construction: counted as near duplicates of one
           # another they would leave no text to check each acknowledged store by (what this suite measures).
           "ENGRAM_UPKEEP_DUPLICATES": "exact"}
    proc = subprocess.Popen([sys.executable, "-m", "engram.app", "service"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        info = read_info(paths.data_dir)
        if info and info.pid == proc.pid:
            return proc, paths, env
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the service did not announce itself within 60 s")


def run_suite(run: Run, options: ReliabilityOptions) -> dict[str, Any]:
    kills, files = (3, 24) if run.quick else (options.kills, options.files)
    editors, calls = (2, 10) if run.quick else (options.editors, options.calls)
    with tempfile.TemporaryDirectory(prefix="engram-reliability-") as tmp:
        killed = kills_during_ingest(Path(tmp) / "kills", kills, files, run.seed)
        print(f"reliability kills: {killed['notes_acknowledged']} notes, {len(killed['notes_lost'])} lost", flush=True)
        proc, paths, _ = start_service(Path(tmp) / "editors")
        try:
            load = anyio.run(editors_at_once, paths, editors, calls)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        print(f"reliability editors: {load['calls']} calls, {len(load['errors'])} errors", flush=True)
        from standins.s3 import LoopbackS3

        s3 = LoopbackS3()
        try:
            s3.create_bucket("team-memory")
            shared = two_machines_storing(Path(tmp) / "machines", s3.endpoint, "s3://team-memory/engram/concurrent",
                                          20 if run.quick else options.notes)
        finally:
            s3.close()
        print(f"reliability two machines: {shared['stored']} stored, views {shared['views']}", flush=True)
    return {"kills_during_ingest": killed, "editors_at_once": load, "two_machines": shared}


def summary(envelope: dict[str, Any]) -> str:
    killed, load = envelope["result"]["kills_during_ingest"], envelope["result"]["editors_at_once"]
    points = ", ".join(f"{p} {n}" for p, n in killed["kill_points"].items())
    lines = [f"# Reliability{' (quick)' if envelope['quick'] else ''}", "",
             f"**{killed['kills']} ingests killed with SIGKILL** ({points}), {killed['files']} files, a quarter "
             f"changed before each, {killed['seconds']} s in all:", "",
             "| notes acknowledged | lost | memories written twice | sources missing / not current / wrong chunks | "
             "part_of edges (expected) | duplicated |", "|---|---|---|---|---|---|",
             f"| {killed['notes_acknowledged']} | {len(killed['notes_lost'])} | {killed['written_twice']} | "
             f"{len(killed['sources_missing'])} / {len(killed['sources_not_current'])} / "
             f"{len(killed['sources_with_wrong_chunks'])} | {killed['part_of_edges']} "
             f"({killed['part_of_edges_expected']}) | {killed['part_of_edges_duplicated']} |", "",
             f"**{load['editors']} editors × {load['calls_per_editor']} calls** on one service, {load['seconds']} s: "
             f"{len(load['errors'])} errors, {load['stores_acknowledged']} stores acknowledged, "
             f"{len(load['stores_lost'])} lost; status counted every store: "
             f"{'yes' if load['status_counts_every_store'] else 'no'}; of the last 50 of {load['facts_added']} facts "
             f"{len(load['last_facts_missing'])} missing.", "",
             "| call | n | p50 ms | p95 ms |", "|---|---|---|---|"]
    lines += [f"| {a} | {v['n']} | {v['p50']} | {v['p95']} |" for a, v in load["latency_ms"].items()]
    shared = envelope["result"].get("two_machines")
    if shared:
        lines += ["", f"**Two machines × {shared['notes_per_machine']} notes** into one shared workspace in a bucket on "
                      f"loopback, at the same time ({shared['seconds']} s): stored {shared['stored']}, "
                      f"{len(shared['errors'])} errors.", "", "| machine | notes seen | missing | seen twice | "
                      "search finds the last note |", "|---|---|---|---|---|"]
        lines += [f"| {tag} | {v['notes']} | {v['missing_count']} | {v['twice_count']} | "
                  f"{'yes' if v['search_finds_the_last_note'] else 'no'} |" for tag, v in shared["views"].items()]
    return "\n".join(lines) + "\n"
