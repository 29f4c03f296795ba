"""Recall's model path: a local model plans the reads and condenses the evidence into a cited answer.

It runs only when ``recall.llm`` is on and the helper model runs on this computer (the local-inference
rule); a remote or LAN provider never enables it, and a missing model never triggers a download.
Planning and answering share one deadline. Any failure (the model fails or runs out of time, its plan
is unusable, its answer cites nothing or cites evidence it was not shown) makes recall return its
deterministic result with one note line saying why (``ModelPath.failed``).

Both tasks start with the same fixed instructions (``HELPER_SYSTEM``), so llama.cpp evaluates them once
and every later call pays only for its own part. The answer is written under a JSON schema
(``{answer, cites}``, cites limited to the numbers shown), and the model reads as much of the evidence,
best first, as its measured speed lets it read while leaving time to write its answer; the caller
still receives all of the evidence. Text is redacted of secrets before the model sees it.
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
from ..models.providers import Provider
from ..models.redact import redact
from ..models.runs_where import runs_where
from ..settings import Settings
from .plan import PlanStep, PlanTools, validate_plan

#: The arguments a planner can know from the question alone (no filters it would have to guess).
KNOWABLE = {"search": ("query", "project"), "get_memory": ("ids",), "neighbors": ("id",),
            "file_chunks": ("source", "start_line", "end_line"), "file_summary": ("source",),
            "kg_query": ("subject", "predicate")}
_STR = {"type": "string", "minLength": 3, "maxLength": 100}
#: Memory ids as tools print them, and file paths: only a question naming one lets the plan read it directly.
_ID = re.compile(r"\b[0-9a-f]{12}\b")
_PATH = re.compile(r"[\w.-]+/[\w./-]+|\b[\w-]+\.(?:py|md|txt|rst|toml|json|ya?ml|js|ts|go|rs|java|c|h|cpp|html|css|sh)\b")
#: The usual plan: one short search query per part of the question (one short line of JSON, few tokens).
SEARCH_PLAN_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["queries"],
    "properties": {"queries": {"type": "array", "minItems": 1, "maxItems": 4, "items": _STR}},
}


def _step(tool: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["tool", *required],
            "properties": {"tool": {"const": tool}, **properties}}


_SEARCH_STEP = _step("search", {"query": _STR}, ["query"])
_ID_STEPS = [_step("get_memory", {"ids": {"type": "array", "minItems": 1, "maxItems": 4,
                                          "items": {"type": "string", "pattern": "^[0-9a-f]{12}$"}}}, ["ids"]),
             _step("neighbors", {"id": {"type": "string", "pattern": "^[0-9a-f]{12}$"}}, ["id"])]
_PATH_STEPS = [_step("file_chunks", {"source": _STR, "start_line": {"type": "integer"},
                                     "end_line": {"type": "integer"}}, ["source"]),
               _step("file_summary", {"source": _STR}, ["source"])]


def plan_schema(question: str) -> dict[str, Any]:
    """The plan's JSON schema for ``question``: search queries only, unless the question names memory ids or
    file paths, which the plan may then read directly (each step with exactly its tool's arguments)."""
    steps = [*(_ID_STEPS if _ID.search(question) else []), *(_PATH_STEPS if _PATH.search(question) else [])]
    if not steps:
        return SEARCH_PLAN_SCHEMA
    return {"type": "object", "additionalProperties": False, "required": ["steps"],
            "properties": {"steps": {"type": "array", "minItems": 1, "maxItems": 4,
                                     "items": {"anyOf": [_SEARCH_STEP, *steps]}}}}


VERIFY = ("The answer comes from a local model; check the cited evidence — a citation shows where a claim "
          "comes from, not that it is true.")
_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_BLOCK = re.compile(r"^\[(\d+)\] ", re.M)
_FOOTER = re.compile(r"^— \d+ of \d+ results? shown.*$|^No results from any step\.$", re.M)

#: The fixed instructions every helper call starts with (one prefix, evaluated once per loaded model).
HELPER_SYSTEM = (
    "You help a personal memory search engine. Each request names one task.\n"
    "PLAN: split the question into its separate parts and write one short search query per part, in plain "
    "words. Read a memory id or a file directly only where the question names it. Reply with JSON only.\n"
    "ANSWER: answer the question in a few sentences using only the numbered evidence, and list in `cites` the "
    "numbers of the evidence your answer uses, at most four; you may also put them after a claim, like [2]. If "
    "the evidence does not answer the question, say so briefly and cite the closest evidence. Reply with JSON "
    "only.")
#: Tokens the reply may take: its answer (at most ANSWER_CHARS characters, about 160 tokens of prose or fewer)
#: and the JSON around it with the citations. Time is kept for all of them. An answer cites what it uses, not
#: everything it read.
ANSWER_TOKENS = 200
ANSWER_CHARS = 320
MAX_CITES = 4
#: Tokens a plan may take, and the share of the time left that planning may use (answering needs the rest).
PLAN_TOKENS = 200
PLAN_SHARE = 0.45
#: Of the time left, the share the model is planned to use (its speed varies from call to call).
SPEED_MARGIN = 0.85
#: Seconds kept aside for starting the call and parsing its answer.
CALL_OVERHEAD_S = 0.3


@dataclass
class ModelPath:
    """What the model path did, for the result and its notes."""

    provider: Provider | None = None
    notes: list[str] = field(default_factory=list)
    #: Why the model path gave up (one note line); recall then returns its deterministic result.
    failed: str | None = None
    plan_seconds: float | None = None
    answer_seconds: float | None = None
    dropped_steps: int = 0
    #: Evidence blocks the answering model read, of those shown to the caller.
    read_blocks: int | None = None
    shown_blocks: int | None = None


def gate(settings: Settings, provider_for: Callable[[str], Provider]) -> ModelPath:
    """Whether recall may use a model now: on, local, present. Off with a reason otherwise (never downloads).

    ``provider_for(role)`` gives the helper model's provider (it raises ``EngramError`` when it is not usable).
    """
    path = ModelPath()
    if not settings.recall.llm:
        return path
    where = runs_where(settings)
    if not where.on_this_computer:
        path.notes.append(f"note: recall.llm is on, but the helper model runs on {where.describe()}, not on this computer; "
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
    """Steps the model proposes (validated; invalid ones dropped and counted). ``[]`` with ``path.failed`` set
    when the model fails, runs out of time, or proposes nothing usable."""
    request = (f"Task: PLAN\nProjects: {', '.join(projects[:20]) or 'none'}\n"
               f"Question: {redact(question).text}")
    started = time.monotonic()
    plan_by = started + PLAN_SHARE * max(0.0, deadline - started)
    try:
        out = provider.complete([{"role": "system", "content": HELPER_SYSTEM}, {"role": "user", "content": request}],
                                deadline=plan_by, max_tokens=PLAN_TOKENS, json_schema=plan_schema(question))
        if out.stopped == "deadline":
            raise DeadlineExceeded("planning stopped at its share of the deadline")
        reply = json.loads(out.text, strict=False)  # the grammar lets raw newlines into strings
        raw = ([{"tool": "search", "query": q} for q in reply.get("queries", [])] if "queries" in reply
               else reply.get("steps", []))
    except DeadlineExceeded:
        path.failed = "note: the local model ran out of time while planning; here is the plain recall."
        return []
    except (ModelError, ValueError, AttributeError) as exc:
        path.failed = (f"note: the local model's plan was unusable ({exc.__class__.__name__}); here is the plain "
                       "recall.")
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
        path.failed = (f"note: none of the local model's {path.dropped_steps} planned steps were valid; here is the "
                       "plain recall.")
    elif path.dropped_steps:
        path.notes.append(f"note: {path.dropped_steps} of the local model's planned steps were invalid and dropped.")
    return steps


def evidence_blocks(evidence: str) -> list[tuple[int, str]]:
    """The numbered blocks of a rendered recall, in order: (number, the block's text), footer left out."""
    marks = list(_BLOCK.finditer(evidence))
    blocks = []
    for mark, following in zip(marks, [*marks[1:], None]):
        text = evidence[mark.start(): following.start() if following is not None else len(evidence)]
        blocks.append((int(mark.group(1)), _FOOTER.sub("", text).strip()))
    return blocks


def readable_blocks(provider: Provider, head: str, blocks: list[tuple[int, str]],
                    deadline: float) -> list[tuple[int, str]]:
    """The leading ``blocks`` the model can read after ``head`` and still write its answer by ``deadline``: all
    of them when its speed is unknown (a server elsewhere), none when not even the first fits."""
    rates = provider.rates(deadline)
    if rates is None:
        return blocks
    left = deadline - time.monotonic() - CALL_OVERHEAD_S - ANSWER_TOKENS / rates.gen_tps
    budget = int(left * SPEED_MARGIN * rates.prompt_tps) - provider.count_tokens(head)
    chosen: list[tuple[int, str]] = []
    for number, text in blocks:
        budget -= provider.count_tokens(text) + 2
        if budget < 0:
            break
        chosen.append((number, text))
    return chosen


def answer_schema(numbers: list[int]) -> dict[str, Any]:
    """``{answer, cites}``: cites are one to ``MAX_CITES`` of ``numbers`` (the evidence the model was shown)."""
    return {"type": "object", "additionalProperties": False, "required": ["answer", "cites"],
            "properties": {"answer": {"type": "string", "minLength": 1, "maxLength": ANSWER_CHARS},
                           "cites": {"type": "array", "minItems": 1, "maxItems": min(MAX_CITES, len(numbers)),
                                     "items": {"type": "integer", "enum": numbers}}}}


def answer(provider: Provider, question: str, evidence: str, deadline: float,
           path: ModelPath) -> tuple[str | None, list[int]]:
    """A cited answer from the rendered ``evidence`` (as much of it as the model can read in time), or
    ``(None, [])`` with ``path.failed`` set."""
    blocks = evidence_blocks(evidence)
    if not blocks:
        return None, []
    # The evidence first and the question last, right before the answer: small models then answer it instead
    # of echoing it.
    head = "Task: ANSWER\n\nEvidence:\n"
    tail = f"\n\nQuestion: {redact(question).text}\nAnswer from the evidence, citing the numbers you use."
    started = time.monotonic()
    try:
        readable = readable_blocks(provider, head + tail, blocks, deadline)
        path.read_blocks, path.shown_blocks = len(readable), len(blocks)
        if not readable:
            path.failed = "note: too little time was left for the local model to read the evidence; here it is."
            return None, []
        shown = [n for n, _ in readable]
        request = head + redact("\n\n".join(text for _, text in readable)).text + tail
        out = provider.complete([{"role": "system", "content": HELPER_SYSTEM}, {"role": "user", "content": request}],
                                deadline=deadline, max_tokens=ANSWER_TOKENS, json_schema=answer_schema(shown))
    except DeadlineExceeded:
        path.failed = "note: the local model ran out of time while answering; here is the evidence."
        return None, []
    except ModelError as exc:
        path.failed = f"note: the local model failed while answering ({exc.message}); here is the evidence."
        return None, []
    finally:
        path.answer_seconds = round(time.monotonic() - started, 3)
    if out.stopped != "stop":
        why = "ran out of time" if out.stopped == "deadline" else "wrote past its length"
        path.failed = f"note: the local model {why} while answering; here is the evidence."
        return None, []
    try:
        reply = json.loads(out.text, strict=False)  # the grammar lets raw newlines into strings
        text = str(reply["answer"]).strip()
        cites = {int(n) for n in reply["cites"]}
    except (ValueError, KeyError, TypeError):
        path.failed = "note: the local model's answer was not the JSON asked for; here is the evidence."
        return None, []
    cites |= {int(n) for group in _CITE.findall(text) for n in re.split(r"\s*,\s*", group)}
    cited = sorted(cites)
    if not text or not cited or any(n not in shown for n in cited):
        reason = "cited no evidence" if not cited else "was empty" if not text else (
            f"cited [{', '.join(str(n) for n in cited if n not in shown)}], which it was not shown")
        path.failed = f"note: the local model's answer {reason}, so it was dropped; here is the evidence."
        return None, []
    return text, cited
