"""Suite `conversation`: a conversation remembered one exchange at a time, then asked about (LoCoMo).

    python -m benchmark conversation --data ../shared/data/locomo-public.json

Each sample of the file (LoCoMo's format: ``conversation`` with ``speaker_a``, ``speaker_b``,
``session_N_date_time`` and ``session_N`` turns ``{speaker, dia_id, text[, blip_caption]}``; ``qa`` with
``question``, ``evidence`` dia_ids and ``category``) gets a fresh workspace. Every turn is stored with one
``store`` call, in order, as an agent stores it: kind ``exchange``, the speaker, the session's date as the
time it was said, the text (and a shared photo's caption). Then each question of categories 1–4 (category
5, adversarial, has no evidence) is searched once per channel mix, and its evidence recall is read off the
ranking: **all@k** when every evidence turn is in the top k, **any@k** when one is (k = 5, 10, 20).

At **session level** (LongMemEval's other measure) a question counts when every (all) or one (any) of the
sessions its evidence was said in is among the sessions of the top k turns. **NDCG@10** reads the turn ranking
with gain 1 per evidence turn (benchmark/ranking.py).

Reported per channel mix, overall and per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop):
those measures, and the latency of ``store`` and of each mix's ``search`` (p50/p95); and each measure again for
the **tuning** and the **test** conversations apart (``SPLITS``: the public file's conversations split by
conversation; any conversation it does not name, as in a held-out file, is a test one). Evidence ids the
conversation does not hold (the data has a few typos) are counted and reported; such a question can still
be found "any" but never "all".

LoCoMo is CC BY-NC 4.0: it is read from the path given, never committed.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import time
from collections import defaultdict
from datetime import datetime
from typing import Any

from engram.core import Settings

from . import plots, ranking
from .common import Run, engine_at, percentile
from .suites import ConversationOptions

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10, 20)
#: mix → (channels, search settings it changes). The RRF mix searches as Engram did before issue 19 (the stored
#: vectors and the indexed titles are this version's either way).
MIXES: dict[str, tuple[list[str] | None, dict[str, Any]]] = {
    "hybrid (default)": (None, {}),
    "hybrid, RRF, no feedback": (None, {"fusion": "rrf", "feedback": False}),
    "semantic only": (["semantic"], {}),
    "lexical only": (["lexical"], {}),
}
#: The public conversations split by conversation: choices are made on the tuning ones, reported on the test ones
#: (which hold more questions of every category: 349 against 233). A conversation not named here is a test one.
SPLITS = {"conv-30": "tune", "conv-41": "tune", "conv-26": "test", "conv-42": "test"}
_SESSION = re.compile(r"^session_(\d+)$")
_DIA_SESSION = re.compile(r"^D(\d+):")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)


def parse_date(text: str) -> datetime | None:
    """LoCoMo's session time (``1:56 pm on 8 May, 2023``) as a datetime; ``None`` when it reads otherwise."""
    found = _DATE.search(text or "")
    if found is None:
        return None
    hour, minute, half, day, month, year = found.groups()
    try:
        month_number = datetime.strptime(month[:3], "%b").month
    except ValueError:
        return None
    hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return datetime(int(year), month_number, int(day), hour_24, int(minute))


def turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn in the order it was said: ``{dia_id, speaker, text, session, date, date_text}``."""
    sessions = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    out: list[dict[str, Any]] = []
    for number in sessions:
        date_text = str(conversation.get(f"session_{number}_date_time", ""))
        for turn in conversation[f"session_{number}"] or []:
            text = str(turn.get("text", ""))
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            out.append({"dia_id": str(turn["dia_id"]), "speaker": str(turn["speaker"]), "text": text,
                        "session": number, "date": parse_date(date_text), "date_text": date_text})
    return out


def store_args(turn: dict[str, Any]) -> dict[str, Any]:
    """The ``store`` call an agent makes for one turn."""
    args: dict[str, Any] = {"content": f"{turn['speaker']}: {turn['text']}", "kind": "exchange",
                            "project": "conversation", "title": f"{turn['speaker']}, {turn['date_text']}"}
    return args


def _ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "n": 0}
    return {"p50_ms": round(1000 * statistics.median(values), 1), "p95_ms": round(1000 * percentile(values, 0.95), 1),
            "n": len(values)}


def split_of(sample: dict[str, Any]) -> str:
    """Whether a LoCoMo sample is a tuning or a test conversation (``SPLITS``; unnamed ones are test ones)."""
    return SPLITS.get(str(sample.get("sample_id", "")), "test")


def _recall(found: list[dict[str, Any]], ks: tuple[int, ...] = KS) -> dict[str, float]:
    """Turn-level all@k and any@k over ``found`` (one row per question); with rows that carry them, session-level
    ``session all@k`` / ``session any@k`` and the mean ``ndcg@10``."""
    out: dict[str, float] = {}
    n = len(found)
    sessions = n > 0 and all("session_ranks" in f for f in found)
    for k in ks:
        out[f"all@{k}"] = round(sum(1 for f in found if f["ranks"] and max(f["ranks"]) <= k and f["complete"]) / n, 3) \
            if n else 0.0
        out[f"any@{k}"] = round(sum(1 for f in found if ranking.any_within(f["ranks"], k)) / n, 3) if n else 0.0
        if sessions:
            out[f"session all@{k}"] = round(sum(1 for f in found if ranking.all_within(
                f["session_ranks"], f["sessions"], k)) / n, 3)
            out[f"session any@{k}"] = round(sum(1 for f in found if ranking.any_within(f["session_ranks"], k)) / n, 3)
    if sessions:
        out["ndcg@10"] = round(sum(f["ndcg@10"] for f in found) / n, 3)
    return out


def measure_sample(run: Run, sample: dict[str, Any], index: int, settings: Settings, embedder: Any,
                   mixes: tuple[str, ...] = tuple(MIXES), name: str = "conversation") -> dict[str, Any]:
    """Store one conversation turn by turn into a fresh workspace (``run.workspace(f"{name}-{index}")``), then
    search each question per mix (of ``mixes``)."""
    folder = run.workspace(f"{name}-{index}")
    if folder.exists():
        shutil.rmtree(folder)
    engine = engine_at(folder, settings, embedder=embedder)
    try:
        said = turns(sample["conversation"])
        if run.quick:
            said = said[:120]
        by_memory: dict[str, set[str]] = {}  # a turn counted on an earlier one's memory shares its id
        store_times: list[float] = []
        for turn in said:
            started = time.perf_counter()
            stored = engine.call("store", store_args(turn)).result
            store_times.append(time.perf_counter() - started)
            by_memory.setdefault(stored.id, set()).add(turn["dia_id"])
        held = set().union(*by_memory.values())
        session_of = {t["dia_id"]: t["session"] for t in said}
        questions = [q for q in sample["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
        if run.quick:
            questions = questions[:20]
        results: dict[str, list[dict[str, Any]]] = {}
        search_times: dict[str, list[float]] = {}
        unknown = 0
        base = engine.settings
        for mix in mixes:
            channels, changed = MIXES[mix]
            engine.apply_settings(base.model_copy(update={"search": base.search.model_copy(update=changed)}))
            rows: list[dict[str, Any]] = []
            times: list[float] = []
            for q in questions:
                evidence = [str(e).strip() for e in q["evidence"]]
                args: dict[str, Any] = {"query": str(q["question"]), "limit": max(KS)}
                if channels is not None:
                    args["channels"] = channels
                started = time.perf_counter()
                hits = engine.call("search", args).result.hits
                times.append(time.perf_counter() - started)
                ids = [h.id for h in hits]
                ranks = evidence_ranks(ids, by_memory, evidence)
                if mix == mixes[0]:
                    unknown += sum(1 for e in evidence if e not in held)
                wanted = {s for e in evidence if (s := _session_of(e, session_of)) is not None}
                rows.append({"category": q["category"], "ranks": ranks, "complete": len(ranks) == len(evidence),
                             "evidence": len(evidence), "ndcg@10": ranking.ndcg(ranks, len(evidence), 10),
                             "sessions": len(wanted),
                             "session_ranks": _session_ranks(ids, by_memory, session_of, wanted)})
            results[mix] = rows
            search_times[mix] = times
        return {"sample": sample.get("sample_id", str(index)), "split": split_of(sample), "turns": len(said),
                "questions": len(questions),
                "unknown_evidence_ids": unknown, "store": store_times, "search": search_times, "rows": results}
    finally:
        engine.close()


def evidence_ranks(ids: list[str], by_memory: dict[str, set[str]], evidence: list[str]) -> list[int]:
    """The 1-based rank of each of ``evidence`` (dia ids) found among the memories ``ids`` (best first), where
    ``by_memory`` holds the turns each memory stands for (several, when duplicates were counted on one)."""
    ranks = []
    for e in evidence:
        at = next((n for n, i in enumerate(ids, 1) if e in by_memory.get(i, ())), None)
        if at is not None:
            ranks.append(at)
    return ranks


def _session_of(dia_id: str, session_of: dict[str, int]) -> int | None:
    """The session a turn was said in: from the conversation, else from its id (``D3:5`` is session 3)."""
    if dia_id in session_of:
        return session_of[dia_id]
    found = _DIA_SESSION.match(dia_id)
    return int(found.group(1)) if found else None


def _session_ranks(ids: list[str], by_memory: dict[str, set[str]], session_of: dict[str, int],
                   wanted: set[int]) -> list[int]:
    """The 1-based rank of the first turn of each session in ``wanted`` among the memories ``ids`` (best first)."""
    at: dict[int, int] = {}
    for n, memory in enumerate(ids, 1):
        for dia in by_memory.get(memory, ()):
            session = session_of.get(dia)
            if session in wanted:
                at.setdefault(session, n)
    return sorted(at.values())


def _measured(samples: list[dict[str, Any]], mix: str) -> dict[str, Any]:
    """One mix's measures over ``samples``: overall and per category."""
    rows = [r for s in samples for r in s["rows"][mix]]
    by_category = defaultdict(list)
    for r in rows:
        by_category[r["category"]].append(r)
    return {"questions": len(rows), "overall": _recall(rows),
            "by_category": {CATEGORIES[c]: {"questions": len(v), **_recall(v)} for c, v in sorted(by_category.items())}}


def summarize(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Evidence recall per mix (overall and per category) and latencies over every sample, and the same measures
    over the tuning and the test conversations apart (``splits``)."""
    mixes_run = list(samples[0]["rows"]) if samples else []
    mixes = {mix: {**_measured(samples, mix), "search": _ms([t for s in samples for t in s["search"][mix]])}
             for mix in mixes_run}
    splits = {split: {"conversations": [s["sample"] for s in samples if s["split"] == split],
                      "mixes": {mix: _measured([s for s in samples if s["split"] == split], mix)
                                for mix in mixes_run}}
              for split in ("tune", "test") if any(s["split"] == split for s in samples)}
    return {"mixes": mixes, "splits": splits, "store": _ms([t for s in samples for t in s["store"]]),
            "turns": sum(s["turns"] for s in samples), "questions": sum(s["questions"] for s in samples),
            "unknown_evidence_ids": sum(s["unknown_evidence_ids"] for s in samples),
            "per_sample": [{"sample": s["sample"], "split": s["split"], "turns": s["turns"], "questions": s["questions"],
                            **{mix: _recall(s["rows"][mix], (10,)) for mix in mixes_run}} for s in samples]}


#: The measures of the split tables: (key in ``_recall``'s output, the name a table gives it).
SPLIT_MEASURES = (("all@10", "turn recall_all@10"), ("session all@10", "session recall_all@10"),
                  ("ndcg@10", "turn NDCG@10"))


def split_tables(splits: dict[str, Any], heading: str = "###") -> list[str]:
    """Markdown for the tuning and test conversations apart, each under a ``heading`` of its own: every measure
    overall per mix, then three measures per category (each table names its measure)."""
    lines: list[str] = []
    names = {"tune": "Tuning conversations (choices are made on these)",
             "test": "Test conversations (reported; never tuned on)"}
    for split, part in splits.items():
        mixes = part["mixes"]
        first = next(iter(mixes.values()))
        lines += [f"{heading} {names[split]}: {', '.join(part['conversations'])} ({first['questions']} questions)", "",
                  "| mix | turn all@5 | all@10 | all@20 | turn any@5 | any@10 | any@20 | session all@5 | all@10 | "
                  "all@20 | session any@5 | any@10 | any@20 | NDCG@10 |", "|---|" + "---|" * 13]
        for mix, m in mixes.items():
            o = m["overall"]
            cells = [o.get(f"{level}{which}@{k}", 0.0) for level in ("", "session ") for which in ("all", "any")
                     for k in KS]
            lines.append(f"| {mix} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {o.get('ndcg@10', 0.0):.3f} |")
        for key, label in SPLIT_MEASURES:
            lines += ["", f"{label} per category ({split}):", "",
                      "| mix | " + " | ".join(f"{c} (n)" for c in CATEGORIES.values()) + " |",
                      "|---|" + "---|" * len(CATEGORIES)]
            for mix, m in mixes.items():
                cells = [f"{m['by_category'][c].get(key, 0.0):.3f} ({m['by_category'][c]['questions']})"
                         if c in m["by_category"] else "–" for c in CATEGORIES.values()]
                lines.append(f"| {mix} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    s = result["summary"]
    mixes = list(s["mixes"])
    lines = [f"# Conversation memory — {result['data']}{' (quick)' if envelope['quick'] else ''}", "",
             f"{len(s['per_sample'])} conversations, {s['turns']:,} turns stored one `store` call each, "
             f"{s['questions']:,} questions of categories 1–4 ({s['unknown_evidence_ids']} evidence ids the "
             "conversations do not hold). Turn level: all@k, every evidence turn in the top k turns (recall_all@k); "
             "any@k, at least one (recall_any@k). Session level: the same of the sessions the evidence was said in, "
             "among the sessions of the top k turns.", "",
             "**Every conversation**:", "",
             "| mix | all@5 | all@10 | all@20 | any@5 | any@10 | any@20 | search p50 ms | p95 ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for mix, m in s["mixes"].items():
        o = m["overall"]
        lines.append(f"| {mix} | {o['all@5']:.3f} | {o['all@10']:.3f} | {o['all@20']:.3f} | {o['any@5']:.3f} | "
                     f"{o['any@10']:.3f} | {o['any@20']:.3f} | {m['search']['p50_ms']} | {m['search']['p95_ms']} |")
    lines += ["", "Turn recall_all@10 per category:", "",
              "| mix | " + " | ".join(f"{c} (n)" for c in CATEGORIES.values()) + " |",
              "|---|" + "---|" * len(CATEGORIES)]
    for mix, m in s["mixes"].items():
        cells = [f"{m['by_category'][c]['all@10']:.3f} ({m['by_category'][c]['questions']})"
                 if c in m["by_category"] else "–" for c in CATEGORIES.values()]
        lines.append(f"| {mix} | " + " | ".join(cells) + " |")
    lines += ["", f"`store` p50 {s['store']['p50_ms']} ms, p95 {s['store']['p95_ms']} ms ({s['store']['n']:,} stores).",
              "", "Turn recall_all@10 per conversation:", "", "| conversation | split | turns | questions | " +
              " | ".join(mixes) + " |", "|---|---|---|---|" + "---|" * len(mixes)]
    for p in s["per_sample"]:
        lines.append(f"| {p['sample']} | {p.get('split', '–')} | {p['turns']} | {p['questions']} | " +
                     " | ".join(f"{p[mix]['all@10']:.3f}" for mix in mixes) + " |")
    if s.get("splits"):
        lines += ["", "**The tuning and the test conversations apart** (`SPLITS` in benchmark/conversation.py):", "",
                  *split_tables(s["splits"], "####")]
    return "\n".join(lines).rstrip("\n") + "\n"


def run_suite(run: Run, options: ConversationOptions) -> dict[str, Any]:
    """Measure every conversation of the LoCoMo-format file ``options.data``."""
    data = options.data
    try:
        samples = json.loads(data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"conversation: cannot read {data}: {exc}") from None
    if not isinstance(samples, list) or not all(isinstance(s, dict) and "conversation" in s and "qa" in s
                                                for s in samples):
        raise SystemExit(f"conversation: {data} is not a list of LoCoMo samples ({{conversation, qa}} each)")
    if run.quick:
        samples = samples[:1]
    settings = Settings()
    # One copy of the bundled embedding model, loaded (and closed) by an engine of its own, serves every sample.
    with engine_at(run.workspace("conversation-model")) as model_owner:
        embedder = model_owner.embedder()
        started = time.perf_counter()
        measured = [measure_sample(run, sample, i, settings, embedder) for i, sample in enumerate(samples)]
        seconds = time.perf_counter() - started
    result = {"data": data.name, "seconds": round(seconds, 1), "summary": summarize(measured)}
    mixes = result["summary"]["mixes"]
    plots.grouped_bars(run.folder / "all-at-10.png", "Evidence recall all@10 by category",
                       list(CATEGORIES.values()),
                       {mix: [m["by_category"].get(c, {}).get("all@10", 0.0) for c in CATEGORIES.values()]
                        for mix, m in mixes.items()}, "all@10")
    return result
