"""The benchmark runner: ``python -m benchmark <suite> [options]`` (see benchmark/README.md).

Suites are registered in benchmark/suites.py; ``all`` runs every suite marked for it (quality and conversation
only where their data is). ``report`` rebuilds RESULTS.md's generated parts from the result files;
``fetch-models`` downloads the Qwen2.5-Coder GGUFs recall-llm and chat are measured with. Each suite writes
result.json (one envelope: what ran, on which commit, settings and models, machine, time; benchmark/harness.py),
summary.md and its plots under ``benchmark/results/<suite>-<UTC timestamp>/`` (``--results`` moves them) and
prints the summary.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from .common import ROOT
from .suites import SUITES, LookupsOptions, Suite


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quick", action="store_true", help="A small smoke run of the same code paths.")
    common.add_argument("--seed", type=int, default=7, help="Seed for every sampled choice.")
    common.add_argument("--results", type=Path, default=ROOT / "results", help="Where result folders go.")
    common.add_argument("--cache", type=Path, default=ROOT / ".cache",
                        help="Corpora and workspaces, kept between runs.")
    return common


def _add_options(parser: argparse.ArgumentParser, options: type[Any]) -> None:
    hints = get_type_hints(options)
    for f in fields(options):
        kind, meta = hints[f.name], f.metadata
        flag = f"--{f.name.replace('_', '-')}"
        if kind is bool:
            parser.add_argument(flag, dest=f.name, action="store_true", default=None, help=meta.get("help"))
        elif get_origin(kind) is list:
            (item,) = get_args(kind)
            parser.add_argument(flag, dest=f.name, type=item, action="append", default=None,
                                required=meta.get("required", False), help=meta.get("help"))
        else:
            default = f.default if f.default is not MISSING else None
            parser.add_argument(flag, dest=f.name, type=kind, default=default, required=meta.get("required", False),
                                help=f"{meta.get('help', '')} (default: {default})" if not meta.get("required")
                                else meta.get("help"))


def _options(suite: Suite, args: argparse.Namespace) -> Any:
    given = {f.name: getattr(args, f.name) for f in fields(suite.options)
             if getattr(args, f.name, None) is not None}
    return suite.options(**given)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m benchmark", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", required=True, metavar="SUITE")
    common = _common()
    for suite in SUITES.values():
        one = sub.add_parser(suite.name, parents=[common], help=suite.about, description=suite.about)
        _add_options(one, suite.options)
    every = sub.add_parser("all", parents=[common], help="every suite marked for it, one after another")
    _add_options(every, LookupsOptions)
    report = sub.add_parser("report", help="rebuild RESULTS.md's tables from the result files")
    report.add_argument("--check", action="store_true", help="change nothing; fail when RESULTS.md is stale")
    report.add_argument("--prune", action="store_true", help="delete result folders RESULTS.md does not name")
    sub.add_parser("fetch-models", help="download the measurement models (pinned by hash)")
    return top


def main(argv: list[str] | None = None) -> int:
    top = parser()
    args = top.parse_args(argv)
    if args.command == "fetch-models":
        from .bench_models import main as fetch_models

        return fetch_models()
    if args.command == "report":
        from .report import main as report

        return report(check=args.check, prune=args.prune)
    from .harness import run_one

    chosen = [s for s in SUITES.values() if s.in_all] if args.command == "all" else [SUITES[args.command]]
    for suite in chosen:
        options = _options(suite, args)
        problems = options.problems()
        if problems and args.command == "all":
            print(f"{suite.name}: skipped ({'; '.join(problems)})", file=sys.stderr)
            continue
        if problems:
            top.error(f"{suite.name}: " + "; ".join(problems))
        folder = run_one(suite.module, suite.name, options, quick=args.quick, seed=args.seed,
                         cache=args.cache.resolve(), results=args.results.resolve())
        print((folder / "summary.md").read_text(encoding="utf-8"))
        print(f"written to {folder}\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
