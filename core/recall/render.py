"""Rendering a recall: a line per step, then the merged evidence as numbered blocks, under one budget.

Without a plan the answer is, byte for byte, the search answer for the question.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from ..tools.formats import SEP, format_search, memory_meta, superseded_line
from ..tools.render import Block, query_terms, render_blocks
from .models import Evidence, RecallResult, StepReport


def _short(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_label(report: StepReport) -> str:
    """What a step asked for, in a few words: the query, the ids, the file and lines."""
    a = report.args
    if report.tool == "search":
        label = f'"{_short(a.get("query", ""))}"'
    elif report.tool == "get_memory":
        label = " ".join(a.get("ids", []))
    elif report.tool == "neighbors":
        label = a.get("id", "")
    elif report.tool in ("file_chunks", "file_summary"):
        label = PurePosixPath(a.get("source", "")).name
        if a.get("start_line") or a.get("end_line"):
            label += f":{a.get('start_line', '')}-{a.get('end_line', '')}"
    else:
        label = " ".join(f"{k}={_short(v, 30)}" for k, v in a.items())
    return f"{report.tool} {label}".rstrip()


def step_line(report: StepReport) -> str:
    head = f"step {report.number} · {step_label(report)}"
    if report.duplicate_of is not None:
        return f"{head} → same as step {report.duplicate_of}, ran once"
    if report.error is not None:
        return f"{head} → error: {report.error}"
    return f"{head} → {report.results} result{'' if report.results == 1 else 's'}" + superseded_line(
        report.superseded_matched)


def _block(item: Evidence) -> Block:
    found = "steps " + "+".join(str(s) for s in item.steps) if len(item.steps) > 1 else f"step {item.steps[0]}"
    if item.memory is not None:
        return Block(memory_meta(item.memory, found), item.memory.content, item.memory.title)
    if item.fact is not None:
        f = item.fact
        when = f"since {f.valid_from.date().isoformat()}" + (f", ended {f.ended.date().isoformat()}" if f.ended else "")
        text = f"{f.subject} —{f.predicate}→ {f.object}" + (f" (source: {f.source})" if f.source else "")
        return Block(SEP.join([item.key, f.project, when, found]), text)
    s = item.file
    assert s is not None
    outline = "\n".join(s.outline)
    key = f"file:{s.path}" if s.path else item.key
    return Block(SEP.join([key, s.project, f"{s.chunk_count} chunks", s.ingested_at.date().isoformat(), found]),
                 s.summary + ("\n" + outline if outline else ""))


def format_recall(result: RecallResult, max_chars: int) -> str:
    notes = list(result.notes)
    if not result.planned:
        assert result.search is not None
        if not notes:
            return format_search(result.search, max_chars)
        head = "\n".join(notes)
        return head + "\n\n" + format_search(result.search, max(1200, max_chars - len(head) - 2))[
            : max_chars - len(head) - 2]
    lines = [step_line(r) for r in result.steps]
    if result.answer is not None:
        return _condensed(result, lines, notes, max_chars)

    def footer(shown: int, total: int) -> str:
        if total == 0:
            return "No results from any step."
        hidden = total - shown
        return f"— {shown} of {total} results shown" + (f"; {hidden} not shown (raise max_chars)" if hidden else "")

    queries = " ".join([result.question] + [str(r.args.get("query", "")) for r in result.steps])
    return render_blocks([_block(i) for i in result.items], max_chars, top=lines + notes, terms=query_terms(queries),
                         footer=footer)


def _condensed(result: RecallResult, lines: list[str], notes: list[str], max_chars: int) -> str:
    """Plan, the cited answer, the meta lines of the cited evidence, and the keys of the rest."""
    from .assist import VERIFY

    cited = [(n, result.items[n - 1]) for n in result.cited if 0 < n <= len(result.items)]
    cited_lines = [f"[{n}] {_block(item).meta}" for n, item in cited]
    rest = [item.key for n, item in enumerate(result.items, start=1) if n not in result.cited]
    head = "\n".join(lines + notes)
    fixed = [head, "answer:", "", VERIFY, "cited evidence:\n" + "\n".join(cited_lines)]
    room = max_chars - len("\n\n".join(fixed)) - 80
    answer = result.answer or ""
    if len(answer) > room:
        answer = answer[: max(0, room - 1)].rstrip() + "…"
    parts = [head, f"answer:\n{answer}", VERIFY, "cited evidence:\n" + "\n".join(cited_lines)]
    used = len("\n\n".join(parts))
    shown_keys: list[str] = []
    for key in rest:
        if used + len(key) + 40 > max_chars:
            break
        shown_keys.append(key)
        used += len(key) + 2
    hidden = len(rest) - len(shown_keys)
    if rest:
        parts.append("other evidence (expand with get_memory / file_summary / kg_query): " + ", ".join(shown_keys)
                     + (f" … and {hidden} more" if hidden else ""))
    out = "\n\n".join(p for p in parts if p)
    return out if len(out) <= max_chars else out[: max_chars - 1] + "…"
