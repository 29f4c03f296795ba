"""Suite `models`: the generation runtime with the test model (SmolLM2-135M-Instruct Q4_1) on this machine.

Load time (first load of the file), prompt and generation speed in tokens/s with 2 threads, the
cost of the deadline checks per token (the same generations with the checks on and off, and the
check itself timed alone), and the cost of verifying the file: cold (no record yet: hashed) and warm
(every later call: its identity checked against the record).
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from engram.core.catalog import PLAN_TOOLS
from engram.core.manifest import ModelEntry, model_entry
from engram.core.models.files import ModelFiles
from engram.core.models.generation import LoadedModel
from engram.core.models.pool import ModelPool
from engram.core.recall.assist import helper_system

from .common import Run, note_model
from .suites import NoOptions

PROMPT = ("Summarise the following notes in three sentences.\n\n"
          + " ".join(f"Note {i}: the service restarts cleanly after a deploy, and the cache warms in a minute."
                     for i in range(20)))


def _messages(i: int) -> list[dict[str, str]]:
    # The system message comes first in the chat template: a different one per run leaves no shared prefix.
    return [{"role": "system", "content": f"Request {i}: you summarise notes."}, {"role": "user", "content": PROMPT}]


def _helper_requests(i: int) -> str:
    """Recall's two tasks in turn, each with its own text after the fixed instructions."""
    if i % 2 == 0:
        return f"Task: PLAN\nProjects: ops, web\nQuestion: How do we deploy service {i}, and how do we roll it back?"
    evidence = "\n\n".join(f"[{n}] ops · deploy-{i}.md:1-9\nStep {n}: restart the unit, then check the cache."
                             for n in range(1, 5))
    return f"Task: ANSWER\nQuestion: How do we deploy service {i}?\n\nEvidence:\n{evidence}"


def prefix_reuse(model: LoadedModel, calls: int = 6) -> dict[str, float]:
    """Prompt tokens evaluated per call for recall's alternating plan/answer requests: every prompt starting with
    the same fixed instructions (llama.cpp reuses them), and the same prompts made to differ from their first
    token (``Request i``), as prompts without a shared prefix would."""
    out: dict[str, float] = {}
    for label, unique in (("shared", False), ("unshared", True)):
        evaluated, total, read = [], [], []
        for i in range(calls + 1):
            system = (f"Request {i}. " if unique else "") + helper_system(PLAN_TOOLS)
            got = model.complete([{"role": "system", "content": system}, {"role": "user", "content": _helper_requests(i)}],
                                 deadline=time.monotonic() + 600, max_tokens=4)
            if i == 0:
                continue  # the first call of each series evaluates everything
            evaluated.append(got.evaluated_tokens or 0)
            total.append(got.prompt_tokens)
            read.append(got.first_token_s or 0.0)
        out[f"{label}_prompt_tokens"] = round(statistics.mean(total), 1)
        out[f"{label}_evaluated_tokens"] = round(statistics.mean(evaluated), 1)
        out[f"{label}_first_token_s"] = round(statistics.median(read), 3)
    out["calls"] = calls
    return out


def verify_cost(entry: ModelEntry, warm_calls: int = 20) -> dict[str, float]:
    """Milliseconds of ``ModelFiles.verify``: the first call in an empty models folder (it hashes the file;
    the file is likely in the page cache) and the median and maximum of ``warm_calls`` calls after it."""
    with tempfile.TemporaryDirectory() as folder:
        files = ModelFiles(Path(folder))
        started = time.perf_counter()
        path = files.verify(entry)
        cold = time.perf_counter() - started
        warm = []
        for _ in range(warm_calls):
            started = time.perf_counter()
            files.verify(entry)
            warm.append(time.perf_counter() - started)
    size_mb = path.stat().st_size / 1e6
    return {"file_mb": round(size_mb, 1), "cold": round(cold * 1000, 1), "hash_mb_s": round(size_mb / cold),
            "warm_calls": warm_calls, "warm_median": round(statistics.median(warm) * 1000, 3),
            "warm_max": round(max(warm) * 1000, 3)}


def run_suite(run: Run, options: NoOptions) -> dict[str, Any]:
    entry = model_entry("smollm2-135m-instruct")
    verify = verify_cost(entry)
    path = ModelFiles(run.cache).verify(entry)
    note_model(f"generation: {entry.id}", path, entry.sha256 or None)
    repeats = 1 if run.quick else 5
    max_tokens = 32 if run.quick else 128
    loads = []
    for _ in range(repeats):
        pool = ModelPool(threads=2)
        started = time.perf_counter()
        pool.get("bench", path, n_ctx=2048)
        loads.append(time.perf_counter() - started)
        pool.close()
    pool = ModelPool(threads=2)
    model = pool.get("bench", path, n_ctx=2048)
    model.complete(_messages(-1), deadline=time.monotonic() + 120, max_tokens=8)  # warm up
    runs: dict[bool, list] = {True: [], False: []}
    for i in range(repeats * 2):
        check = i % 2 == 0
        # Each prompt differs from its first tokens on, so llama.cpp cannot reuse the last run's KV cache.
        runs[check].append(model.complete(_messages(i), deadline=time.monotonic() + 600, max_tokens=max_tokens,
                                          check_deadline=check))
    reuse = prefix_reuse(model, 1 if run.quick else 6)
    pool.close()

    def speed(outs: list) -> dict[str, float]:
        prefill = [o.prompt_tokens / o.first_token_s for o in outs if o.first_token_s]
        decode = [(o.tokens - 1) / (o.seconds - o.first_token_s) for o in outs if o.first_token_s and o.tokens > 1]
        # Decode time per generated token: the prompt's prefill (seconds for 485 tokens) is left out.
        per_token = [(o.seconds - o.first_token_s) / (o.tokens - 1) for o in outs if o.first_token_s and o.tokens > 1]
        return {"prompt_tok_s": round(statistics.median(prefill), 1), "gen_tok_s": round(statistics.median(decode), 1),
                "ms_per_token": round(1000 * statistics.median(per_token), 3)}

    with_checks, without = speed(runs[True]), speed(runs[False])
    spread = [(o.seconds - o.first_token_s) / (o.tokens - 1) * 1000 for o in runs[True] + runs[False]
              if o.first_token_s and o.tokens > 1]
    noise_ms = statistics.pstdev(spread) if len(spread) > 1 else 0.0
    cancel, deadline = threading.Event(), time.monotonic() + 600
    n = 1_000_000
    started = time.perf_counter()
    for _ in range(n):
        if cancel.is_set() or time.monotonic() >= deadline:
            break
    check_ns = (time.perf_counter() - started) / n * 1e9
    result = {"model": entry.name, "file": path.name, "threads": 2, "repeats": repeats,
              "prompt_tokens": runs[True][0].prompt_tokens, "max_tokens": max_tokens,
              "load_s": {"median": round(statistics.median(loads), 3), "min": round(min(loads), 3),
                         "max": round(max(loads), 3)},
              "with_deadline_checks": with_checks, "without_deadline_checks": without,
              "deadline_check_ns": round(check_ns, 1),
              "deadline_overhead_ms_per_token": round(with_checks["ms_per_token"] - without["ms_per_token"], 3),
              "ms_per_token_stdev": round(noise_ms, 3),
              "verify_ms": verify, "prefix_reuse": reuse}
    return result


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    with_checks, without = result["with_deadline_checks"], result["without_deadline_checks"]
    verify, reuse, max_tokens = result["verify_ms"], result["prefix_reuse"], result["max_tokens"]
    check_ns, noise_ms, repeats = result["deadline_check_ns"], result["ms_per_token_stdev"], result["repeats"]
    lines = [f"# Generation runtime — {result['model']}{' (quick)' if envelope['quick'] else ''}", "",
             f"2 threads, prompt of {result['prompt_tokens']} tokens, up to {max_tokens} generated; medians of "
             f"{repeats} runs.", "",
             f"- load: {result['load_s']['median']} s (min {result['load_s']['min']}, max {result['load_s']['max']})",
             f"- prompt: {with_checks['prompt_tok_s']} tokens/s; generation: {with_checks['gen_tok_s']} tokens/s",
             f"- deadline checks: {check_ns:.0f} ns each; decode time per token {with_checks['ms_per_token']} ms with them vs "
             f"{without['ms_per_token']} ms without (difference {result['deadline_overhead_ms_per_token']} ms; "
             f"run-to-run standard deviation {noise_ms:.3f} ms)",
             f"- verification: {verify['cold']} ms cold (the first call hashes the {verify['file_mb']} MB file, "
             f"{verify['hash_mb_s']} MB/s), then {verify['warm_median']} ms warm (median of {verify['warm_calls']} "
             f"calls, max {verify['warm_max']} ms: the file's identity checked against its record)",
             f"- cached prefix (recall's plan and answer requests in turn, {reuse['calls']} calls): "
             f"{reuse['shared_evaluated_tokens']:.0f} of {reuse['shared_prompt_tokens']:.0f} prompt tokens evaluated per "
             f"call with the shared instructions vs {reuse['unshared_evaluated_tokens']:.0f} of "
             f"{reuse['unshared_prompt_tokens']:.0f} without; first token after {reuse['shared_first_token_s']} s vs "
             f"{reuse['unshared_first_token_s']} s", ""]
    return "\n".join(lines)
