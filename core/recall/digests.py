"""Altitude digests: extractive summaries of a source or entity, of a scope (project), of the workspace.

No model is needed: digests are stitched from what ingest already extracted (summaries, heading
outlines, the identifiers memories mention). They are rebuilt incrementally: each digest stores a
hash over its children, and a digest whose children hash is unchanged is not rewritten. A model
summarizer can later replace ``_compose`` functions without changing how digests are stored or used.

Coverage (a digest and a row it covers never share a pack):
- a ``source`` digest covers the memories of that source;
- an ``entity`` digest covers the memories that mention the entity;
- a ``scope`` digest covers the memories of its project; the ``workspace`` digest covers all.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from ..models.providers import Provider
from ..settings import Settings
from ..store import WorkspaceStore, Writer
from ..store.rows import Row
from ..store.schema import ENTITY_PREFIX
from ..tools.scope import Scope

LEVELS = ("source", "entity", "scope", "workspace")
ENTITY_MIN_MENTIONS = 3
MAX_ENTITIES = 400
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]")


def digest_id(level: str, key: str) -> str:
    return "d-" + hashlib.sha256(f"{level}\x00{key}".encode()).hexdigest()[:12]


def _hash(parts: list[str]) -> str:
    return hashlib.sha256("\x00".join(sorted(parts)).encode()).hexdigest()[:16]


def _n(count: int, noun: str, plural: str = "") -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _name(source: str) -> str:
    return PurePosixPath(source).name or source


def _outlines(store: WorkspaceStore) -> dict[str, list[str]]:
    rows = store.chunk_titles()
    by_source: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for r in rows:
        if r["title"]:
            by_source[r["source"]].append((r["chunk_index"], r["title"]))
    return {s: list(dict.fromkeys(t for _, t in sorted(items))) for s, items in by_source.items()}


def _compose_source(src: dict[str, Any], outline: list[str]) -> str:
    heads = "; ".join(outline[:12]) + (f"; … {len(outline) - 12} more" if len(outline) > 12 else "")
    return (src["summary"] or _name(src["source"])) + (f"\nSections: {heads}" if heads else "")


def _compose_entity(name: str, sources: list[str], count: int, sentences: list[str]) -> str:
    places = ", ".join(_name(s) for s in sources[:5]) + (f" and {len(sources) - 5} more" if len(sources) > 5 else "")
    lines = [f"{name}: mentioned by {_n(count, 'memory', 'memories')} in "
             f"{_n(len(sources), 'source')} ({places})."]
    lines += [f"- {s}" for s in sentences[:3]]
    return "\n".join(lines)


def _compose_scope(project: str, sources: list[dict[str, Any]], memories: int, entities: list[str]) -> str:
    top = sorted(sources, key=lambda s: (-s["chunk_count"], s["source"]))[:10]
    lines = [f"Project {project}: {_n(len(sources), 'source')}, {_n(memories, 'memory', 'memories')}."]
    if entities:
        lines.append("Most mentioned: " + ", ".join(entities[:12]) + ".")
    lines += [f"- {_name(s['source'])}: {s['summary'][:140]}" for s in top]
    return "\n".join(lines)


def _compose_workspace(name: str, scopes: list[Row]) -> str:
    lines = [f"Workspace {name}: {_n(len(scopes), 'project')}."]
    lines += [f"- {d['content'].splitlines()[0]}" for d in scopes]
    return "\n".join(lines)


def _sentences_with(text: str, name: str) -> list[str]:
    plain = name.split(".")[-1]
    found = [m.group(0).strip() for m in _SENTENCE.finditer(text) if plain in m.group(0).lower()]
    return [" ".join(s.split())[:200] for s in found]


def ensure_digests(scope: Scope) -> None:
    """Refresh the digests of ``scope``'s store when its tables changed since this process last did."""
    store = scope.store
    # The table versions this store's digests were last refreshed at live in the store's derived state.
    if store.derived.stamp("digests") != store.content_versions():
        refresh_digests(store, scope.writer, summarize=model_summarizer(scope.settings, scope.provider))
        store.derived.set_stamp("digests", store.content_versions())


Summarize = Callable[[str, str], "str | None"]
SUMMARY_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["summary"],
                  "properties": {"summary": {"type": "string", "maxLength": 500}}}


def model_summarizer(settings: Settings, provider_for: Callable[[str], Provider],
                     seconds: float = 30.0) -> Summarize | None:
    """With ``summarizer.enabled``, a function asking the helper model for a source's summary (None otherwise).

    ``provider_for(role)`` gives the helper model's provider; a failing one leaves the summary out.
    """
    if not settings.summarizer.enabled:
        return None

    def summarize(title: str, text: str) -> str | None:
        import json
        import time

        from ..errors import EngramError
        from ..models.redact import redact

        try:
            provider = provider_for("summarizer")
            out = provider.complete(
                [{"role": "system", "content": "Summarise the document in at most three sentences: what it is about "
                                               "and what it is for. Reply with JSON."},
                 {"role": "user", "content": f"{title}\n\n{redact(text[:6000]).text}"}],
                deadline=time.monotonic() + seconds, max_tokens=200, json_schema=SUMMARY_SCHEMA)
            return str(json.loads(out.text)["summary"]).strip() or None
        except (EngramError, ValueError, KeyError, TypeError):
            return None

    return summarize


def refresh_digests(store: WorkspaceStore, writer: Writer, summarize: Summarize | None = None) -> dict[str, int]:
    """Bring every digest of ``store`` up to date; returns how many were rewritten per level.

    Raises:
        StoreError: the store cannot be read or written.
    """
    now = datetime.now(UTC)
    existing = store.digest_hashes()
    rows: list[dict[str, Any]] = []
    keep: set[str] = set()

    def emit(level: str, key: str, project: str, title: str, children: list[str], compose: Any) -> dict[str, Any]:
        did = digest_id(level, key)
        keep.add(did)
        children_hash = _hash(children)
        row = {"id": did, "level": level, "key": key, "project": project, "title": title,
               "children_hash": children_hash, "children": len(children), "updated_at": now}
        if existing.get(did) == children_hash:
            return row
        row["content"] = compose()
        rows.append(row)
        return row

    sources = store.source_rows()
    outlines = _outlines(store)

    def source_digest(src: dict[str, Any]) -> str:
        extractive = _compose_source(src, outlines.get(src["source"], []))
        if summarize is None:
            return extractive
        chunks = sorted(store.chunks_of(src["source"], ["content", "chunk_index"]), key=lambda r: r["chunk_index"])
        written = summarize(_name(src["source"]), "\n".join(c["content"] for c in chunks))
        return f"{written}\n{extractive.split(chr(10), 1)[1]}" if written and "\n" in extractive else (
            written or extractive)

    for src in sources:
        emit("source", src["source"], src["project"], _name(src["source"]),
             [src["content_hash"], "model" if summarize else "extractive"], lambda src=src: source_digest(src))

    mentions = store.edges("mentions")
    by_entity: dict[str, list[str]] = defaultdict(list)
    for e in mentions:
        by_entity[e.dst[len(ENTITY_PREFIX):]].append(e.src)
    popular = sorted((n for n, ids in by_entity.items() if len(ids) >= ENTITY_MIN_MENTIONS),
                     key=lambda n: (-len(by_entity[n]), n))[:MAX_ENTITIES]
    wanted = {i for n in popular for i in sorted(by_entity[n])[:3]}
    memory_rows = store.memories_by_ids(wanted, ["id", "source", "project", "content"]) if wanted else {}
    all_sources = {r["id"]: (r["source"], r["project"]) for r in store.memories(["id", "source", "project"])}
    for name in popular:
        ids = sorted(by_entity[name])
        where = list(dict.fromkeys(all_sources[i][0] or "notes" for i in ids if i in all_sources))
        in_projects = Counter(all_sources[i][1] for i in ids if i in all_sources)
        project = in_projects.most_common(1)[0][0] if in_projects else ""
        texts = [memory_rows[i]["content"] for i in ids[:3] if i in memory_rows]
        emit("entity", name, project, name, ids,
             lambda name=name, where=where, ids=ids, texts=texts: _compose_entity(
                 name, where, len(ids), [s for t in texts for s in _sentences_with(t, name)]))

    projects = sorted({p for _, p in all_sources.values()} | {s["project"] for s in sources})
    memory_counts = Counter(p for _, p in all_sources.values())
    scope_rows = []
    for project in projects:
        mine = [s for s in sources if s["project"] == project]
        entities = [n for n in popular if any(all_sources.get(i, ("", ""))[1] == project for i in by_entity[n][:20])]
        children = [s["content_hash"] for s in mine] + [f"memories:{memory_counts[project]}"]
        row = emit("scope", project, project, f"project {project}", children,
                   lambda project=project, mine=mine, entities=entities: _compose_scope(
                       project, mine, memory_counts[project], entities))
        scope_rows.append(row)
    fresh = {r["id"]: r for r in rows}
    scope_docs = [{"content": fresh[r["id"]]["content"]} if r["id"] in fresh
                  else store.digests_by_ids([r["id"]], ["content"])[r["id"]]
                  for r in scope_rows]
    emit("workspace", store.name, "", f"workspace {store.name}", [r["children_hash"] for r in scope_rows],
         lambda: _compose_workspace(store.name, scope_docs))

    stale = [d for d in existing if d not in keep]
    writer.run(store.replace_digests, rows, stale)
    return dict(Counter(r["level"] for r in rows))
