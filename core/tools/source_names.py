"""How sources are named to callers: relative to the folder they were ingested from.

Stored sources are absolute paths; an answer shows ``docs/topics/security.txt`` instead of the full
path (the project stands beside it), which saves ~50 characters per block. Every tool that takes a
source accepts both forms: the absolute path, or a path relative to its ingest root (refused, with
the candidates listed, when it fits more than one source).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import InvalidArgument, NotFound
from ..store import WorkspaceStore
from ..store import filters as sql

# Keyed by the store itself, weakly: an entry goes when its store does, so a new store (even one at a dropped
# store's address) never sees another workspace's roots, and the cache holds at most one entry per live store.
_cache: weakref.WeakKeyDictionary[WorkspaceStore, tuple[int, dict[str, str]]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _roots(store: WorkspaceStore) -> dict[str, str]:
    """source → the folder it was ingested from (cached per version of the sources table)."""
    version = store.version(store.sources)
    with _lock:
        hit = _cache.get(store)
        if hit is not None and hit[0] == version:
            return hit[1]
    roots = {r["source"]: r["root"] for r in store.scan(store.sources, None, ["source", "root"])}
    with _lock:
        _cache[store] = (version, roots)
    return roots


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


def resolve(store: WorkspaceStore, workspace: str, given: str) -> dict[str, Any]:
    """The source row ``given`` names: an exact stored source, or a unique root-relative path.

    Raises:
        NotFound: nothing of that name was ingested into this workspace.
        InvalidArgument: a relative path that fits several sources (they are listed).
    """
    rows = store.scan(store.sources, f"source = {sql.quote(given)}", limit=1)
    if rows:
        return rows[0]
    rel = _relative(given)
    matches = [s for s, root in _roots(store).items() if root and s == root.rstrip("/") + "/" + rel]
    if len(matches) > 1:
        raise InvalidArgument(f"'{given}' fits {len(matches)} sources: {', '.join(sorted(matches)[:5])}. "
                              "Pass the full path.")
    if matches:
        return store.scan(store.sources, f"source = {sql.quote(matches[0])}", limit=1)[0]
    raise NotFound(f"'{given}' was never ingested into workspace '{workspace}'. list_sources shows what was; a "
                   "source is the path printed by search (relative to its ingest folder) or its full path.")


def expand_prefix(store: WorkspaceStore, prefix: str) -> list[str]:
    """Absolute prefixes a (possibly root-relative) source prefix stands for."""
    roots = sorted({r.rstrip("/") for r in _roots(store).values() if r})
    candidates = [prefix] + [f"{root}/{_relative(prefix)}" for root in roots if not prefix.startswith(root)]
    return list(dict.fromkeys(candidates))
