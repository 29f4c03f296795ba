"""Suite `chat`: the lookups asked as chat questions, with local GGUF chat models on a few CPU threads.

    python -m benchmark chat --model PATH.gguf [--model PATH2.gguf ...] [--threads 2]

Each lookup's question starts a new conversation in the indexed corpus's workspace (the one recall and
recall-llm use), once per model, through ``Engine.chat`` (``chat.local_model`` is the file; the other chat.*
settings are their defaults; ``helper.local.threads`` is ``--threads``). Per question: the tool calls the
model made (by tool; the search of the question that research starts with is counted apart, as the seed),
repeated calls, tool errors, rounds, tokens, the turn's wall time and the time to the first streamed text,
how research ended, whether the reply is the fallback, what the answer cites (ids among the evidence the
turn's tools returned, and ids no tool returned), and **evidence found**: the share of the lookup's gold
files with a memory among that evidence (the seed's evidence alone beside it), and the gold files cited.
Each conversation is copied into the result folder and deleted from the workspace.

Two more measures per model: **a new turn's first request** with and without the model's checkpoint of the
instructions and tool definitions (``--first-requests`` questions; before each, another request takes the model,
as recall or tagging would; the request is the first research round's prompt, timed to its first token), and
**a long pasted question** (``--long-chars`` characters of the corpus's documents after a lookup's question)
answered through section analysis: sections, the time reading them took, the whole turn.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from engram.core import Engine, Settings
from engram.core.chat.events import ChatEvent, ChatText, ChatTurn
from engram.core.chat.loop import INSTRUCTIONS
from engram.core.chat.model import LocalChatModel
from engram.core.chat.toolbox import tool_specs
from engram.core.errors import EngramError, NotFound
from engram.core.fileio import sha256_file

from .common import Run, engine_at, note_model
from .corpus import indexed, load
from .suites import ChatOptions


def sources_of(engine: Engine, ids: list[str], root: str) -> dict[str, str]:
    """Memory id -> its source relative to the ingest root (ids that are no memory are left out)."""
    found: dict[str, str] = {}
    for i in range(0, len(ids), 20):  # get_memory takes at most 20 ids
        try:
            items = engine.call("get_memory", {"ids": ids[i:i + 20]}).result.items
        except NotFound:
            continue
        found.update({m.id: m.source.removeprefix(root) for m in items})
    return found


def seed_count(turn: ChatTurn, question: str) -> int:
    """1 when the turn's first step is the search of the question research starts with, else 0."""
    first = turn.steps[0] if turn.steps else None
    return int(first is not None and first.step == 1 and first.name == "search"
               and first.arguments == {"query": question.strip()})


def turn_row(engine: Engine, lookup: dict[str, Any], turn: ChatTurn, root: str, wall: float,
             first_text: float | None) -> dict[str, Any]:
    """One question's figures."""
    gold = list(dict.fromkeys(lookup["gold"]))
    seeded = seed_count(turn, lookup["question"])
    own = turn.steps[seeded:]
    cited = [*turn.cited, *turn.unread_citations]
    where = sources_of(engine, list(dict.fromkeys([*turn.evidence, *cited])), root)
    found = {where[i] for i in turn.evidence if i in where}
    seed_found = {where[i] for i in turn.evidence[:turn.steps[0].new_ids] if i in where} if seeded else set()
    cited_sources = {where[i] for i in cited if i in where}
    return {
        "id": lookup["id"], "question": lookup["question"], "conversation": turn.conversation,
        "seconds": round(wall, 2), "loop_s": turn.seconds,
        "first_text_s": round(first_text, 2) if first_text is not None else None,
        "rounds": turn.rounds, "tokens": turn.tokens, "evaluated": turn.evaluated,
        "ended": turn.ended, "fallback": turn.fallback, "seeded": bool(seeded),
        "calls": dict(Counter(s.name for s in own)), "calls_total": len(own),
        "repeated": sum(s.repeated_of is not None for s in own), "errors": sum(s.error for s in own),
        "steps": [{"step": s.step, "name": s.name, "arguments": s.arguments, "error": s.error, "new_ids": s.new_ids,
                   "repeated_of": s.repeated_of} for s in turn.steps],
        "evidence": len(turn.evidence),
        "cites": bool(cited), "cited_in_evidence": len(turn.cited), "cited_unread": len(turn.unread_citations),
        "gold": len(gold), "gold_found": sum(g in found for g in gold),
        "gold_found_share": round(sum(g in found for g in gold) / len(gold), 3) if gold else None,
        "gold_found_by_seed": sum(g in seed_found for g in gold),
        "gold_cited": sum(g in cited_sources for g in gold),
        "answer": turn.answer, "notes": turn.notes,
    }


def ask(engine: Engine, lookup: dict[str, Any], root: str, folder: Path, label: str) -> dict[str, Any]:
    """Ask one lookup in a new conversation; keep the conversation in ``folder``, delete it from the workspace."""
    started = time.perf_counter()
    first: list[float] = []

    def on_event(event: ChatEvent) -> None:
        if not first and isinstance(event, ChatText) and event.text.strip():
            first.append(time.perf_counter() - started)

    try:
        turn = engine.chat(lookup["question"], on_event=on_event)
    except EngramError as exc:
        return {"id": lookup["id"], "question": lookup["question"], "error": exc.message,
                "seconds": round(time.perf_counter() - started, 2)}
    wall = time.perf_counter() - started
    row = turn_row(engine, lookup, turn, root, wall, first[0] if first else None)
    store = engine.conversations()
    kept = folder / "conversations" / f"{label}-{lookup['id']}.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    saved = store.folder / f"{turn.conversation}.json"
    if saved.is_file():
        kept.write_text(saved.read_text(encoding="utf-8"), encoding="utf-8")
        row["conversation_file"] = kept.relative_to(folder).as_posix()
    store.delete(turn.conversation)
    return row


def first_requests(chat_model: Any, questions: list[str]) -> dict[str, Any] | None:
    """Seconds to the first token of a new turn's first request, with the instructions-and-tools checkpoint and
    without it, each after another request has taken the model (``None`` for a model not run here)."""
    if not isinstance(chat_model, LocalChatModel):
        return None
    loaded = chat_model.loaded
    tools = tool_specs(history=False)
    out: dict[str, list[float]] = {"with": [], "without": []}
    for kept, label in ((loaded.checkpoints_kept or 2, "with"), (0, "without")):
        loaded.checkpoints_kept = kept
        for n, question in enumerate(questions):
            loaded.complete([{"role": "user", "content": f"Summarise, request {label} {n}: the cache warms in a "
                                                         "minute and the service restarts cleanly."}],
                            deadline=time.monotonic() + 600, max_tokens=2)  # another role takes the model
            got = chat_model.reply([{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": question}],
                                   tools, deadline=time.monotonic() + 600, max_tokens=1)
            out[label].append(got.first_token_s if got.first_token_s is not None else got.seconds)
    loaded.checkpoints_kept = 2
    fixed = loaded.count_tokens(chat_model._fixed_start([{"role": "system", "content": INSTRUCTIONS}], tools) or "")
    return {"fixed_tokens": fixed, "with_s": [round(x, 3) for x in out["with"]],
            "without_s": [round(x, 3) for x in out["without"]],
            "with_median_s": round(statistics.median(out["with"]), 3),
            "without_median_s": round(statistics.median(out["without"]), 3)}


def long_question(engine: Engine, corpus: Any, lookup: dict[str, Any], chars: int) -> dict[str, Any]:
    """One turn whose question is ``lookup``'s followed by ``chars`` characters of the corpus's documents (a long
    paste), answered through section analysis."""
    docs = sorted(p for p in corpus.folder.rglob("*.txt"))
    text, i = "", 0
    while len(text) < chars and docs:
        text += docs[i % len(docs)].read_text(encoding="utf-8", errors="replace") + "\n\n"
        i += 1
    question = f"{lookup['question']} Use the text I pasted below.\n\n" + text[:chars]
    started = time.perf_counter()
    try:
        turn = engine.chat(question)
    except EngramError as exc:
        return {"chars": len(question), "error": exc.message, "seconds": round(time.perf_counter() - started, 2)}
    engine.conversations().delete(turn.conversation)
    return {"chars": len(question), "sections": turn.sections, "analysis_s": turn.analysis_seconds,
            "seconds": round(time.perf_counter() - started, 2), "ended": turn.ended, "fallback": turn.fallback,
            "rounds": turn.rounds, "tokens": turn.tokens, "notes": turn.notes[-3:]}


def _stats(values: list[float]) -> dict[str, float] | None:
    return {"mean": round(statistics.fmean(values), 2), "median": round(statistics.median(values), 2)} if values else None


def summarize_model(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A model's figures over its questions (questions that raised are counted apart)."""
    done = [r for r in rows if "error" not in r]
    answered = [r for r in done if not r["fallback"]]
    gold = sum(r["gold"] for r in done)
    calls: Counter[str] = Counter()
    for r in done:
        calls.update(r["calls"])
    firsts = [r["first_text_s"] for r in done if r["first_text_s"] is not None]
    return {
        "questions": len(rows), "failed": len(rows) - len(done),
        "calls": _stats([r["calls_total"] for r in done]), "calls_by_tool": dict(calls.most_common()),
        "repeated": _stats([r["repeated"] for r in done]), "errors": _stats([r["errors"] for r in done]),
        "rounds": _stats([r["rounds"] for r in done]), "tokens": _stats([r["tokens"] for r in done]),
        "seconds": _stats([r["seconds"] for r in done]), "first_text_s": _stats(firsts),
        "no_text": len(done) - len(firsts),
        "gold": gold, "gold_found": sum(r["gold_found"] for r in done),
        "gold_found_share": round(sum(r["gold_found"] for r in done) / gold, 3) if gold else None,
        "gold_found_by_seed": sum(r["gold_found_by_seed"] for r in done),
        "mean_question_gold_share": round(statistics.fmean(r["gold_found_share"] for r in done
                                                           if r["gold_found_share"] is not None), 3)
        if any(r["gold_found_share"] is not None for r in done) else None,
        "answers": len(answered), "answers_citing": sum(r["cites"] for r in answered),
        "cited_in_evidence": sum(r["cited_in_evidence"] for r in answered),
        "cited_unread": sum(r["cited_unread"] for r in answered),
        "answers_citing_gold": sum(r["gold_cited"] > 0 for r in answered),
        "gold_cited": sum(r["gold_cited"] for r in answered),
        "fallbacks": sum(r["fallback"] for r in done), "ended": dict(Counter(r["ended"] for r in done).most_common()),
    }


def run_suite(run: Run, options: ChatOptions) -> dict[str, Any]:
    models, threads = options.model, options.threads
    corpus = load(run, options.lookups)
    root = corpus.folder.resolve().as_posix() + "/"
    engine, _ = indexed(run, corpus)
    engine.close()
    folder = run.folder
    settings = Settings()
    settings.helper.local.threads = threads
    measured: list[dict[str, Any]] = []
    with engine_at(run.workspace(f"index-{corpus.name}"), settings) as engine:
        engine.embedder()  # loaded before the first turn is timed
        for number, model in enumerate(models, 1):
            chosen = engine.settings.model_copy(deep=True)
            chosen.chat.local_model = str(model.resolve())
            engine.apply_settings(chosen)
            entry: dict[str, Any] = {
                "file": model.name, "path": str(model.resolve()), "size_bytes": model.stat().st_size,
                "sha256": sha256_file(model), "threads": threads,
                "settings": {**{f"chat.{k}": v for k, v in chosen.chat.model_dump().items()},
                             "helper.local.threads": chosen.helper.local.threads,
                             "helper.local.batch": chosen.helper.local.batch},
            }
            started = time.perf_counter()
            try:
                chat_model = engine.chat_model()
            except EngramError as exc:
                entry.update(error=exc.message, turns=[], summary=summarize_model([]))
                measured.append(entry)
                print(f"chat {model.name}: cannot load ({exc.message})", flush=True)
                continue
            entry.update(load_s=round(time.perf_counter() - started, 2), tool_format=chat_model.tool_format,
                         format_note=chat_model.format_note, model_name=chat_model.name)
            print(f"chat {model.name}: loaded in {entry['load_s']} s, tool format {entry['tool_format']}", flush=True)
            rows = []
            for lookup in corpus.lookups:
                row = ask(engine, lookup, root, folder, f"{number}-{model.stem}")
                rows.append(row)
                if "error" in row:
                    print(f"chat {model.name} {lookup['id']}: failed ({row['error']})", flush=True)
                    continue
                print(f"chat {model.name} {lookup['id']}: {row['seconds']} s, {row['rounds']} rounds, "
                      f"{row['calls_total']} calls, ended {row['ended']}{', fallback' if row['fallback'] else ''}, "
                      f"gold found {row['gold_found']}/{row['gold']}, cited {row['cited_in_evidence']}", flush=True)
            entry.update(turns=rows, summary=summarize_model(rows))
            if options.first_requests:
                entry["first_request"] = first_requests(
                    chat_model, [lk["question"] for lk in corpus.lookups[:options.first_requests]])
                print(f"chat {model.name}: first request {entry['first_request']}", flush=True)
            if options.long_chars:
                chars = min(options.long_chars, 12_000) if run.quick else options.long_chars
                entry["long_question"] = long_question(engine, corpus, corpus.lookups[0], chars)
                print(f"chat {model.name}: long question {entry['long_question']}", flush=True)
            measured.append(entry)
    for entry in measured:
        note_model(f"chat: {entry['file']}", Path(entry["path"]), entry["sha256"])
    return {"lookups": options.lookups.name, "corpus": corpus.name, "sdist_sha256": corpus.sha256,
            "questions": len(corpus.lookups), "threads": threads, "models": measured}


def _ms(stat: dict[str, float] | None, digits: int = 1) -> str:
    """mean (median)."""
    if stat is None:
        return "–"
    return f"{stat['mean']:.{digits}f} ({stat['median']:.{digits}f})"


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "–"


def summary(envelope: dict[str, Any]) -> str:
    """The summary.md of a chat result."""
    result = envelope["result"]
    models = result["models"]
    first = next((m for m in models if "settings" in m), None)
    chat = first["settings"] if first else {}
    lines = [f"# Chat on the lookups — {', '.join(m['file'] for m in models)}", "",
             f"{result['questions']} questions ({result['corpus']}), one new conversation each; "
             f"helper.local.threads {result['threads']}; "
             + (f"chat.n_ctx {chat['chat.n_ctx']}, chat.max_tokens {chat['chat.max_tokens']}, research "
                f"{chat['chat.research_timeout_sec']:g} s / {chat['chat.research_no_progress_rounds']} rounds without "
                f"progress / {chat['chat.research_token_budget']:,} tokens, answer {chat['chat.answer_timeout_sec']:g} s"
                if chat else "") + ". "
             "Calls: the model's own tool calls (research's seeded search of the question not counted). Gold found: "
             "gold files with a memory among the evidence the turn's tools returned (seed: by the seeded search "
             "alone). Turn s: wall time of the turn; first text s: from the question to the first streamed text. Answers: replies the model wrote (not the fallback); cited: ids they cite among the evidence + "
             "ids no tool returned. Figures are mean (median).", "",
             "| model | MB | tool format | load s | gold found | answers citing | answers citing gold | cited ids "
             "evidence + unread | fallbacks | ended | calls | repeated | errors | rounds | tokens | turn s | first text s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        s = m["summary"]
        if "error" in m:
            lines.append(f"| {m['file']} | {m['size_bytes'] / 2**20:.0f} | – | – | could not load: {m['error']} |"
                         + " |" * 12)
            continue
        ended = ", ".join(f"{k} {v}" for k, v in s["ended"].items()) or "–"
        lines.append(
            f"| {m['file']} | {m['size_bytes'] / 2**20:.0f} | {m['tool_format']} | {m['load_s']} | "
            f"{_pct(s['gold_found'], s['gold'])}, seed {s['gold_found_by_seed']} | {s['answers_citing']}/{s['answers']} | "
            f"{s['answers_citing_gold']}/{s['answers']} | {s['cited_in_evidence']} + {s['cited_unread']} | "
            f"{s['fallbacks']} | {ended} | {_ms(s['calls'])} | {_ms(s['repeated'])} | {_ms(s['errors'])} | "
            f"{_ms(s['rounds'])} | {_ms(s['tokens'], 0)} | {_ms(s['seconds'])} | {_ms(s['first_text_s'])} |")
    for m in models:
        if "error" in m:
            continue
        s = m["summary"]
        lines += ["", f"## {m['file']}", "",
                  f"Tool format {m['tool_format']} ({m['format_note']}); loaded in {m['load_s']} s; "
                  f"calls by tool: {', '.join(f'{k} {v}' for k, v in s['calls_by_tool'].items()) or 'none'}"
                  + (f"; {s['failed']} questions failed" if s["failed"] else "")
                  + (f"; {s['no_text']} turns streamed no text" if s["no_text"] else "") + ".", "",
                  "| lookup | turn s | first text s | rounds | calls | repeated | errors | tokens | ended | fallback | "
                  "cited (evidence + unread) | gold found | gold cited |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in m["turns"]:
            if "error" in r:
                lines.append(f"| {r['id']} | {r['seconds']} | failed: {r['error']} |" + " |" * 10)
                continue
            calls = ", ".join(f"{k} {v}" for k, v in r["calls"].items()) or "0"
            lines.append(
                f"| {r['id']} | {r['seconds']} | {r['first_text_s'] if r['first_text_s'] is not None else '–'} | "
                f"{r['rounds']} | {calls} | {r['repeated']} | {r['errors']} | {r['tokens']} | {r['ended']} | "
                f"{'yes' if r['fallback'] else 'no'} | {r['cited_in_evidence']} + {r['cited_unread']} | "
                f"{r['gold_found']}/{r['gold']}, seed {r['gold_found_by_seed']} | {r['gold_cited']} |")
    extra = [m for m in models if m.get("first_request") or m.get("long_question")]
    if extra:
        lines += ["", "## A new turn's first request, and a long pasted question", "",
                  "| model | fixed start tokens | first request s with checkpoint (median) | without | long question "
                  "chars | sections | reading s | turn s | ended |", "|---|---|---|---|---|---|---|---|---|"]
        for m in extra:
            f, q = m.get("first_request") or {}, m.get("long_question") or {}
            lines.append(f"| {m['file']} | {f.get('fixed_tokens', '–')} | {f.get('with_median_s', '–')} | "
                         f"{f.get('without_median_s', '–')} | {q.get('chars', '–'):,} | {q.get('sections', '–')} | "
                         f"{q.get('analysis_s', '–')} | {q.get('seconds', '–')} | "
                         f"{q.get('ended', q.get('error', '–'))}{', fallback' if q.get('fallback') else ''} |"
                         if q else
                         f"| {m['file']} | {f.get('fixed_tokens', '–')} | {f.get('with_median_s', '–')} | "
                         f"{f.get('without_median_s', '–')} | – | – | – | – | – |")
    lines.append("")
    return "\n".join(lines)

