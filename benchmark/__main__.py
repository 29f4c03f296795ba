"""The benchmark runner: ``python -m benchmark <suite> [options]`` (see benchmark/README.md).

Suites: recall, quality, speed, ingest (where a fresh ingest's time goes; an edit re-ingested), mcp, models, budget, writes, shared (a workspace in an S3 bucket on loopback), conversation (LoCoMo, with --data), recall-llm (with
--model), chat (with one or more --model), or all (neither recall-llm nor chat; quality and conversation only where their data is); ``fetch-models``
downloads the Qwen2.5-Coder GGUFs recall-llm is measured with (benchmark/bench_models.py). Each writes result.json, summary.md and its plots under
``benchmark/results/<suite>-<UTC timestamp>/`` (``--results`` moves them) and prints the summary.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import ROOT, Run

DEFAULT_SCIFACT = ROOT.parents[1] / "shared" / "data" / "scifact.zip"
DEFAULT_LOCOMO = ROOT.parents[1] / "shared" / "data" / "locomo-public.json"
SUITES = ("recall", "quality", "conversation", "speed", "ingest", "mcp", "models", "budget", "writes", "shared")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=[*SUITES, "recall-llm", "chat", "all", "fetch-models"])
    parser.add_argument("--quick", action="store_true", help="A small smoke run of the same code paths.")
    parser.add_argument("--seed", type=int, default=7, help="Seed for every sampled choice.")
    parser.add_argument("--lookups", type=Path, default=ROOT / "django-lookups.json",
                        help="Lookups file (format of django-lookups.json) for recall, speed, recall-llm and chat.")
    parser.add_argument("--data", type=Path, default=None,
                        help="quality: scifact.zip (default ../shared/data/scifact.zip); conversation: a LoCoMo-format "
                             "JSON file (default ../shared/data/locomo-public.json).")
    parser.add_argument("--model", type=Path, action="append", default=[],
                        help="recall-llm: the GGUF of the helper model to measure; chat: a chat model's GGUF (repeat "
                             "--model to measure several, one after another).")
    parser.add_argument("--threads", type=int, default=2, help="chat: tagger.local.threads, the model's CPU threads.")
    parser.add_argument("--timeout", type=float, default=30.0, help="recall-llm: recall.llm_timeout_sec.")
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="Where result folders go.")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache", help="Corpora and workspaces, kept between runs.")
    args = parser.parse_args(argv)
    if args.suite == "fetch-models":
        from .bench_models import main as fetch_models

        return fetch_models()
    run = Run(quick=args.quick, seed=args.seed, cache=args.cache.resolve(), results=args.results.resolve())
    suites = SUITES if args.suite == "all" else (args.suite,)
    for suite in suites:
        data = args.data or (DEFAULT_LOCOMO if suite == "conversation" else DEFAULT_SCIFACT)
        if suite == "quality" and not data.is_file():
            print(f"quality: skipped, no SciFact file at {data} (give --data PATH)", file=sys.stderr)
            continue
        if suite == "conversation" and not data.is_file():
            print(f"conversation: skipped, no LoCoMo file at {data} (give --data PATH)", file=sys.stderr)
            continue
        if suite == "conversation":
            from .conversation import run_suite as conversation

            folder = conversation(run, data)
        elif suite == "recall-llm":
            if len(args.model) != 1 or not args.model[0].is_file():
                parser.error("recall-llm needs one --model PATH to a GGUF file")
            from .recall_llm import run_suite as recall_llm

            folder = recall_llm(run, args.lookups, args.model[0], args.timeout)
        elif suite == "chat":
            missing = [str(m) for m in args.model if not m.is_file()]
            if not args.model or missing:
                parser.error("chat needs --model PATH to a GGUF file (repeat it for more models)"
                             + (f"; not a file: {', '.join(missing)}" if missing else ""))
            if args.threads < 1:
                parser.error("--threads must be at least 1")
            from .chat import run_suite as chat

            folder = chat(run, args.lookups, args.model, args.threads)
        elif suite == "recall":
            from .recall import run_suite as recall

            folder = recall(run, args.lookups)
        elif suite == "quality":
            from .quality import run_suite as quality

            folder = quality(run, data)
        elif suite == "speed":
            from .speed import run_suite as speed

            folder = speed(run, args.lookups)
        elif suite == "budget":
            from .budget import run_suite as budget

            folder = budget(run, args.lookups)
        elif suite == "ingest":
            from .ingest import run_suite as ingest

            folder = ingest(run, args.lookups)
        elif suite == "shared":
            from .shared import run_suite as shared

            folder = shared(run, args.lookups)
        elif suite == "writes":
            from .writes import run_suite as writes

            folder = writes(run)
        elif suite == "models":
            from .models import run_suite as models

            folder = models(run)
        else:
            from .mcp_startup import run_suite as mcp

            folder = mcp(run)
        print((folder / "summary.md").read_text())
        print(f"written to {folder}\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
