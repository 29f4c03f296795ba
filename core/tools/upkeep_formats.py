"""How upkeep's tools answer: ``review`` (what there is to tidy), ``tidy`` (what an answer did) and ``forget``.

Every line is written for an agent and a person alike, as the other tools' answers are (``formats.py``); the golden
files ``tests/golden/review.txt``, ``writes.txt`` and ``forget.txt`` hold them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .formats import day, limit_lines
from .results import Forgotten, Memory, Review, Tidied


def format_tidied(t: Tidied, max_chars: int) -> str:
    others = ", ".join(t.others)
    if t.action == "supersede":
        text = (f"{t.id} now replaces {others} in {t.workspace} (kept as history: search leaves "
                f"{'it' if len(t.others) == 1 else 'them'} out unless history=true)")
    elif t.action == "keep_both":
        text = f"kept both {t.id} and {others} as current in {t.workspace}: not offered as a possible update again"
    elif t.action == "merge":
        text = (f"merged {others} into {t.id} in {t.workspace}, now seen {t.seen} times: each stays as its history and "
                f"its text is kept with it (`engram unmerge {t.id}` splits them again)")
    else:
        own = "; it shows its own text again" if t.restored_own else ""
        text = (f"split {t.id} in {t.workspace}: {len(t.others)} {'memory' if len(t.others) == 1 else 'memories'} "
                f"again ({others}){own}; {t.id} is now seen {t.seen} {'time' if t.seen == 1 else 'times'}")
    return text[:max_chars]


def _counted(counts: Mapping[str, int], nouns: Mapping[str, tuple[str, str]] | None = None) -> str:
    def named(key: str, n: int) -> str:
        one, many = (nouns or {}).get(key, (key, key))
        return f"{n:,} {one if n == 1 else many}"

    if nouns is None:  # names (projects): the name first
        return ", ".join(f"{k} {n:,}" for k, n in counts.items())
    return ", ".join(named(k, n) for k, n in counts.items())


_KIND_NOUNS = {"note": ("note", "notes"), "exchange": ("exchange", "exchanges"),
               "chunk": ("file chunk", "file chunks"), "content": ("text chunk", "text chunks")}


def format_forgotten(f: Forgotten, max_chars: int) -> str:
    if not f.count:
        return (f"Nothing in {f.workspace} matches these filters; nothing was forgotten." if not f.dry_run else
                f"Nothing in {f.workspace} matches these filters: forget would take nothing.")
    noun = "memory" if f.count == 1 else "memories"
    head = (f"Would forget {f.count:,} {noun} in {f.workspace}: "
            if f.dry_run else f"Forgot {f.count:,} {noun} in {f.workspace}: ")
    lines = [head + _counted(f.by_kind, _KIND_NOUNS) + "; by project: " + _counted(f.by_project) + "."]
    if f.files:
        kept = " (kept out of later ingests of their folder)" if f.kept_out else ""
        whole = ", ".join(f"{name} ({n:,} chunks)" for name, n in zip(f.files, f.file_chunks, strict=True))
        lines.append(f"{'Files and texts going whole' if f.dry_run else 'Files and texts forgotten whole'}{kept}: "
                     f"{whole}")
    if f.dry_run:
        for item in f.listed:
            when = f"{item.created_at:%Y-%m-%d}" if item.created_at else "undated"
            lines.append(f"  {item.id} · {item.project} · {item.kind} · {when} · {item.title}")
        if f.memories > len(f.listed):
            lines.append(f"  … and {f.memories - len(f.listed):,} more notes and exchanges")
        lines.append("Call forget again with the same filters and confirm=true to forget them.")
    return limit_lines(lines, max_chars, "lines")


def _gist(memory: Memory, width: int = 100) -> str:
    """A memory in one line: its title, or its text's start."""
    text = memory.title or " ".join(memory.content.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def format_review(r: Review, max_chars: int) -> str:
    scope = f"project {r.project}" if r.project else "every project"
    lines = [f"Review of {r.workspace}, {scope}:"]
    if r.seen_again_total:
        lines.append(f"Written more than once ({r.seen_again_total:,}; each repeat was counted on the memory, "
                     "not stored again):")
        lines += [f"  {m.id} · {m.project} · {m.kind} · seen {m.seen_count} times · {_gist(m)}" for m in r.seen_again]
        if r.seen_again_total > len(r.seen_again):
            lines.append(f"  … and {r.seen_again_total - len(r.seen_again):,} more (raise limit)")
    else:
        lines.append("Written more than once: none.")
    compared = (f"the newest {r.compared:,} of {r.current:,} current notes and exchanges compared"
                if r.compared < r.current else f"{r.current:,} current notes and exchanges compared")
    if r.near_pairs_total:
        pairs = "pair" if r.near_pairs_total == 1 else "pairs"
        lines.append(f"Near duplicates stored apart ({r.near_pairs_total:,} {pairs} at similarity ≥ {r.threshold:g}; "
                     f"{compared}; engram merge ID ID, or store with supersedes, makes a pair one):")
        for pair in r.near_pairs:
            lines.append(f"  {pair.similarity:.3f}: {pair.first.id} {_gist(pair.first, 60)} | {pair.second.id} "
                         f"{_gist(pair.second, 60)}")
        if r.near_pairs_total > len(r.near_pairs):
            lines.append(f"  … and {r.near_pairs_total - len(r.near_pairs):,} more pairs (raise limit)")
    else:
        lines.append(f"Near duplicates stored apart: none at similarity ≥ {r.threshold:g} ({compared}).")
    if r.possible_updates_total:
        lines.append(f"Possible updates ({r.possible_updates_total:,}; a newer note alike to an older one with a "
                     "detail changed: engram supersede NEW OLD makes the newer the current one, engram keep-both NEW "
                     "OLD keeps both; tidy does either):")
        for update in r.possible_updates:
            lines.append(f"  {update.newer.id} ({day(update.newer.created_at)}) may update {update.older.id} "
                         f"({day(update.older.created_at)}): {'; '.join(update.changes) or 'details differ'}")
            lines.append(f"    newer: {_gist(update.newer)}")
            lines.append(f"    older: {_gist(update.older)}")
        if r.possible_updates_total > len(r.possible_updates):
            lines.append(f"  … and {r.possible_updates_total - len(r.possible_updates):,} more (raise limit)")
    else:
        lines.append("Possible updates: none.")
    if r.merged_before_total:
        lines.append(f"Merged by similarity before Engram kept merged texts: check these ({r.merged_before_total:,}; "
                     "repeats counted on them were not kept, and a near-identical one may have been another fact):")
        for m in r.merged_before:
            replaced = (f" · its text was replaced by a longer one on {day(m.updated_at)}"
                        if m.updated_at != m.created_at else "")
            lines.append(f"  {m.id} · {m.project} · {m.kind} · {m.merged_unkept} more "
                         f"{'sighting' if m.merged_unkept == 1 else 'sightings'}{replaced} · {_gist(m)}")
        if r.merged_before_total > len(r.merged_before):
            lines.append(f"  … and {r.merged_before_total - len(r.merged_before):,} more (raise limit)")
    if r.superseded_total:
        lines.append(f"Superseded ({r.superseded_total:,}; kept as history, left out of search unless history=true):")
        lines += [f"  {m.id} · {m.project} · superseded by {m.superseded_by} on "
                  f"{day(m.valid_to) if m.valid_to else '?'} · {_gist(m)}" for m in r.superseded]
        if r.superseded_total > len(r.superseded):
            lines.append(f"  … and {r.superseded_total - len(r.superseded):,} more (raise limit)")
    else:
        lines.append("Superseded: none.")
    return limit_lines(lines, max_chars, "lines")
