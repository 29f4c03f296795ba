"""The restrictions a search puts on memories, as typed values; the store turns them into its filter text."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from . import filters as sql


@dataclass(frozen=True)
class Filters:
    """Restrictions every channel applies. Empty fields restrict nothing."""

    project: str | None = None
    source_prefixes: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    type: str | None = None
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    ids: list[str] | None = None  # only these memories (None: no restriction)
    #: ``current``: only memories no newer one superseded; ``superseded``: only those a newer one did.
    state: Literal["any", "current", "superseded"] = "any"

    @property
    def restricts(self) -> bool:
        """Whether any field restricts anything."""
        return filter_text(self) is not None


#: The filter text of current memories (no newer memory superseded them).
CURRENT = "valid_to IS NULL"
SUPERSEDED = "valid_to IS NOT NULL"


def filter_text(filters: Filters | None) -> str | None:
    """The store's filter text for ``filters`` (``None``: no restriction).

    Raises:
        ValueError: ``since`` or ``until`` falls outside years 1–9999 in UTC.
    """
    if filters is None:
        return None
    f = filters
    tags = None
    if f.tags:
        tags = "array_has_any(tags, [" + ", ".join(sql.quote(t) for t in f.tags) + "])"
    return sql.all_of(
        f"project = {sql.quote(f.project)}" if f.project else None,
        sources_under(f.source_prefixes),
        sql.in_list("kind", f.kinds) if f.kinds else None,
        sql.in_list("id", f.ids) if f.ids is not None else None,
        f"type = {sql.quote(f.type)}" if f.type else None,
        tags,
        f"updated_at >= {sql.timestamp(f.since)}" if f.since else None,
        f"updated_at <= {sql.timestamp(f.until)}" if f.until else None,
        CURRENT if f.state == "current" else SUPERSEDED if f.state == "superseded" else None,
    )


def sources_under(prefixes: tuple[str, ...] | list[str]) -> str | None:
    """Rows whose ``source`` starts with any of ``prefixes`` (``None`` for none)."""
    return " OR ".join(f"({sql.prefix('source', p)})" for p in prefixes) if prefixes else None
