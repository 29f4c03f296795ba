"""Recall's model path: a local model plans the reads and condenses the evidence into a cited answer.

It runs only when ``recall.llm`` is on and the helper model runs on this computer (the local-inference
rule); a remote or LAN provider never enables it, and a missing model never triggers a download.
Planning and answering share one deadline. Every failure falls back to the deterministic path with
a one-line note: the plain search of the question is always step 1, and an answer that cites
nothing, or cites evidence that was not shown, is dropped in favour of the evidence itself.
Text is redacted of secrets before the model sees it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import EngramError, ModelError
from ..models.generation import DeadlineExceeded
from ..models.providers import Provider, is_local_inference
from ..models.redact import redact
from ..settings import Settings
from .plan import PlanStep, PlanTools, validate_plan

#: The arguments a planner can know from the question alone (no filters it would have to guess).
KNOWABLE = {"search": ("query", "project"), "get_memory": ("ids",), "neighbors": ("id",),
            "file_chunks": ("source", "start_line", "end_line"), "file_summary": ("source",),
            "kg_query": ("subject", "predicate")}
_STR = {"type": "string", "maxLength": 160}
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"steps": {"type": "array", "maxItems": 6, "items": {
        "type": "object",
        "properties": {"tool": {"type": "string", "enum": list(KNOWABLE)},
                       "query": _STR, "project": {"type": "string", "maxLength": 60},
                       "ids": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 16}},
                       "id": {"type": "string", "maxLength": 16}, "source": _STR,
                       "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
                       "subject": {"type": "string", "maxLength": 80}, "predicate": {"type": "string", "maxLength": 40}},
        "required": ["tool"], "additionalProperties": False}}},
    "required": ["steps"], "additionalProperties": False,
}
VERIFY = ("The answer comes from a local model; check the cited evidence — a citation shows where a claim "
          "comes from, not that it is true.")
_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_SHOWN = re.compile(r"^\[(\d+)\] ", re.M)


@dataclass
class ModelPath:
    """What the model path did, for the result and its notes."""

    provider: Provider | None = None
    notes: list[str] = field(default_factory=list)
    plan_seconds: float | None = None
    answer_seconds: float | None = None
    dropped_steps: int = 0


def gate(settings: Settings, provider_for: Callable[[str], Provider]) -> ModelPath:
    """Whether recall may use a model now: on, local, present. Off with a reason otherwise (never downloads).

    ``provider_for(role)`` gives the helper model's provider (it raises ``EngramError`` when it is not usable).
    """
    path = ModelPath()
    if not settings.recall.llm:
        return path
    provider, url = settings.tagger.llm_provider, settings.tagger.base_url
    if not is_local_inference(provider, url):
        where = f"{provider}" + (f" at {url}" if url else "")
        path.notes.append(f"note: recall.llm is on, but the helper model runs on {where}, not on this computer; "
                          "recall answered without it.")
        return path
    try:
        path.provider = provider_for("helper")
    except EngramError as exc:
        path.notes.append(f"note: recall.llm is on, but the helper model is not usable ({exc.message}); recall "
                          "answered without it.")
    return path


def plan(provider: Provider, question: str, projects: list[str], deadline: float, path: ModelPath,
         tools: PlanTools) -> list[dict[str, Any]]:
    """Steps the model proposes (validated; invalid ones dropped and counted). ``[]`` on any failure, with a note."""
    system = ("You plan reads for a personal memory search engine. Split the question into its separate parts and "
              "give one `search` step per part, with a short query in plain words. Use get_memory/neighbors only with "
              "ids, and file_chunks/file_summary only with file paths, that appear in the question. "
              f"Projects: {', '.join(projects[:20]) or 'none'}. Reply with JSON only.")
    started = time.monotonic()
    try:
        out = provider.complete([{"role": "system", "content": system},
                                 {"role": "user", "content": redact(question).text}],
                                deadline=deadline, max_tokens=320, json_schema=PLAN_SCHEMA)
        raw = json.loads(out.text).get("steps", [])
    except DeadlineExceeded:
        path.notes.append("note: the local model ran out of time while planning; recall searched the question.")
        return []
    except (ModelError, ValueError, AttributeError) as exc:
        path.notes.append(f"note: the local model's plan was unusable ({exc.__class__.__name__}); recall searched "
                          "the question.")
        return []
    finally:
        path.plan_seconds = round(time.monotonic() - started, 3)
    steps: list[dict[str, Any]] = []
    for item in raw if isinstance(raw, list) else []:
        tool = item.get("tool") if isinstance(item, dict) else None
        if tool not in KNOWABLE:
            path.dropped_steps += 1
            continue
        args = {k: v for k, v in item.items() if k in KNOWABLE[tool] and v not in (None, "", [])}
        try:
            validate_plan([PlanStep(tool=tool, args=args)], tools)
        except EngramError:
            path.dropped_steps += 1
            continue
        steps.append({"tool": tool, "args": args})
    if not steps and path.dropped_steps:
        path.notes.append(f"note: none of the local model's {path.dropped_steps} planned steps were valid; recall "
                          "searched the question.")
    elif path.dropped_steps:
        path.notes.append(f"note: {path.dropped_steps} of the local model's planned steps were invalid and dropped.")
    return steps


def answer(provider: Provider, question: str, evidence: str, deadline: float,
           path: ModelPath) -> tuple[str | None, list[int]]:
    """A cited answer from exactly ``evidence`` (the rendered response), or ``(None, [])`` with a note."""
    shown = {int(n) for n in _SHOWN.findall(evidence)}
    if not shown:
        return None, []
    system = ("Answer the question using only the numbered evidence. After each claim cite the evidence it comes from "
              "in square brackets, like [2] or [1, 4]. If the evidence does not answer the question, say so briefly. "
              "Be concise.")
    started = time.monotonic()
    try:
        out = provider.complete([{"role": "system", "content": system},
                                 {"role": "user", "content": f"Question: {redact(question).text}\n\nEvidence:\n"
                                                             f"{redact(evidence).text}"}],
                                deadline=deadline, max_tokens=400)
    except DeadlineExceeded:
        path.notes.append("note: the local model ran out of time while answering; here is the evidence.")
        return None, []
    except ModelError as exc:
        path.notes.append(f"note: the local model failed while answering ({exc.message}); here is the evidence.")
        return None, []
    finally:
        path.answer_seconds = round(time.monotonic() - started, 3)
    if out.stopped == "deadline":
        path.notes.append("note: the local model ran out of time while answering; here is the evidence.")
        return None, []
    text = out.text.strip()
    cited = sorted({int(n) for group in _CITE.findall(text) for n in re.split(r"\s*,\s*", group)})
    if not cited or any(n not in shown for n in cited):
        reason = "cited no evidence" if not cited else f"cited [{', '.join(str(n) for n in cited if n not in shown)}], " \
                                                       "which was not shown"
        path.notes.append(f"note: the local model's answer {reason}, so it was dropped; here is the evidence.")
        return None, []
    return text, cited
