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
    return {"workspaces": workspaces, "recent": recent[:10], "capture": collect_capture(engine)}


def collect_capture(engine: Engine) -> dict[str, Any]:
    """What capture stored today against its caps, and which folders are kept current (on a worker thread)."""
    ledger = engine.capture_ledger()
    today = ledger.today()
    capture = engine.settings.capture
    watch = engine.folder_watch
    return {"editors": [name for name, on in (("Claude Code", capture.claude_code), ("Codex", capture.codex)) if on],
            "turns": today.turns, "turns_cap": capture.turns_per_day, "chars": today.chars,
            "chars_cap": capture.chars_per_day, "capped": today.capped, "sessions": len(ledger.sessions()),
            "session_cap": capture.turns_per_session,
            "watching": len(watch.current()) if watch is not None else None,
            "watch_paused": watch.paused if watch is not None else False}


def capture_sentence(capture: dict[str, Any]) -> str:
    """The Home page's line about capture: today's turns and characters against their caps, and the watch.

    E.g. ``Sessions remembered from Claude Code and Codex today: 12 of 3,000 turns, 4,100 of 5,000,000 characters
    (at most 1,000 turns a session) · 3 folders kept current``.
    """
    editors = capture["editors"]
    if editors:
        text = (f"Sessions remembered from {' and '.join(editors)} today: {capture['turns']:,} of "
                f"{capture['turns_cap']:,} turns, {capture['chars']:,} of {capture['chars_cap']:,} characters "
                f"(at most {capture['session_cap']:,} turns a session)")
        if capture["capped"]:
            text += f"; {count_of(capture['capped'], 'turn', 'turns')} left out over a limit"
    else:
        text = "AI tool sessions are not remembered (Settings: Remembering)"
    watching = capture["watching"]
    if watching is None:
        return text
    if capture["watch_paused"]:
        return text + " · keeping folders current is paused"
    return text + f" · {count_of(watching, 'folder', 'folders')} kept current"


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
    editors = count_of(editors_connected, "AI tool", "AI tools") + " connected"
    return f"Engram remembers {remembered(overview)} · {editors} · local AI {'on' if local_ai else 'off'}"
