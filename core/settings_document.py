"""Editing a settings file's TOML document in place: a key set or removed, every other line left as written.

The settings file (writing a value) and the settings migration (renaming old keys) both edit the user's file
through these two functions, so the user's comments, blank lines and order survive either way.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import AoT, InlineTable, Null, Table, Whitespace


def place_in_document(document: tomlkit.TOMLDocument, key: str, value: Any) -> None:
    """Set the dotted ``key`` in ``document``: in place when present (its line keeps its comment), else after
    the last key of its table, or in a new table at the end of the file (or of its parent group)."""
    *path, name = key.split(".")
    parent: MutableMapping[str, Any] = document
    node: MutableMapping[str, Any] = document
    for depth, part in enumerate(path):
        if part not in node:
            # A group's new table goes to the end of the file (or of its parent group); a parent that holds no
            # keys of its own gets no header of its own (``[helper.local]``, not ``[helper]`` then ``[helper.local]``).
            node[part] = tomlkit.inline_table() if isinstance(node, InlineTable) else tomlkit.table(
                is_super_table=depth < len(path) - 1)
        parent, node = node, node[part]
    if name in node:
        node[name] = value
        return
    table = _table_with_keys(parent, path[-1])
    if table is not None:
        body = table.value.body
        last = max(i for i, (k, item) in enumerate(body) if k is not None and not isinstance(item, (Table, AoT)))
        # After the table's last key: what trails it (blank lines, a comment) introduces the next table,
        # and tomlkit's ``add`` would append after that, so insert after the last key instead. (tomlkit has no
        # public insert; ``_insert_at`` is the one private call, present from 0.12 to 0.15.3 at least, and
        # ``_insert_after`` went away in 0.15.3.)
        if last + 1 < len(body):
            table.value._insert_at(last + 1, name, value)
        else:
            table.append(name, value)
        return
    node[name] = value


def remove_from_document(document: tomlkit.TOMLDocument, key: str) -> None:
    """Remove the dotted ``key`` from ``document`` (nothing when absent), and each of its tables left with no
    key and no comment."""
    *path, name = key.split(".")
    nodes: list[Any] = [document]
    for part in path:
        if part not in nodes[-1] or not isinstance(nodes[-1][part], MutableMapping):
            return
        nodes.append(nodes[-1][part])
    if name in nodes[-1]:
        del nodes[-1][name]
    for parent, part, child in reversed(list(zip(nodes, path, nodes[1:]))):
        if _is_bare(child):
            del parent[part]


def _table_with_keys(parent: MutableMapping[str, Any], name: str) -> Table | None:
    """The ``[name]`` table under ``parent`` that has a header and keys (the first, when the file splits it)."""
    body = parent.body if isinstance(parent, Container) else parent.value.body if isinstance(parent, Table) else []
    for key, item in body:
        if (key is not None and key.key == name and isinstance(item, Table) and not item.is_super_table()
                and any(k is not None and not isinstance(v, (Table, AoT)) for k, v in item.value.body)):
            return item
    return None


def _is_bare(table: Any) -> bool:
    """A table with nothing of the user's left in it: no key, no comment, no comment on its header."""
    if not isinstance(table, Table):
        return not table
    return not table.trivia.comment and all(isinstance(item, (Null, Whitespace))
                                            for _, item in table.value.body)
