"""One size of the speed suite, in its own process (so its peak RSS is its own).

Reads a JSON job on stdin: {folder, queries, plans, configs, repeat}; prints one JSON line with
p50/p95 latency per search configuration and for recall, and the process's peak RSS.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .common import engine_at, percentile


def peak_rss_mb() -> float | None:
    """This process's peak resident memory (None where the OS does not say, e.g. Windows)."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 1024 if sys.platform != "darwin" else peak / 2**20, 1)


def main() -> None:
    job = json.loads(sys.stdin.read())
    result: dict = {"search": {}}
    with engine_at(Path(job["folder"])) as engine:
        engine.call("search", {"query": "warm up the model and the tables"})
        for name, channels in job["configs"].items():
            times = []
            for _ in range(job["repeat"]):
                for q in job["queries"]:
                    started = time.perf_counter()
                    engine.call("search", {"query": q, "channels": channels})
                    times.append(1000 * (time.perf_counter() - started))
            result["search"][name] = {"p50_ms": round(percentile(times, 0.5), 1),
                                      "p95_ms": round(percentile(times, 0.95), 1), "n": len(times)}
        times = []
        for _ in range(job["repeat"]):
            for plan in job["plans"]:
                started = time.perf_counter()
                engine.call("recall", {"question": "benchmark", "plan": plan})
                times.append(1000 * (time.perf_counter() - started))
        result["recall"] = {"p50_ms": round(percentile(times, 0.5), 1), "p95_ms": round(percentile(times, 0.95), 1),
                            "n": len(times)}
        result["memories"] = engine.call("status").result.memories
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
