"""Suite `recall-llm`: recall's local model path on the lookups, with a small model on 2 CPU threads.

    python -m benchmark recall-llm --model PATH.gguf [--timeout 30]

For each lookup, one recall of the question (the model plans) and one with the lookup's plan of
searches (the model only answers): planning and answering time, whether the whole recall finished
within the deadline (``recall.llm_timeout_sec``), tokens returned to the caller, whether the answer
passed the citation check, and gold sources named in the answer (cited evidence) vs shown as evidence.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from engram.core import Settings
from engram.core.fileio import sha256_file

from .common import Run, engine_at, machine, result_folder, write_result
from .corpus import indexed, load
from .recall import TOKENIZER, visible_sources

_META = re.compile(r"^\[(\d+)\] \S+ · [^·\n]+ · ([^·\n]+?):\d+-\d+ · ", re.M)


def _named(text: str, root: str) -> set[str]:
    """Sources of the cited evidence's meta lines in a condensed answer."""
    cited = text.split("cited evidence:", 1)[1] if "cited evidence:" in text else ""
    return {m.group(2).removeprefix(root) for m in _META.finditer(cited)}


def run_suite(run: Run, lookups_file: Path, model: Path, timeout: float = 30.0) -> Path:
    corpus = load(run, lookups_file)
    root = corpus.folder.resolve().as_posix() + "/"
    engine, _ = indexed(run, corpus)
    engine.close()
    settings = Settings()
    settings.recall.llm = True
    settings.recall.llm_timeout_sec = timeout
    settings.tagger.local.model = str(model)
    settings.tagger.local.threads = 2
    settings.tagger.local.n_ctx = 8192
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
                evidence_seen = visible_sources(out.text, root) if r.answer is None else set()
                rows.append({
                    "id": lookup["id"], "mode": mode, "total_s": round(total, 2),
                    "plan_s": r.model.get("plan_s"), "answer_s": r.model.get("answer_s"),
                    "answered": r.answer is not None,
                    "notes": r.notes, "steps": len(r.steps), "dropped_steps": r.model.get("dropped_steps", 0),
                    "tokens": tokenizer.count_tokens(out.text), "chars": len(out.text),
                    "gold": len(gold), "gold_named": len(gold & _named(out.text, root)),
                    "gold_as_evidence": len(gold & evidence_seen),
                })
                print(f"recall-llm {lookup['id']} {mode}: {rows[-1]['total_s']} s, answered {rows[-1]['answered']}, "
                      f"gold named {rows[-1]['gold_named']}/{len(gold)}", flush=True)
    result = {"suite": "recall-llm", "quick": run.quick, "model": str(model), "model_sha256": sha256_file(model),
              "timeout_s": timeout, "threads": 2, "load_s": round(load_s, 2), "tokenizer": TOKENIZER, "recalls": rows,
              "machine": machine()}
    return write_result(result_folder(run, "recall-llm"), result, summarize(result, model.name))


def outcome(row: dict[str, Any]) -> str:
    """How a recall's model path ended, from its notes."""
    notes = " ".join(row["notes"])
    if row["answered"]:
        return "cited answer"
    if "out of time while answering" in notes:
        return "deadline while answering"
    if "answer" in notes and "dropped" in notes:
        return "answer failed the citation check"
    if "failed while answering" in notes:
        return "model error"
    return "evidence only"


def summarize(result: dict[str, Any], name: str) -> str:
    """The summary.md of a recall-llm result (also rebuilt from a saved result.json)."""
    rows, timeout = result["recalls"], result["timeout_s"]
    lines = [f"# Recall with a local model — {name}", "",
             f"recall.llm_timeout_sec {timeout}; {result['threads']} threads; model load {result['load_s']:.1f} s; "
             f"tokens: {result['tokenizer']}. Question mode: the model plans, then answers; plan mode: the caller's "
             "plan of searches, the model only answers.", "",
             "| lookup | mode | total s | plan s | answer s | outcome | tokens | gold named | gold as evidence |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['id']} | {r['mode']} | {r['total_s']} | {r['plan_s'] if r['plan_s'] is not None else '–'} | "
                     f"{r['answer_s']} | {outcome(r)} | {r['tokens']} | {r['gold_named']}/{r['gold']} | "
                     f"{r['gold_as_evidence']}/{r['gold']} |")
    late = max(r["total_s"] for r in rows) - timeout
    finished = [r for r in rows if outcome(r) != "deadline while answering" and r["total_s"] <= timeout]
    answered = [r for r in rows if r["answered"]]
    plans = [r["plan_s"] for r in rows if r["plan_s"] is not None]
    answers = [r["answer_s"] for r in rows if r["answer_s"] is not None]
    lines += ["",
              f"- every recall returned by the deadline plus at most {max(late, 0):.2f} s (stopping at the next token "
              "and rendering);",
              f"- {len(finished)} of {len(rows)} recalls finished planning and answering within {timeout:.0f} s; "
              f"{len(answered)} came back with an answer that passed the citation check;",
              f"- planning took {min(plans):.1f}–{max(plans):.1f} s, answering {min(answers):.1f}–{max(answers):.1f} s "
              "(cut at the deadline where it ran out);" if plans and answers else "- no model phase was timed;",
              f"- gold sources named in answers: {sum(r['gold_named'] for r in rows)}; shown as evidence when no answer "
              f"came back: {sum(r['gold_as_evidence'] for r in rows)} (of {sum(r['gold'] for r in rows)} over all "
              "recalls).", ""]
    return "\n".join(lines)
