"""Recall's model path: a local model plans the reads and condenses the evidence into a cited answer.

It runs only when ``recall.llm`` is on and the helper model runs on this computer (the local-inference
rule); a remote or LAN provider never enables it, and a missing model never triggers a download.
Planning and answering share one deadline. Any failure (the model fails or runs out of time, its plan
is unusable, its answer cites nothing or cites evidence it was not shown) makes recall return its
deterministic result with one note line saying why (``ModelPath.failed``).

Both tasks start with the same fixed instructions (``helper_system``), so llama.cpp evaluates them once
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
#: The most fact lookups a plan may add (a question names few subjects).
MAX_FACTS = 2


def _queries(projects: list[str]) -> dict[str, Any]:
    """One short search query per part of the question; with known projects, a query may name one of them."""
    if not projects:
        return {"type": "array", "minItems": 1, "maxItems": 4, "items": _STR}
    scoped = {"type": "object", "additionalProperties": False, "required": ["query", "project"],
              "properties": {"query": _STR, "project": {"enum": projects[:20]}}}
    return {"type": "array", "minItems": 1, "maxItems": 4, "items": {"anyOf": [_STR, scoped]}}


_FACTS = {"type": "array", "maxItems": MAX_FACTS, "items": {
    "type": "object", "additionalProperties": False, "required": ["subject"],
    "properties": {"subject": {"type": "string", "minLength": 1, "maxLength": 100},
                   "predicate": {"type": "string", "minLength": 1, "maxLength": 100}}}}


def search_plan_schema(projects: list[str]) -> dict[str, Any]:
    """The usual plan: ``queries`` (a string each, or ``{query, project}`` for a project the question names) and
    optionally ``facts`` to look up (``{subject, predicate}``): short JSON, few tokens."""
    return {"type": "object", "additionalProperties": False, "required": ["queries"],
            "properties": {"queries": _queries(projects), "facts": _FACTS}}


#: The plan without known projects (the schema a workspace with none gets).
SEARCH_PLAN_SCHEMA: dict[str, Any] = search_plan_schema([])


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


def plan_schema(question: str, projects: list[str] | None = None) -> dict[str, Any]:
    """The plan's JSON schema for ``question``: search queries (each may name one of ``projects``) and fact
    lookups, unless the question names memory ids or file paths, which the plan may then read directly (each
    step with exactly its tool's arguments)."""
    steps = [*(_ID_STEPS if _ID.search(question) else []), *(_PATH_STEPS if _PATH.search(question) else [])]
    if not steps:
        return search_plan_schema(projects or [])
    return {"type": "object", "additionalProperties": False, "required": ["steps"],
            "properties": {"steps": {"type": "array", "minItems": 1, "maxItems": 4,
                                     "items": {"anyOf": [_SEARCH_STEP, *steps]}}}}


VERIFY = ("The answer comes from a local model; check the cited evidence — a citation shows where a claim "
          "comes from, not that it is true.")
_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_BLOCK = re.compile(r"^\[(\d+)\] ", re.M)
_FOOTER = re.compile(r"^— \d+ of \d+ results? shown.*$|^No results from any step\.$", re.M)

#: The reads a plan is told about, in the order it is told (their summaries come from the tool catalog).
PLANNED_READS = ("search", "kg_query", "get_memory", "neighbors", "file_chunks", "file_summary")


def helper_system(tools: PlanTools) -> str:
    """The fixed instructions every helper call starts with (one prefix, evaluated once per loaded model): the
    tasks, and what each read a plan can use does, in the tool catalog's own words."""
    reads = "\n".join(f"- {name}: {tools.reads[name].summary}" for name in PLANNED_READS if name in tools.reads)
    return (
        "You help a personal memory search engine. Each request names one task.\n"
        "PLAN: split the question into its separate parts and write one short search query per part, in plain "
        "words. Give a query the project it is about only when the question names that project. Add a fact "
        "lookup (subject, and predicate if known) only for a person, system or thing the question asks facts "
        "about. Read a memory id or a file directly only where the question names it. Reply with JSON only. "
        f"The reads a plan uses:\n{reads}\n"
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
        out = provider.complete([{"role": "system", "content": helper_system(tools)},
                                 {"role": "user", "content": request}],
                                deadline=plan_by, max_tokens=PLAN_TOKENS, json_schema=plan_schema(question, projects))
        if out.stopped == "deadline":
            raise DeadlineExceeded("planning stopped at its share of the deadline")
        reply = json.loads(out.text, strict=False)  # the grammar lets raw newlines into strings
        raw = _planned(reply)
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
        if args.get("project") is not None and args["project"] not in projects:
            del args["project"]  # a project the workspace does not have would find nothing: search them all
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


def _planned(reply: Any) -> list[Any]:
    """The steps a plan reply names: its ``queries`` (a string, or ``{query, project}``) and ``facts`` as search
    and kg_query steps, or its ``steps`` as written."""
    if not isinstance(reply, dict):
        raise ValueError("the plan is not a JSON object")
    if "queries" not in reply:
        return list(reply.get("steps", []))
    raw: list[Any] = []
    for q in reply.get("queries", []):
        raw.append({"tool": "search", "query": q} if isinstance(q, str) else {"tool": "search", **q})
    for fact in reply.get("facts", [])[:MAX_FACTS]:
        raw.append({"tool": "kg_query", **fact} if isinstance(fact, dict) else fact)
    return raw


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
           path: ModelPath, tools: PlanTools) -> tuple[str | None, list[int]]:
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
        out = provider.complete([{"role": "system", "content": helper_system(tools)},
                                 {"role": "user", "content": request}],
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
