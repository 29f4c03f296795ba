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
                    "within_deadline": total <= timeout + 1.0, "answered": r.answer is not None,
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
    lines = [f"# Recall with a local model — {model.name}", "",
             f"recall.llm_timeout_sec {timeout}; 2 threads; model load {load_s:.1f} s; tokens: {TOKENIZER}.", "",
             "| lookup | mode | total s | plan s | answer s | within deadline | answered | tokens | gold named | "
             "gold as evidence |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['id']} | {r['mode']} | {r['total_s']} | {r['plan_s']} | {r['answer_s']} | "
                     f"{'yes' if r['within_deadline'] else 'no'} | {'yes' if r['answered'] else 'no'} | {r['tokens']} | "
                     f"{r['gold_named']}/{r['gold']} | {r['gold_as_evidence']}/{r['gold']} |")
    within = sum(r["within_deadline"] for r in rows)
    answered = sum(r["answered"] for r in rows)
    lines += ["", f"{within} of {len(rows)} recalls finished within {timeout:.0f} s; {answered} came back with an "
                  "answer that passed the citation check.", ""]
    return write_result(result_folder(run, "recall-llm"), result, "\n".join(lines))
