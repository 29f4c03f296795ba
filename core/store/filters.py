"""Building LanceDB (DataFusion SQL) filter expressions from typed values, safely quoted."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone


def quote(value: str) -> str:
    """A SQL string literal for ``value`` (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    """``column IN ('a', 'b')``; an empty list gives a filter that matches nothing."""
    items = [quote(v) for v in values]
    if not items:
        return "false"
    return f"{column} IN ({', '.join(items)})"


def prefix(column: str, value: str) -> str:
    """``column`` starts with ``value`` (LIKE with ``%``, ``_`` and ``\\`` escaped)."""
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{column} LIKE {quote(escaped + '%')} ESCAPE '\\'"


def timestamp(value: datetime) -> str:
    """A timestamp literal in UTC, comparable with the stores' ``timestamp[us, UTC]`` columns."""
    utc = value.astimezone(timezone.utc) if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return f"CAST({quote(utc.strftime('%Y-%m-%dT%H:%M:%S.%f'))} AS TIMESTAMP)"


def all_of(*clauses: str | None) -> str | None:
    """Clauses joined with AND (``None`` clauses skipped); ``None`` when nothing is left."""
    kept = [f"({c})" for c in clauses if c]
    return " AND ".join(kept) if kept else None
