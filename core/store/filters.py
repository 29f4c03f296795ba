"""Building LanceDB (DataFusion SQL) filter expressions from typed values, safely quoted."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime


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
    """A timestamp literal in UTC, comparable with the stores' ``timestamp[us, UTC]`` columns.

    A value without an offset is taken as UTC. The year has four digits from year 1 on (``strftime``'s
    ``%Y`` writes year 1 as ``1``, which the SQL parser refuses).

    Raises:
        ValueError: ``value`` falls outside years 1–9999 in UTC (tool arguments are refused before this).
    """
    try:
        utc = value.astimezone(UTC) if value.tzinfo else value
    except OverflowError:
        raise ValueError(f"{value.isoformat()} is outside years 1–9999 in UTC") from None
    return f"CAST({quote(utc.replace(tzinfo=None).isoformat(timespec='microseconds'))} AS TIMESTAMP)"


def all_of(*clauses: str | None) -> str | None:
    """Clauses joined with AND (``None`` clauses skipped); ``None`` when nothing is left."""
    kept = [f"({c})" for c in clauses if c]
    return " AND ".join(kept) if kept else None
