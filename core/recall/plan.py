"""Recall plans: up to eight evidence reads, validated in full before any of them runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidArgument
from ..tools.spec import Tool, args_model, describe_validation_error

MAX_STEPS = 8
#: The reads whose results are evidence. Writes, navigation and diagnostics are never steps.
EVIDENCE_TOOLS = ("search", "get_memory", "neighbors", "file_chunks", "file_summary", "list_sources", "kg_query")
_NOT_ARGS = {"workspace": "the workspace is the recall's own, not a step's",
             "max_chars": "output size is recall's single max_chars budget, not a step's"}


@dataclass(frozen=True)
class PlanTools:
    """What a plan's steps may call, given by the tool catalog: the evidence reads by name, and every other
    tool's name with whether it writes (so that a refused step can say what it names)."""

    reads: Mapping[str, Tool]
    others: Mapping[str, bool]


class PlanStep(BaseModel):
    """A read: a tool and its own arguments."""

    model_config = ConfigDict(extra="forbid")

    # The length check also refuses text that cannot be encoded (a lone surrogate), so refusals can echo the name.
    tool: str = Field(min_length=1, max_length=40, description="One of: " + ", ".join(EVIDENCE_TOOLS) + ".")
    args: dict[str, Any] = Field(default_factory=dict, description="The tool's own arguments.")


@dataclass(frozen=True)
class Step:
    """A validated step: ``args`` hold only what the caller set, already checked by the tool's model."""

    number: int  # 1-based, as the caller wrote the plan
    tool: str
    args: dict[str, Any]
    duplicate_of: int | None = None  # an identical earlier step: this one does not run

    @property
    def key(self) -> str:
        return self.tool + json.dumps(self.args, sort_keys=True, default=str)


def validate_plan(plan: list[PlanStep] | list[dict[str, Any]], tools: PlanTools) -> list[Step]:
    """Check every step against ``tools``; return them in order, a repeat marked ``duplicate_of`` its first copy
    (it runs once).

    Raises:
        InvalidArgument: more than eight steps, or a step with an unknown tool, a write or diagnostic tool,
            a workspace or output-size argument, or arguments its tool refuses. The message names the
            step and the problem; nothing has run.
    """
    if len(plan) > MAX_STEPS:
        raise InvalidArgument(f"The plan has {len(plan)} steps; recall runs at most {MAX_STEPS}.")
    if not plan:
        raise InvalidArgument("The plan is empty: give at least one step, or no plan to search the question.")
    steps: list[Step] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(plan, start=1):
        step = raw if isinstance(raw, PlanStep) else _parse(number, raw)
        where = f"Plan step {number} ({step.tool})"
        allowed = ", ".join(tools.reads)
        if step.tool not in tools.reads and step.tool not in tools.others:
            raise InvalidArgument(f"{where}: unknown tool. Steps may use: {allowed}.")
        if step.tool not in tools.reads:
            kind = "a write" if tools.others[step.tool] else "not an evidence read"
            raise InvalidArgument(f"{where}: {step.tool} is {kind}, so it cannot be a recall step. "
                                  f"Steps may use: {allowed}.")
        for name, why in _NOT_ARGS.items():
            if name in step.args:
                raise InvalidArgument(f"{where}: '{name}' is not a step argument ({why}).")
        model_type = args_model(tools.reads[step.tool])
        try:
            model = model_type.model_validate(step.args)
        except ValidationError as exc:
            accepted = list(model_type.model_fields)
            problem = describe_validation_error(step.tool, exc, accepted=accepted).removeprefix(f"{step.tool}: ")
            raise InvalidArgument(f"{where}: {problem}") from None
        checked = Step(number, step.tool, model.model_dump(exclude_unset=True))
        first = seen.setdefault(checked.key, number)
        steps.append(checked if first == number else Step(number, step.tool, checked.args, duplicate_of=first))
    return steps


def _parse(number: int, raw: Any) -> PlanStep:
    try:
        return PlanStep.model_validate(raw)
    except ValidationError as exc:
        problem = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'step'}: {e['msg']}" for e in exc.errors())
        raise InvalidArgument(f"Plan step {number}: {problem}. A step is "
                              '{"tool": "<name>", "args": {...}}.') from None
