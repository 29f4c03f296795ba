"""The rows the store's named queries return.

Memory, source, fact and digest rows are the table's columns by name (``Row``: what LanceDB reads, with the
columns the query asked for), typed read-only: mypy (strict on core, mcp and app) refuses a write into a row the
store handed out, so a caller that wants another shape builds its own. The graph's edges and the tables' indexes
are frozen records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: One row of a table, its columns by name, read-only.
Row = Mapping[str, Any]


@dataclass(frozen=True)
class Edge:
    """One edge of the graph plane: ``src`` points at ``dst`` by ``relation``, with ``weight``."""

    src: str
    dst: str
    relation: str
    weight: float


@dataclass(frozen=True)
class IndexInfo:
    """One index of a table: its name, its kind (``FTS``, ``BTREE``, ``IVF_HNSW_SQ``, …) and its columns."""

    name: str
    index_type: str
    columns: tuple[str, ...]
