"""Suite `recall-llm`: recall's local model path on the lookups, with a small model on 2 CPU threads.

    python -m benchmark recall-llm --model PATH.gguf [--timeout 30]

For each lookup, one recall of the question (the model plans) and one with the lookup's plan of
searches (the model only answers): planning and answering time, whether the recall finished planning
and answering within the deadline (``recall.llm_timeout_sec``) with an answer, how many evidence blocks
the model read of those shown, tokens returned to the caller, and the gold sources the answer cites vs
the gold sources the evidence shows (the deterministic evidence the caller would otherwise receive).
"""

from __future__ import annotations

import time
from typing import Any

from engram.core import Settings
from engram.core.recall.assist import MAX_CITES
from engram.core.recall.models import Evidence, RecallResult
from engram.core.recall.render import format_recall

from .common import Run, engine_at, note_model
from .corpus import indexed, load
from .recall import _BLOCK, TOKENIZER, visible_sources
from .suites import RecallLlmOptions


def _source(item: Evidence, root: str) -> str:
    where = item.memory.source if item.memory is not None else item.file.source if item.file is not None else ""
    return (where or "").removeprefix(root)


def gold_cited_and_shown(result: RecallResult, gold: set[str], root: str,
                         max_chars: int) -> tuple[int, int, int, int]:
    """(gold sources among the evidence the answer cites, gold sources among the evidence shown to the caller,
    distinct sources the answer cites, gold sources among the first four blocks shown: what citing by position
    alone would score)."""
    evidence = format_recall(result.model_copy(update={"answer": None}), max_chars)
    shown = visible_sources(evidence, root)
    first = {m.group(1).removeprefix(root) for m in list(_BLOCK.finditer(evidence))[:MAX_CITES]}
    cited = {_source(result.items[n - 1], root) for n in result.cited if 0 < n <= len(result.items)}
    return len(gold & cited), len(gold & shown), len(cited), len(gold & first)


def run_suite(run: Run, options: RecallLlmOptions) -> dict[str, Any]:
    model, timeout = options.model, options.timeout
    note_model(f"helper: {model.name}", model)
    corpus = load(run, options.lookups)
    root = corpus.folder.resolve().as_posix() + "/"
    engine, _ = indexed(run, corpus)
    engine.close()
    settings = Settings()
    settings.recall.llm = True
    settings.recall.llm_timeout_sec = timeout
    settings.helper.local.model = str(model)
    settings.helper.local.threads = 2
    settings.helper.local.n_ctx = 8192
    rows: list[dict[str, Any]] = []
    with engine_at(run.workspace(f"index-{corpus.name}"), settings) as engine:
        tokenizer = engine.embedder()
        started = time.perf_counter()
        engine.provider("helper")
        load_s = time.perf_counter() - started
        for lookup in corpus.lookups:
            gold = set(lookup["gold"])
            plan = [{"tool": "search", "args": {"query": p["query"]}} for p in lookup["parts"]]
            for mode, args in (("question", {}), ("plan", {"plan": plan})):
                started = time.perf_counter()
                out = engine.call("recall", {"question": lookup["question"], **args})
                total = time.perf_counter() - started
                r = out.result
                max_chars = settings.recall.max_chars
                if r.answer is not None:
                    gold_cited, gold_shown, files_cited, gold_first = gold_cited_and_shown(r, gold, root, max_chars)
                else:
                    gold_cited, gold_shown, files_cited, gold_first = 0, len(gold & visible_sources(out.text, root)), 0, 0
                rows.append({
                    "id": lookup["id"], "mode": mode, "total_s": round(total, 2),
                    "plan_s": r.model.get("plan_s"), "answer_s": r.model.get("answer_s"),
                    "answered": r.answer is not None, "fell_back": bool(r.model.get("fell_back")),
                    "read_blocks": r.model.get("read_blocks"), "shown_blocks": r.model.get("shown_blocks"),
                    "notes": r.notes, "steps": len(r.steps), "dropped_steps": r.model.get("dropped_steps", 0),
                    "tokens": tokenizer.count_tokens(out.text), "chars": len(out.text),
                    "gold": len(gold), "gold_cited": gold_cited, "gold_shown": gold_shown,
                    "cited": r.cited, "files_cited": files_cited, "gold_first_blocks": gold_first, "answer": r.answer,
                })
                print(f"recall-llm {lookup['id']} {mode}: {rows[-1]['total_s']} s, answered {rows[-1]['answered']}, "
                      f"read {rows[-1]['read_blocks']}/{rows[-1]['shown_blocks']} blocks, gold cited "
                      f"{gold_cited}/{gold_shown} shown", flush=True)
    return {"model": model.name, "timeout_s": timeout, "threads": 2, "load_s": round(load_s, 2),
            "tokenizer": TOKENIZER, "recalls": rows}


def outcome(row: dict[str, Any]) -> str:
    """How a recall's model path ended, from its notes."""
    notes = " ".join(row["notes"])
    if row["answered"]:
        return "cited answer"
    for phrase, said in (("while planning", "fell back: planning"), ("plan was unusable", "fell back: plan unusable"),
                         ("planned steps were valid", "fell back: no valid step"),
                         ("too little time", "fell back: no time to read"),
                         ("out of time while answering", "fell back: deadline while answering"),
                         ("wrote past its length", "fell back: answer too long"),
                         ("not the JSON", "fell back: answer not JSON"), ("dropped", "fell back: citation check"),
                         ("failed while answering", "fell back: model error")):
        if phrase in notes:
            return said
    return "evidence only"


def finished(row: dict[str, Any], timeout: float) -> bool:
    """Planned (where the model plans) and answered, within the deadline."""
    return bool(row["answered"]) and row["total_s"] <= timeout


def summary(envelope: dict[str, Any]) -> str:
    """The summary.md of a recall-llm result."""
    result = envelope["result"]
    name = result["model"]
    rows, timeout = result["recalls"], result["timeout_s"]
    lines = [f"# Recall with a local model — {name}", "",
             f"recall.llm_timeout_sec {timeout}; {result['threads']} threads; model load {result['load_s']:.1f} s; "
             f"tokens: {result['tokenizer']}. Question mode: the model plans, then answers; plan mode: the caller's "
             "plan of searches, the model only answers. Gold cited / shown: gold files among the evidence the answer "
             "cites / among the evidence the caller would otherwise see.", "",
             "| lookup | mode | total s | plan s | answer s | outcome | blocks read | cites | tokens | gold cited / shown |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        read = f"{r['read_blocks']}/{r['shown_blocks']}" if r.get("shown_blocks") else "–"
        lines.append(f"| {r['id']} | {r['mode']} | {r['total_s']} | {r['plan_s'] if r['plan_s'] is not None else '–'} | "
                     f"{r['answer_s'] if r['answer_s'] is not None else '–'} | {outcome(r)} | {read} | "
                     f"{','.join(str(n) for n in r.get('cited', [])) or '–'} | {r['tokens']} | "
                     f"{r['gold_cited']}/{r['gold_shown']} |")
    late = max(r["total_s"] for r in rows) - timeout
    done = [r for r in rows if finished(r, timeout)]
    plans = [r["plan_s"] for r in rows if r["plan_s"] is not None]
    answers = [r["answer_s"] for r in rows if r["answer_s"] is not None]
    cited, shown = sum(r["gold_cited"] for r in done), sum(r["gold_shown"] for r in done)
    files = sum(r.get("files_cited", 0) for r in done)
    first = sum(r.get("gold_first_blocks", 0) for r in done)
    lines += ["",
              f"- every recall returned by the deadline plus at most {max(late, 0):.2f} s;",
              f"- **{len(done)} of {len(rows)}** recalls finished planning and answering within {timeout:.0f} s;",
              f"- their answers cite **{cited} of the {shown}** gold files their evidence shows "
              f"({100 * cited / shown:.0f}%), citing {files} files in all ({100 * cited / files:.0f}% of them gold; "
              f"an answer cites at most 4 blocks; citing the first 4 blocks by position alone would cover {first})"
              if shown and files else "- no answered recall showed a gold file;",
              f"- planning took {min(plans):.1f}–{max(plans):.1f} s, answering {min(answers):.1f}–{max(answers):.1f} s;"
              if plans and answers else "- no model phase was timed;", ""]
    return "\n".join(lines)
