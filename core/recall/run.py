"""Running a recall: validate the plan, run its steps concurrently, merge what they found.

Steps call the very row functions the tools call, in worker threads (the reads block on LanceDB and
the embedding model). A step that fails reports its error; the others still return. Results merge
by key in round-robin order across steps, so every step's best results come first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Annotated

from pydantic import BaseModel, Field

from ..errors import EngramError
from ..store.bucket_errors import WHOLE_WORKSPACE
from ..tools import reads
from ..tools.results import FactList, FileChunks, MemoryList, NeighborList, SearchResult, SourceInfo, SourceList
from ..tools.scope import Scope
from ..tools.spec import Tool
from . import assist
from .models import Evidence, PlanSource, RecallResult, StepReport
from .plan import PlanStep, PlanTools, Step, validate_plan
from .render import format_recall

logger = logging.getLogger(__name__)


def _evidence(number: int, result: BaseModel) -> list[Evidence]:
    """A step's results as evidence, best first."""
    if isinstance(result, SearchResult):
        return [Evidence(key=h.id, kind="memory", steps=[number], memory=h) for h in result.hits]
    if isinstance(result, (MemoryList, NeighborList, FileChunks)):
        return [Evidence(key=m.id, kind="memory", steps=[number], memory=m) for m in result.items]
    if isinstance(result, SourceInfo):
        return [Evidence(key=f"file:{result.source}", kind="file", steps=[number], file=result)]
    if isinstance(result, SourceList):
        return [Evidence(key=f"file:{s.source}", kind="file", steps=[number], file=s) for s in result.items]
    if isinstance(result, FactList):
        return [Evidence(key=f"fact:{f.id}", kind="fact", steps=[number], fact=f) for f in result.items]
    raise TypeError(f"no evidence mapping for {type(result).__name__}")


def by_source_first(items: list[Evidence]) -> list[Evidence]:
    """A step's results with the best chunk of every source first, then second chunks, and so on.

    Rank order is kept within each round. Under one budget this shows more files (the question's parts
    usually need different files) instead of several neighbouring chunks of the first file found.
    """
    seen: dict[str, int] = {}
    rounds: list[tuple[int, int, Evidence]] = []
    for rank, item in enumerate(items):
        source = item.memory.source if item.memory is not None and item.memory.source else item.key
        seen[source] = seen.get(source, -1) + 1
        rounds.append((seen[source], rank, item))
    return [item for _, _, item in sorted(rounds, key=lambda r: (r[0], r[1]))]


def merge(per_step: list[list[Evidence]]) -> list[Evidence]:
    """Round-robin across steps by rank; a repeated key keeps the fuller content and every step that found it."""
    merged: dict[str, Evidence] = {}
    for rank in range(max((len(items) for items in per_step), default=0)):
        for items in per_step:
            if rank >= len(items):
                continue
            item = items[rank]
            known = merged.get(item.key)
            if known is None:
                merged[item.key] = item.model_copy(deep=True)
                continue
            steps = sorted(set(known.steps) | set(item.steps))
            if item.size > known.size:
                merged[item.key] = item.model_copy(update={"steps": steps}, deep=True)
            else:
                known.steps = steps
    return list(merged.values())


def _run_step(scope: Scope, step: Step, reads: Mapping[str, Tool]) -> tuple[StepReport, list[Evidence]]:
    started = time.perf_counter()
    try:
        result = reads[step.tool].rows(scope, **step.args)
        items = _evidence(step.number, result)
        report = StepReport(number=step.number, tool=step.tool, args=step.args, results=len(items),
                            superseded_matched=result.superseded_matched if isinstance(result, SearchResult) else 0)
    except WHOLE_WORKSPACE:
        raise  # no step can answer: the recall says so once, as a search does
    except EngramError as exc:
        items, report = [], StepReport(number=step.number, tool=step.tool, args=step.args, error=exc.message)
    except Exception:  # top level of one step: report it in the step's line, keep the others
        logger.exception("recall step %d (%s) failed", step.number, step.tool)
        items, report = [], StepReport(number=step.number, tool=step.tool, args=step.args,
                                       error="failed unexpectedly (the details are in Engram's log)")
    report.seconds = round(time.perf_counter() - started, 4)
    return report, items


def run_plan(scope: Scope, steps: list[Step], reads: Mapping[str, Tool], *,
             concurrent: bool = True) -> tuple[list[StepReport], list[Evidence]]:
    """Run validated ``steps`` with the tools of ``reads`` (concurrently, or one after another) and merge their
    evidence.

    A duplicate step does not run; its report points at the step it repeats.
    """
    runnable = [s for s in steps if s.duplicate_of is None]
    if concurrent and len(runnable) > 1:
        with ThreadPoolExecutor(max_workers=len(runnable), thread_name_prefix="recall-step") as pool:
            outcomes = list(pool.map(lambda s: _run_step(scope, s, reads), runnable))
    else:
        outcomes = [_run_step(scope, s, reads) for s in runnable]
    reports = {r.number: r for r, _ in outcomes}
    for s in steps:
        if s.duplicate_of is not None:
            reports[s.number] = StepReport(number=s.number, tool=s.tool, args=s.args, duplicate_of=s.duplicate_of)
    merged = merge([by_source_first(items) for _, items in outcomes])
    return [reports[s.number] for s in steps], by_source_first(merged)


def _prepared(scope: Scope, run: str | None, steps: list[Step]) -> tuple[Scope, list[str]]:
    """The scope the steps run in, with the plan's search queries prepared as one batch under ``run``'s
    budget (all of them or none), and the note to show when the preparation was withheld."""
    queries = [str(s.args["query"]) for s in steps if s.tool == "search" and s.duplicate_of is None]
    prepared = scope.prepare_queries(run, queries)
    if prepared is None:
        return scope, []
    return replace(scope, prepared=prepared), [prepared.note] if prepared.note else []


def _projects(scope: Scope) -> list[str]:
    return scope.store.projects()


#: A recall as the catalog offers it: the row function of the ``recall`` tool.
RecallRows = Callable[..., RecallResult]


def recall_rows(tools: PlanTools) -> RecallRows:
    """The ``recall`` row function over ``tools`` (the evidence reads its plans may use), for the catalog."""

    def recall(
        scope: Scope,
        question: Annotated[str, Field(min_length=1, max_length=4000,
                                       description="The whole question, in plain words.")],
        plan: Annotated[list[PlanStep] | None, Field(max_length=8, description=(
            "Up to 8 reads run at once, e.g. [{\"tool\": \"search\", \"args\": {\"query\": \"…\"}}]. "
            "Without a plan the question is searched."))] = None,
        condense: Annotated[bool, Field(description="Condense into a cited answer when local inference is on.")] = True,
        max_chars: int = 4000,
        run: str | None = None,
    ) -> RecallResult:
        """Answer a multi-part question in one call: several reads, merged, under one budget."""
        return run_recall(scope, tools, question, plan, condense=condense, max_chars=max_chars, run=run)

    return recall


def run_recall(scope: Scope, tools: PlanTools, question: str, plan: list[PlanStep] | None, *, condense: bool = True,
               max_chars: int = 4000, run: str | None = None) -> RecallResult:
    """A recall of ``question`` in ``scope``: ``plan``'s reads (or the question searched, or the local model's
    plan when ``recall.llm`` is on), merged; ``max_chars`` sizes the evidence the model condenses.

    Raises:
        InvalidArgument: the plan does not validate (nothing ran).
    """
    started = time.perf_counter()
    path = assist.gate(scope.settings, scope.provider)
    if path.provider is not None and not plan and len(question) > reads.QUERY_MAX_CHARS:
        # The model's plan starts with a search of the question, which search would refuse: answer without it.
        path = assist.ModelPath(notes=[f"note: the question is longer than a search accepts "
                                       f"({len(question):,} of {reads.QUERY_MAX_CHARS:,} characters), so recall "
                                       "searched it without the local model."])
    if path.provider is None:
        return _deterministic(scope, tools, question, plan, run, path.notes, started)

    deadline = time.monotonic() + scope.settings.recall.llm_timeout_sec
    source: PlanSource
    if plan:
        steps, source = validate_plan(plan, tools), "caller"
    else:
        proposed = assist.plan(path.provider, question, _projects(scope), deadline, path, tools)
        if path.failed is not None:
            return _with_model_report(_deterministic(scope, tools, question, None, run, [path.failed], started), path)
        raw = [{"tool": "search", "args": {"query": question}}, *proposed][:8]
        steps, source = validate_plan(raw, tools), ("model" if proposed else "question")
    scope, notes = _prepared(scope, run, steps)
    reports, items = run_plan(scope, steps, tools.reads)
    result = RecallResult(question=question, planned=True, plan_source=source, steps=reports, items=items)
    if condense:
        evidence = format_recall(result, max_chars)  # exactly what the caller would otherwise receive
        result.answer, result.cited = assist.answer(path.provider, question, evidence, deadline, path, tools)
        if path.failed is not None:
            # The planned evidence stands without the answer (a plain search of the question would find less).
            result.notes = [*path.notes, *notes, path.failed]
            return _with_model_report(result, path, started)
    result.notes = path.notes + notes
    return _with_model_report(result, path, started)


def _deterministic(scope: Scope, tools: PlanTools, question: str, plan: list[PlanStep] | None, run: str | None,
                   notes: list[str], started: float) -> RecallResult:
    """The recall without a model: the question searched, or the caller's plan run; ``notes`` first."""
    if not plan:
        found = reads.search(scope, query=question, run=run)
        return RecallResult(question=question, planned=False, search=found, notes=notes,
                            seconds=round(time.perf_counter() - started, 4))
    steps = validate_plan(plan, tools)
    scope, budget_notes = _prepared(scope, run, steps)
    reports, items = run_plan(scope, steps, tools.reads)
    return RecallResult(question=question, planned=True, plan_source="caller", steps=reports, items=items,
                        notes=notes + budget_notes, seconds=round(time.perf_counter() - started, 4))


def _with_model_report(result: RecallResult, path: assist.ModelPath, started: float | None = None) -> RecallResult:
    """``result`` with what the model path did (timings, dropped steps, evidence read) and the total time."""
    result.model = {"plan_s": path.plan_seconds, "answer_s": path.answer_seconds, "dropped_steps": path.dropped_steps,
                    "read_blocks": path.read_blocks, "shown_blocks": path.shown_blocks,
                    "fell_back": path.failed is not None}
    if started is not None:
        result.seconds = round(time.perf_counter() - started, 4)
    return result
