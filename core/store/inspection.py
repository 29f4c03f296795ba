"""Raw reads of a workspace's tables, for tests and benchmarks: any table, under any filter text.

The engine never asks the store this way: it asks the named reads of ``queries``, and a test
(``tests/test_store_seam.py``) fails if a module of core, mcp or app imports this one. Tests and benchmarks
use it to look at what a write left behind without a named query for every such look.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .rows import Row
from .workspace import WorkspaceStore

Table = Literal["memories", "sources", "facts", "edges", "digests"]


def table(store: WorkspaceStore, name: Table) -> Any:
    """The LanceDB table ``name`` of ``store`` itself."""
    return getattr(store, "_" + name)


def rows(store: WorkspaceStore, name: Table, where: str | None = None, columns: Sequence[str] | None = None,
         limit: int | None = None) -> list[Row]:
    """Rows of table ``name`` matching the filter text ``where`` (unordered), at most ``limit``.

    Raises:
        StoreError: the workspace cannot be read.
    """
    return store._scan(table(store, name), where, columns, limit)


def count(store: WorkspaceStore, name: Table, where: str | None = None) -> int:
    """How many rows of table ``name`` match ``where`` (all with ``None``).

    Raises:
        StoreError: the workspace cannot be read.
    """
    return store._count(table(store, name), where)


def indexes(store: WorkspaceStore, name: Table) -> list[Any]:
    """The library's descriptions of the indexes of table ``name``.

    Raises:
        StoreError: the workspace cannot be read.
    """
    return store._indexes(table(store, name))
