"""Formatters: tool results as compact text for an agent's context.

The block format (search, get_memory, neighbors, file_chunks) is documented in docs/formats.md and
pinned by golden-file tests. Every formatter respects ``max_chars`` and says what it left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from .render import Block, query_terms, render_blocks
from .results import (
    Deleted,
    DeviceContext,
    Fact,
    FactChange,
    FactList,
    FileChunks,
    GraphScope,
    IngestResult,
    Memory,
    MemoryList,
    NeighborList,
    SearchHit,
    SearchResult,
    SourceInfo,
    SourceList,
    Stored,
    WakeUp,
    WorkspaceStatus,
)

SEP = " · "


def day(value: datetime) -> str:
    """A date as the answers write it: ``2026-12-07``."""
    return value.date().isoformat()  # four-digit years (strftime's %Y writes year 99 as "99")


def where(memory: Memory) -> str:
    """The source of a memory with its line range (``path:12-40``); empty for notes."""
    if not memory.source:
        return ""
    name = memory.path or memory.source
    if memory.end_line:
        return f"{name}:{memory.start_line}-{memory.end_line}"
    return name


def memory_meta(memory: Memory, *extra: str) -> str:
    """The first line of a memory block: id, project, source:lines, kind/type, date, then ``extra``."""
    parts = [memory.id, memory.project, where(memory), f"{memory.kind}/{memory.type}", day(memory.updated_at)]
    parts = [p for p in parts if p]
    shown = [t for t in memory.tags if ":" not in t]  # namespaced tags (kind:, lang:, layer:, topic:) stay unprinted
    if shown:
        parts.append(" ".join("#" + t for t in shown))
    if memory.seen_count > 1:
        parts.append(f"seen {memory.seen_count} times")
    if memory.valid_to is not None:
        parts.append(f"superseded by {memory.superseded_by} on {day(memory.valid_to)}")
    return SEP.join([*parts, *[e for e in extra if e]])


def limit_lines(lines: Sequence[str], max_chars: int, what: str) -> str:
    """``lines`` in at most ``max_chars`` characters, the last line saying how many more ``what`` were left out."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        tail = f"… {len(lines) - i} more {what} not shown (raise max_chars)"
        if used + len(line) + 1 + len(tail) > max_chars and i < len(lines) - 1 or used + len(line) > max_chars:
            out.append(tail)
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


# ------------------------------------------------------------------ block tools

def format_search(result: SearchResult, max_chars: int) -> str:
    top = [f"! {w}" for w in result.warnings]
    blocks = [Block(memory_meta(h, "+".join(h.channels) or "brought in: it may update the next result", outdated(h)), h.content, h.title)
              for h in result.hits]

    def footer(shown: int, total: int) -> str:
        history = superseded_line(result.superseded_matched)
        if total == 0 and result.superseded_matched:
            noun = "memory" if result.superseded_matched == 1 else "memories"
            return (f"No current results: {result.superseded_matched} superseded {noun} matched (history=true shows "
                    "them, each with what superseded it).")
        if total == 0:
            return "No results. Try other words, fewer filters, or list_sources to see what is stored."
        hidden = total - shown
        return (f"— {shown} of {total} results shown" + (f"; {hidden} not shown (raise max_chars)" if hidden else "")
                + history)

    return render_blocks(blocks, max_chars, top=top, terms=query_terms(result.query), footer=footer)


def outdated(hit: SearchHit) -> str:
    """A hit's mark when a newer note may update it ("" when none): ``possibly outdated by ID (30 days → 90 days)``."""
    if not hit.possibly_outdated_by:
        return ""
    return f"possibly outdated by {hit.possibly_outdated_by}" + (f" ({hit.outdated_changes})" if hit.outdated_changes
                                                                 else "")


def superseded_line(matched: int) -> str:
    """What a footer adds when superseded memories matched and were left out ("" for none)."""
    if not matched:
        return ""
    noun = "memory" if matched == 1 else "memories"
    return f"; {matched} superseded {noun} also matched (history=true shows them)"


def format_memories(result: MemoryList, max_chars: int) -> str:
    blocks = [Block(memory_meta(m, _versions(m, result.history.get(m.id, []))), m.content + merged_lines(m), m.title)
              for m in result.items]
    missing = f"; not found: {', '.join(result.missing)}" if result.missing else ""

    def footer(shown: int, total: int) -> str:
        hidden = total - shown
        return f"— {shown} of {total} memories shown" + (f"; {hidden} cut (raise max_chars)" if hidden else "") + missing

    return render_blocks(blocks, max_chars, footer=footer)


def merged_lines(memory: Memory) -> str:
    """What was merged into a memory, as lines after its text ("" when nothing was): each merged text with its id,
    date and how it came, its own text when a merged one is shown, and the sightings whose texts were not kept."""
    lines: list[str] = []
    if memory.merged:
        noun = "text" if len(memory.merged) == 1 else "texts"
        lines.append(f"merged into it: {len(memory.merged)} {noun} (`engram unmerge {memory.id}`, or tidy action "
                     "unmerge, makes them memories again):")
        for item in memory.merged:
            how = "merged by hand" if item.how == "merge" else f"near duplicate, {item.similarity:.2f} alike"
            seen = f" · seen {item.seen} times" if item.seen > 1 else ""
            shown = " · shown above" if item.shown else ""
            lines.append(f"  {item.id} · {day(item.written)} · {how}{seen}{shown}: {' '.join(item.content.split())}")
    if memory.own_text is not None:
        lines.append(f"its own text: {' '.join(memory.own_text.split())}")
    if memory.merged_unkept:
        lines.append(f"written {memory.merged_unkept} more {'time' if memory.merged_unkept == 1 else 'times'} before "
                     "Engram kept merged texts: those texts were not kept")
    return "\n\n" + "\n".join(lines) if lines else ""


def _versions(memory: Memory, chain: Sequence[Memory]) -> str:
    """A memory's place in its supersession chain: ``version 2 of 3: 0a1b… → [this] → 9f8e…`` ("" alone)."""
    if len(chain) < 2:
        return ""
    ids = [m.id for m in chain]
    at = ids.index(memory.id) if memory.id in ids else -1
    return f"version {at + 1} of {len(ids)}: " + " → ".join("[this]" if i == memory.id else i for i in ids)


def format_neighbors(result: NeighborList, max_chars: int) -> str:
    blocks = [Block(memory_meta(n, f"{n.relation}" + (f" via {n.via}" if n.via else "") + f" (hop {n.hop})"),
                    n.content, n.title) for n in result.items]

    def footer(shown: int, total: int) -> str:
        if total == 0:
            return f"— no neighbours of {result.origin}"
        hidden = total - shown
        return (f"— {shown} of {total} neighbours of {result.origin} shown"
                + (f"; {hidden} not shown (raise max_chars)" if hidden else ""))

    return render_blocks(blocks, max_chars, footer=footer)


def format_file_chunks(result: FileChunks, max_chars: int) -> str:
    blocks = [Block(SEP.join([m.id, where(m) or m.source, f"chunk {m.chunk_index + 1}/{result.total_chunks}"]),
                    m.content, m.title)
              for m in result.items]

    def footer(shown: int, total: int) -> str:
        if total == 0:
            return f"— no chunks of {result.path or result.source} in that range ({result.total_chunks} in all)"
        hidden = total - shown
        return (f"— {shown} of {total} matching chunks shown ({result.total_chunks} in the file)"
                + (f"; {hidden} not shown (raise max_chars or narrow the line range)" if hidden else ""))

    return render_blocks(blocks, max_chars, footer=footer)


# ------------------------------------------------------------------- line tools

def _source_line(s: SourceInfo) -> str:
    return SEP.join([s.path or s.source, s.project, f"{s.chunk_count} chunks", f"{s.size:,} bytes", day(s.ingested_at)])


def format_file_summary(info: SourceInfo, max_chars: int) -> str:
    lines = [_source_line(info), f"summary: {info.summary or '(none)'}"]
    if info.outline:
        lines.append("outline:")
        lines += [f"  {t}" for t in info.outline]
    return limit_lines(lines, max_chars, "outline lines")


def format_sources(result: SourceList, max_chars: int) -> str:
    if not result.items:
        return f"No sources{' at this offset' if result.total else ' yet: ingest_path or ingest_content adds some'}."
    lines = [f"{result.total} sources; showing {result.offset + 1}–{result.offset + len(result.items)}"]
    lines += [_source_line(s) for s in result.items]
    return limit_lines(lines, max_chars, "sources")


def fact_line(f: Fact) -> str:
    when = f"since {day(f.valid_from)}" + (f", ended {day(f.ended)}" if f.ended else "")
    return f"{f.id}: {f.subject} —{f.predicate}→ {f.object} ({f.project}, {when})"


def format_facts(result: FactList, max_chars: int) -> str:
    if not result.items:
        return "No matching facts."
    return limit_lines([fact_line(f) for f in result.items], max_chars, "facts")


def format_graph_scope(g: GraphScope, max_chars: int) -> str:
    lines = [f"graph of {g.project or 'the whole workspace'}: {g.memories} memories"]
    lines.append("edges: " + (", ".join(f"{c.name} {c.count}" for c in g.edges_by_relation) or "none"))
    lines.append("top entities: " + (", ".join(f"{c.name} ({c.count})" for c in g.top_entities) or "none"))
    lines.append("fact predicates: " + (", ".join(f"{c.name} ({c.count})" for c in g.predicates) or "none"))
    return limit_lines(lines, max_chars, "lines")


def format_status(s: WorkspaceStatus, max_chars: int) -> str:
    lines = [
        f"workspace {s.workspace}: {s.memories} memories, {s.sources} sources, {s.facts} current facts, {s.edges} edges",
        "by kind: " + (", ".join(f"{c.name} {c.count}" for c in s.by_kind) or "none"),
        "embedding model: " + s.embed_model + (" (loaded)" if s.embed_ready else " (not loaded yet)")
        + (f" — {s.embed_note}" if s.embed_note else ""),
        "indexes: " + (", ".join(s.indexes) or "none yet (built after the first ingest)"),
        *([f"local inference for recall: {s.local_inference}"] if s.local_inference else []),
        *([f"semantic run budget: {s.run_budget}"] if s.run_budget else []),
        *s.capture,
        *([f"shared: {s.shared_at}; other machines' writes show up within {s.read_consistency_sec:g} s",
           f"this computer's part (chats, run ledger): {s.folder}"] if s.shared_at else [f"folder: {s.folder}"]),
    ]
    if len(s.workspaces) > 1:
        lines.append("workspaces: " + ", ".join(s.workspaces))
    lines += [f"project {p.project}: {p.memories} memories, {p.sources} sources" for p in s.projects]
    return limit_lines(lines, max_chars, "projects")


def format_device(d: DeviceContext, max_chars: int) -> str:
    lines = [
        f"{d.os} on {d.machine}, {d.cpu_count} CPU threads, "
        + (f"{d.memory_total_mb:,} MB memory" if d.memory_total_mb else "memory unknown"),
        f"python {d.python}, llama-cpp-python {d.llama_cpp}, GPU offload " + (
            "available" if d.gpu_offload else "not available (no GPU device for its backends)"
            if set(d.backends) - {"CPU"} else "not in this build"),
        f"llama.cpp: {d.system_info}",
        f"embedding: {d.embed_model} on {d.embed_threads} threads; data in {d.data_dir}",
        "GPUs: " + ("; ".join(d.gpus) or "none found"),
        f"generation runs on: {d.gpu_choice}; fitting llama.cpp build: {d.build} ({d.build_reason})",
        "installed llama.cpp devices: " + (", ".join(d.backend_devices) or "unknown"),
        *([f"llama.cpp backends loaded from files: {', '.join(d.backends)}"] if d.backends else []),
        *([f"note: {d.backend_note}"] if d.backend_note else []),
        *([f"local inference for recall: {d.local_inference}"] if d.local_inference else []),
    ]
    if d.note:
        lines.append(f"note: {d.note}")
    return limit_lines(lines, max_chars, "lines")


def format_wake_up(w: WakeUp, max_chars: int) -> str:
    lines = [f"workspace {w.workspace}" + (f", project {w.project}" if w.project else "")
             + f": {w.memories} memories, {w.sources} sources"]
    if w.projects and not w.project:
        lines.append("projects: " + ", ".join(f"{p.project} ({p.memories})" for p in w.projects))
    if w.facts:
        lines.append("current facts:")
        lines += ["  " + fact_line(f) for f in w.facts]
    if w.recent:
        lines.append("recent notes:")
        for m in w.recent:
            text = " ".join(m.content.split())
            lines.append(f"  {m.id} · {day(m.updated_at)} · {m.type}: {text[:160]}{'…' if len(text) > 160 else ''}")
    if not w.facts and not w.recent:
        lines.append("no notes or facts yet")
    return limit_lines(lines, max_chars, "lines")


# ------------------------------------------------------------------- writes

def format_stored(s: Stored, max_chars: int) -> str:
    replaced = f"; it supersedes {', '.join(s.superseded)} (kept as history)" if s.superseded else ""
    if s.duplicate_of:
        how = ("the same text" if s.merged == "exact" else "a near-identical text with the same details (both texts "
               f"kept, the longer shown; `engram unmerge {s.id}` splits them)")
        return (f"already remembered as {s.kind} {s.id} in {s.workspace}/{s.project}: {how}, now seen {s.seen} "
                f"times; nothing new was stored{replaced}")[:max_chars]
    linked = f"; linked by {', '.join(s.entities[:8])}" if s.entities else ""
    update = ""
    if s.may_update:
        update = (f"; it may update {s.may_update} ({s.changes}): if it does, `engram supersede {s.id} {s.may_update}` "
                  f"(tool tidy, action supersede) makes it the current one; if both are true, `engram keep-both "
                  f"{s.id} {s.may_update}` (action keep_both)")
    return f"stored {s.kind} {s.id} in {s.workspace}/{s.project}{linked}{replaced}{update}"[:max_chars]


def format_deleted(d: Deleted, max_chars: int) -> str:
    if d.source:
        kept = "; it stays out when its folder is ingested again (again=[path] takes it back)" if d.kept_out else ""
        return f"forgot {d.source} and its {d.chunks} chunks in {d.workspace}{kept}"[:max_chars]
    noun = "memory" if len(d.ids) == 1 else "memories"
    return f"deleted {len(d.ids)} {noun} in {d.workspace}: {', '.join(d.ids)}"[:max_chars]


def format_fact_change(c: FactChange, max_chars: int) -> str:
    return (("added " if c.action == "add" else "ended ") + fact_line(c.fact))[:max_chars]


def format_ingest(r: IngestResult, max_chars: int) -> str:
    lines = [
        f"ingested {r.root} into {r.workspace}/{r.project}: {r.files_indexed} files indexed "
        f"({r.chunks_written} chunks), {r.files_unchanged} unchanged, {r.files_removed} removed, "
        f"{len(r.skipped)} skipped" + (f", in {r.seconds:.1f} s" if r.seconds else "")
    ]
    reasons: dict[str, int] = {}
    for s in r.skipped:
        key = s.reason.split(" (")[0]
        reasons[key] = reasons.get(key, 0) + 1
    lines += [f"  skipped {n}: {reason}" for reason, n in sorted(reasons.items(), key=lambda x: -x[1])]
    return limit_lines(lines, max_chars, "lines")
