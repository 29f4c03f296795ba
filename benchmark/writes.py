"""Suite `writes`: a memory written one exchange at a time, as an agent writes it, with and without maintenance.

An agent remembers a conversation with one `store` per turn. Each store is a LanceDB commit that leaves
a small fragment and a version; without maintenance, reads slow down with every one. This suite stores
5,000 exchanges one call at a time into a fresh workspace (the bundled embedding model, real LanceDB),
twice: with the maintenance schedule (store.maintenance_writes, the default) and with it off (maintenance
only after ingests, as before it existed). After 100, 1,000 and 5,000 stores it measures

- `store` latency p50/p95 over the last 100 stores,
- `search` latency p50/p95 (hybrid, and lexical only) over a fixed set of queries,
- the workspace's disk use, fragments and versions of its memories table;

and at the end the disk the maintained workspace keeps once writes go quiet (after the pass that follows
store.maintenance_idle_sec without a write), and the same searches on the same workspace freshly
compacted (every maintenance step run at once), the reference the maintained workspace is held to
(within 1.5×).

The exchanges are synthetic and seeded (two speakers, names, places and topics drawn from fixed lists),
so the run needs no data set and is the same every time.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from engram.core import Engine, Settings
from engram.core.store import inspection
from engram.core.store.maintenance import maintain

from .common import Run, engine_at, percentile
from .plots import loglog
from .suites import NoOptions

NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Nate", "Joanna", "Tim", "John", "Maria", "Deborah"]
PLACES = ["Boston", "the lake", "Lisbon", "the museum", "the office", "Kyoto", "the park", "Denver", "the beach"]
TOPICS = ["painting", "adoption", "pottery", "marathon training", "a job interview", "the band", "camping",
          "a cooking class", "volunteering", "the new puppy", "a book club", "moving house", "guitar lessons",
          "the garden", "a road trip", "yoga", "photography", "a startup idea", "the wedding", "chess"]
VERBS = ["started", "finished", "talked about", "planned", "loved", "worried about", "signed up for", "gave up on"]
WHEN = ["yesterday", "last week", "last May", "on Friday", "two years ago", "this morning", "next month"]
QUERIES = ["When did Caroline start painting?", "what did Melanie say about the marathon training",
           "road trip to Denver", "who signed up for the cooking class", "worried about a job interview",
           "the new puppy at the park", "guitar lessons next month", "Gina volunteering in Boston",
           "book club last week", "photography in Kyoto", "moving house plans", "yoga this morning",
           "Andrew and the band", "chess with Tim", "the wedding in Lisbon", "pottery at the museum"]
CHECKPOINTS = (100, 1_000, 5_000)
QUICK_CHECKPOINTS = (10, 30, 60)
QUICK_QUERIES = 6


def exchanges(seed: int) -> Any:
    """An endless, seeded conversation: (speaker, text) turns."""
    rng = random.Random(seed)
    turn = 0
    while True:
        speaker = NAMES[turn % 2]
        other = rng.choice(NAMES)
        text = (f"{speaker}: I {rng.choice(VERBS)} {rng.choice(TOPICS)} {rng.choice(WHEN)} with {other} "
                f"in {rng.choice(PLACES)}. It made me think about {rng.choice(TOPICS)}, and {other} said "
                f"{rng.choice(['it was great', 'we should do it again', 'it was hard', 'they want to try it too'])}.")
        yield speaker, text
        turn += 1


def _ms(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(1000 * statistics.median(values), 2), "p95_ms": round(1000 * percentile(values, 0.95), 2),
            "n": len(values)}


def _searches(engine: Engine, rounds: int, queries: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for mode, channels in (("hybrid", None), ("lexical", ["lexical"])):
        times: list[float] = []
        for _ in range(rounds):
            for query in queries:
                args: dict[str, Any] = {"query": query, "limit": 10}
                if channels:
                    args["channels"] = channels
                started = time.perf_counter()
                engine.call("search", args)
                times.append(time.perf_counter() - started)
        out[mode] = _ms(times)
    return out


def _disk(engine: Engine) -> dict[str, Any]:
    folder = engine.paths.workspace_dir(engine.store().name)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    memories = inspection.table(engine.store(), "memories")
    return {"bytes": size, "mb": round(size / 2**20, 2),
            "memory_fragments": memories.stats()["fragment_stats"]["num_fragments"],
            "memory_versions": len(memories.list_versions())}


def measure_arm(run: Run, name: str, maintenance_writes: int, embedder: Any) -> dict[str, Any]:
    """Store exchanges one at a time into a fresh workspace; measure at each checkpoint."""
    folder = run.workspace("writes-" + name)
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    # The quick run waits 2 s (not the default 30 s) for the pass that follows a burst once writes go quiet.
    store_settings: dict[str, Any] = {"maintenance_writes": maintenance_writes}
    if run.quick:
        store_settings["maintenance_idle_sec"] = 2.0
    settings = Settings.model_validate({"store": store_settings})
    checkpoints = QUICK_CHECKPOINTS if run.quick else CHECKPOINTS
    rounds = 1 if run.quick else 2
    queries = QUERIES[:QUICK_QUERIES] if run.quick else QUERIES
    engine = engine_at(folder, settings, embedder=embedder)
    turns = exchanges(run.seed)
    store_times: list[float] = []
    points: list[dict[str, Any]] = []
    started_all = time.perf_counter()
    for checkpoint in checkpoints:
        while len(store_times) < checkpoint:
            speaker, text = next(turns)
            started = time.perf_counter()
            engine.call("store", {"content": text, "kind": "exchange", "project": "conversation",
                                  "tags": [speaker.lower()]})
            store_times.append(time.perf_counter() - started)
        window = store_times[-min(100, checkpoint):]
        point = {"stores": checkpoint, "store": _ms(window), "search": _searches(engine, rounds, queries), "disk": _disk(engine),
                 "maintenance_runs": engine.internals().maintenance.runs}
        points.append(point)
        print(f"writes/{name}: {checkpoint} stores, store p50 {point['store']['p50_ms']} ms, search p50 "
              f"{point['search']['hybrid']['p50_ms']} ms, {point['disk']['mb']} MB", flush=True)
    seconds = time.perf_counter() - started_all
    engine.internals().maintenance.wait_idle(600)
    quiet: dict[str, Any] | None = None
    if maintenance_writes:
        # What the workspace keeps once the agent stops writing: the pass that follows idle_sec of quiet.
        # (It may have run already, while the last checkpoint's searches ran: then nothing is pending.)
        waited = time.perf_counter()
        while engine.internals().maintenance.idle_pending and time.perf_counter() - waited < settings.store.maintenance_idle_sec + 120:
            time.sleep(0.2)
        engine.internals().maintenance.wait_idle(600)
        quiet = {"disk": _disk(engine), "waited_s": round(time.perf_counter() - waited, 1)}
    started = time.perf_counter()
    engine.internals().writer.run(maintain, engine.store(), engine.settings.store.vector_index_min_rows)
    compact_seconds = time.perf_counter() - started
    fresh = {"search": _searches(engine, rounds, queries), "disk": _disk(engine), "compact_seconds": round(compact_seconds, 3)}
    engine.close()  # (the schedule's figures stay readable)
    longest, total = engine.internals().maintenance.step_seconds
    return {"maintenance_writes": maintenance_writes, "points": points, "once_quiet": quiet, "freshly_compacted": fresh,
            "seconds": round(seconds, 1), "maintenance": {"longest_step_ms": round(1000 * longest, 1),
                                                          "total_s": round(total, 2)}}


def run_suite(run: Run, options: NoOptions) -> dict[str, Any]:
    # One copy of the bundled embedding model, loaded (and closed) by an engine of its own, serves both arms.
    with engine_at(run.workspace("writes-model")) as model_owner:
        embedder = model_owner.embedder()
        maintained = measure_arm(run, "maintained", Settings().store.maintenance_writes, embedder)
        unmaintained = measure_arm(run, "unmaintained", 0, embedder)
    last = maintained["points"][-1]
    ratio = last["search"]["hybrid"]["p50_ms"] / maintained["freshly_compacted"]["search"]["hybrid"]["p50_ms"]
    xs = [p["stores"] for p in maintained["points"]]
    loglog(run.folder / "writes.png", "Single stores: search and store latency", xs, {
        "search p50, maintained": [p["search"]["hybrid"]["p50_ms"] for p in maintained["points"]],
        "search p50, unmaintained": [p["search"]["hybrid"]["p50_ms"] for p in unmaintained["points"]],
        "store p50, maintained": [p["store"]["p50_ms"] for p in maintained["points"]],
        "store p50, unmaintained": [p["store"]["p50_ms"] for p in unmaintained["points"]],
    }, "stores", "ms")
    return {"queries": QUICK_QUERIES if run.quick else len(QUERIES), "rounds": 1 if run.quick else 2,
            "arms": {"maintained": maintained, "unmaintained": unmaintained},
            "search_ratio_to_fresh": round(ratio, 2)}


def _rows(arm: str, data: dict[str, Any]) -> list[str]:
    lines = []
    for p in data["points"]:
        lines.append(f"| {arm} | {p['stores']:,} | {p['store']['p50_ms']} / {p['store']['p95_ms']} | "
                     f"{p['search']['hybrid']['p50_ms']} / {p['search']['hybrid']['p95_ms']} | "
                     f"{p['search']['lexical']['p50_ms']} | {p['disk']['mb']} | {p['disk']['memory_fragments']} | "
                     f"{p['disk']['memory_versions']} |")
    fresh = data["freshly_compacted"]
    if data["once_quiet"]:
        q = data["once_quiet"]["disk"]
        lines.append(f"| {arm}, once quiet ({data['once_quiet']['waited_s']} s later) | "
                     f"{data['points'][-1]['stores']:,} | – | – | – | {q['mb']} | {q['memory_fragments']} | "
                     f"{q['memory_versions']} |")
    lines.append(f"| {arm}, then compacted | {data['points'][-1]['stores']:,} | – | "
                 f"{fresh['search']['hybrid']['p50_ms']} / {fresh['search']['hybrid']['p95_ms']} | "
                 f"{fresh['search']['lexical']['p50_ms']} | {fresh['disk']['mb']} | "
                 f"{fresh['disk']['memory_fragments']} | {fresh['disk']['memory_versions']} |")
    return lines


def summary(envelope: dict[str, Any]) -> str:
    result, machine = envelope["result"], envelope["machine"]
    maintained, unmaintained = result["arms"]["maintained"], result["arms"]["unmaintained"]
    last = maintained["points"][-1]
    flat = [p["store"]["p50_ms"] for p in maintained["points"]]
    return "\n".join([
        f"# writes{' (quick)' if envelope['quick'] else ''}: single `store` calls, with and without maintenance",
        "",
        f"Machine: {machine['cpu']}, {machine['cpu_count']} cores. Seeded synthetic exchanges "
        f"(seed {envelope['seed']}); {result['queries']} queries × {result['rounds']} rounds per search figure.",
        "",
        "| arm | stores | store p50 / p95 ms (last 100) | hybrid search p50 / p95 ms | lexical p50 ms | disk MB | "
        "fragments | versions |",
        "|---|---|---|---|---|---|---|---|",
        *_rows("maintained", maintained),
        *_rows("unmaintained", unmaintained),
        "",
        f"Maintained: search p50 after {last['stores']:,} stores is {result['search_ratio_to_fresh']:.2f}× the "
        f"freshly compacted workspace (target ≤ 1.5×); store p50 at the checkpoints "
        f"{', '.join(f'{v} ms' for v in flat)}; {last['maintenance_runs']} maintenance runs taking "
        f"{maintained['maintenance']['total_s']} s in all, the longest step (the longest a write waited for "
        f"maintenance) {maintained['maintenance']['longest_step_ms']} ms; {maintained['seconds']} s for all stores "
        f"(unmaintained: {unmaintained['seconds']} s).",
        "",
    ])
