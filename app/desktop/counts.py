"""What Engram remembers, counted for the Home page's sentence and the tray's status line (read on a worker)."""

from __future__ import annotations

from typing import Any

from engram.core import Engine, EngramError


def collect_overview(engine: Engine) -> dict[str, Any]:
    """Counts per workspace and project, passages and notes, and the latest notes (runs on a worker thread)."""
    workspaces: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    for name in engine.workspace_names():
        try:
            out = engine.tools.wake_up(workspace=name, limit=8)
            kinds = {k.name: k.count for k in engine.tools.status(workspace=name).result.by_kind}
        except EngramError as exc:
            workspaces.append({"name": name, "error": exc.message, "projects": [], "memories": 0, "sources": 0,
                               "notes": 0, "passages": 0})
            continue
        w = out.result
        workspaces.append({"name": name, "memories": w.memories, "sources": w.sources,
                           "notes": kinds.get("note", 0) + kinds.get("exchange", 0),
                           "passages": kinds.get("chunk", 0) + kinds.get("content", 0),
                           "projects": [(p.project, p.memories, p.sources) for p in w.projects]})
        recent.extend({"workspace": name, "title": m.title or m.content[:80], "project": m.project,
                       "updated_at": m.updated_at, "id": m.id} for m in w.recent)
    recent.sort(key=lambda m: m["updated_at"], reverse=True)
    return {"workspaces": workspaces, "recent": recent[:10]}


def count_of(n: int, one: str, many: str) -> str:
    """``n`` with the noun that fits it: ``1 note``, ``2,025 passages``."""
    return f"{n:,} {one if n == 1 else many}"


def remembered(overview: dict[str, Any]) -> str:
    """What is remembered, in words: ``2,025 passages from 69 files and 3 notes``, ``5 notes``, ``nothing yet``."""
    passages = sum(w.get("passages", 0) for w in overview["workspaces"])
    notes = sum(w.get("notes", 0) for w in overview["workspaces"])
    files = sum(w.get("sources", 0) for w in overview["workspaces"])
    parts = []
    if passages:
        parts.append(f"{count_of(passages, 'passage', 'passages')} from {count_of(files, 'file', 'files')}")
    if notes:
        parts.append(count_of(notes, "note", "notes"))
    return " and ".join(parts) or "nothing yet"


def state_sentence(overview: dict[str, Any], editors_connected: int, local_ai: bool) -> str:
    """The Home page's one sentence: what Engram remembers, how many editors use it, whether local AI is on."""
    editors = count_of(editors_connected, "editor", "editors") + " connected"
    return f"Engram remembers {remembered(overview)} · {editors} · local AI {'on' if local_ai else 'off'}"
