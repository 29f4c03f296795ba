"""The Markdown rendering of an export, for a person: ``markdown/<project>/<kind>.md`` and ``facts.md``.

An import never reads it (the JSON lines are the export's content); it is there to read, search with a text editor
or grep, and keep.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from .folder import MARKDOWN

_UNSAFE = re.compile(r"[^\w.-]+")
_TITLE_CHARS = 80


def file_name(name: str) -> str:
    """``name`` (a project or a kind) as a file or folder name on every platform."""
    return _UNSAFE.sub("_", name).strip("._") or "_"


def _when(value: Any) -> str:
    return f"{value:%Y-%m-%d %H:%M} UTC" if isinstance(value, datetime) else str(value)


def _heading(row: Mapping[str, Any]) -> str:
    title = str(row.get("title") or "").strip()
    if not title:
        first = next((line.strip() for line in str(row.get("content", "")).splitlines() if line.strip()), "")
        title = first if len(first) <= _TITLE_CHARS else first[:_TITLE_CHARS - 1] + "…"
    return " ".join(title.split()) or "(untitled)"


def _memory(row: Mapping[str, Any], level: str) -> list[str]:
    facts = [f"`{row['id']}`", str(row.get("type", ""))]
    if row.get("tags"):
        facts.append(" ".join("#" + str(t) for t in row["tags"]))
    facts.append(f"created {_when(row.get('created_at'))}")
    if row.get("updated_at") != row.get("created_at"):
        facts.append(f"updated {_when(row.get('updated_at'))}")
    if row.get("kind") in ("chunk", "content") and row.get("end_line"):
        facts.append(f"lines {row.get('start_line')}–{row.get('end_line')}")
    elif row.get("source"):
        facts.append(f"from {row['source']}")
    return [f"{level} {_heading(row)}", "", " · ".join(f for f in facts if f), "", str(row.get("content", "")), ""]


def _kind_file(project: str, kind: str, rows: list[Mapping[str, Any]]) -> str:
    lines = [f"# {project}: {kind}", "", f"{len(rows):,} {'memory' if len(rows) == 1 else 'memories'}.", ""]
    if kind in ("chunk", "content"):
        by_source: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for row in rows:
            by_source[str(row.get("source", ""))].append(row)
        for source in sorted(by_source):
            lines += [f"## {source}", ""]
            for row in sorted(by_source[source], key=lambda r: int(r.get("chunk_index") or 0)):
                lines += _memory(row, "###")
    else:
        for row in sorted(rows, key=lambda r: (r.get("created_at") or datetime.min, str(r["id"]))):
            lines += _memory(row, "##")
    return "\n".join(lines)


def _facts_file(project: str, rows: list[Mapping[str, Any]]) -> str:
    lines = [f"# {project}: facts", ""]
    for row in sorted(rows, key=lambda r: (str(r["subject"]).lower(), str(r["predicate"]), str(r["object"]))):
        span = f"from {_when(row['valid_from'])}" + (f" to {_when(row['ended'])}" if row.get("ended") else "")
        source = f" · from {row['source']}" if row.get("source") else ""
        lines.append(f"- {row['subject']} — {row['predicate']} — {row['object']} ({span}; `{row['id']}`{source})")
    return "\n".join([*lines, ""])


def write_markdown(folder: Path, memories: Iterable[Mapping[str, Any]], facts: Iterable[Mapping[str, Any]]) -> int:
    """Write the Markdown rendering of ``memories`` and ``facts`` (rows as Python values) under ``folder``;
    returns how many files it wrote.

    Raises:
        OSError: a file cannot be written.
    """
    by_project: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in memories:
        by_project[str(row["project"])][str(row["kind"])].append(row)
    facts_by_project: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in facts:
        facts_by_project[str(row["project"])].append(row)
    root = folder / MARKDOWN
    root.mkdir()
    written = 0
    taken: set[str] = set()
    for project in sorted(set(by_project) | set(facts_by_project)):
        name = file_name(project)
        while name.lower() in taken:  # two projects that read as one name (case-insensitive file systems too)
            name += "_"
        taken.add(name.lower())
        place = root / name
        place.mkdir()
        for kind, rows in sorted(by_project[project].items()):
            (place / f"{file_name(kind)}.md").write_text(_kind_file(project, kind, rows), encoding="utf-8")
            written += 1
        if facts_by_project[project]:
            (place / "facts.md").write_text(_facts_file(project, facts_by_project[project]), encoding="utf-8")
            written += 1
    return written
