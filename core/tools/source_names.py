"""How sources are named to callers: relative to the folder they were ingested from.

Stored sources are absolute paths; an answer shows ``docs/topics/security.txt`` instead of the full
path (the project stands beside it), which saves ~50 characters per block. Every tool that takes a
source accepts both forms: the absolute path, or a path relative to its ingest root (refused, with
the candidates listed, when it fits more than one source).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InvalidArgument, NotFound
from ..store import WorkspaceStore
from ..store.rows import Row


def _roots(store: WorkspaceStore) -> dict[str, str]:
    """source → the folder it was ingested from (kept in the store's derived state per sources-table version)."""
    return store.source_roots()


def display(store: WorkspaceStore, source: str) -> str:
    """The name callers see for ``source``: relative to its ingest root when it has one."""
    return namer(store)(source)


def namer(store: WorkspaceStore) -> Callable[[str], str]:
    """``display`` for many sources, reading the roots once."""
    roots = _roots(store)

    def name(source: str) -> str:
        root = roots.get(source, "").rstrip("/")
        if root and source.startswith(root + "/"):
            return source[len(root) + 1:]
        return source

    return name


def _relative(given: str) -> str:
    """``given`` without leading ``./`` steps (``.`` alone is the ingest folder itself); a dot that starts a
    name (``.github/``) stays."""
    while given.startswith("./"):
        given = given.removeprefix("./")
    return "" if given == "." else given


def resolve(store: WorkspaceStore, workspace: str, given: str) -> Row:
    """The source row ``given`` names: an exact stored source, or a unique root-relative path.

    Raises:
        NotFound: nothing of that name was ingested into this workspace.
        InvalidArgument: a relative path that fits several sources (they are listed).
    """
    row = store.source(given)
    if row is not None:
        return row
    rel = _relative(given)
    matches = [s for s, root in _roots(store).items() if root and s == root.rstrip("/") + "/" + rel]
    if len(matches) > 1:
        raise InvalidArgument(f"'{given}' fits {len(matches)} sources: {', '.join(sorted(matches)[:5])}. "
                              "Pass the full path.")
    if matches:
        found = store.source(matches[0])
        if found is not None:
            return found
    raise NotFound(f"'{given}' was never ingested into workspace '{workspace}'. list_sources shows what was; a "
                   "source is the path printed by search (relative to its ingest folder) or its full path.")


def expand_prefix(store: WorkspaceStore, prefix: str) -> list[str]:
    """Absolute prefixes a (possibly root-relative) source prefix stands for."""
    roots = sorted({r.rstrip("/") for r in _roots(store).values() if r})
    candidates = [prefix] + [f"{root}/{_relative(prefix)}" for root in roots if not prefix.startswith(root)]
    return list(dict.fromkeys(candidates))
