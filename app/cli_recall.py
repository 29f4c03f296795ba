"""``engram recall``: one call for a multi-part question; with ``--json`` also the context pack."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from engram.core import Settings
from engram.core.errors import InvalidArgument

from .cli_calls import Calls


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("recall", parents=[common], help="Answer a multi-part question in one call",
                       description="Runs a plan of reads at once (or, without one, searches the question) and "
                                   "returns the merged, cited evidence under one --max-chars budget.")
    p.add_argument("question", help="The whole question.")
    p.add_argument("--search", action="append", metavar="QUERY", help="A search step (repeatable): a plan of searches.")
    p.add_argument("--plan", help='Steps as JSON, e.g. \'[{"tool": "search", "args": {"query": "…"}}]\', or @file.json.')
    p.add_argument("--run", help="Run id: recalls and searches of one task share its semantic-preparation "
                                 "allowance (recall.run_budget).")
    p.add_argument("--budget-tokens", type=int, help="--json: token budget of the context pack (default max-chars/4).")
    p.add_argument("--altitude", choices=["auto", "entity", "scope", "workspace"], default="auto",
                   help="--json: level of the context pack.")


def _plan(args: argparse.Namespace) -> list[dict[str, Any]] | None:
    steps: list[dict[str, Any]] = []
    if args.plan:
        text = args.plan
        if text.startswith("@"):
            try:
                text = Path(text[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                raise InvalidArgument(f"Cannot read the plan file {text[1:]}: {exc.strerror}.") from exc
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidArgument(f"--plan is not JSON ({exc.msg} at character {exc.pos}); give a list of "
                                  '{"tool": ..., "args": {...}} steps.') from exc
        if not isinstance(loaded, list):
            raise InvalidArgument("--plan must be a JSON list of steps.")
        steps += loaded
    steps += [{"tool": "search", "args": {"query": q}} for q in args.search or []]
    return steps or None


def run(args: argparse.Namespace, calls: Calls, settings: Settings) -> dict[str, Any]:
    """Run the recall; returns the JSON document ``--json`` prints (``text`` holds the plain answer)."""
    call: dict[str, Any] = {"question": args.question, "workspace": args.workspace}
    if (plan := _plan(args)) is not None:
        call["plan"] = plan
    if args.max_chars is not None:
        call["max_chars"] = args.max_chars
    if args.run:
        call["run"] = args.run
    out = calls.call("recall", call)
    doc: dict[str, Any] = {"tool": "recall", "workspace": out.workspace, "result": out.result, "text": out.text,
                           "chars": len(out.text)}
    if args.json:
        budget = args.budget_tokens if args.budget_tokens is not None else (
            args.max_chars or settings.recall.max_chars) // 4
        request = {"query": args.question, "budget_tokens": budget, "altitude": args.altitude}
        doc["pack"] = calls.context_pack({**request, "run": args.run} if args.run else request,
                                         workspace=args.workspace)
    return doc
