"""What a store derives from its tables is kept in one place, its ``derived`` state: values are kept per table
version, the maintenance bookkeeping beside them, and no module keeps a cache of its own."""

from __future__ import annotations

import ast
from pathlib import Path

from engram.core.store.derived import Derived
from engram.core.store.maintenance_state import MaintenanceState

ROOT = Path(__file__).resolve().parents[1]


def test_a_value_is_derived_once_per_version_and_again_when_the_version_moves_on() -> None:
    derived = Derived()
    calls: list[int] = []

    def derive(n: int) -> int:
        calls.append(n)
        return n * 10

    assert derived.cached("roots", 3, lambda: derive(1)) == 10
    assert derived.cached("roots", 3, lambda: derive(2)) == 10
    assert derived.cached("roots", 4, lambda: derive(3)) == 30
    assert derived.cached("degrees", 4, lambda: derive(4)) == 40
    assert calls == [1, 3, 4]


def test_stamps_and_exchanges_are_kept_per_name_and_project() -> None:
    derived = Derived()
    assert derived.stamp("digests") is None
    derived.set_stamp("digests", (1, 2, 3))
    assert derived.stamp("digests") == (1, 2, 3)
    derived.remember_exchange("p", "read back", if_unknown=True)
    derived.remember_exchange("p", "older, read later", if_unknown=True)
    assert derived.last_exchange("p") == "read back"
    derived.remember_exchange("p", "just stored")
    assert derived.last_exchange("p") == "just stored" and derived.last_exchange("q") is None


def test_commits_are_counted_from_what_earlier_processes_left_and_reported_to_the_schedule() -> None:
    state = MaintenanceState()
    heard: list[int | None] = []
    state.committed(lambda: 5)
    state.on_commit = lambda: heard.append(state.pending_commits)
    state.committed(lambda: 99)  # counted once only: the first commit
    assert state.pending_commits == 7 and heard == [7]


_EMPTY_CONTAINERS = ("dict", "set", "list", "defaultdict", "OrderedDict", "WeakKeyDictionary", "WeakValueDictionary")


def module_caches(root: Path) -> list[str]:
    """``path:line what`` for each way a module could keep state across calls outside ``Store.derived``: weakref, an
    empty container bound at module level (filled later: a cache), or a ``cache``/``lru_cache`` on a function that
    takes a store or a scope."""
    found = []
    for path in sorted(p for part in ("core", "mcp", "app") for p in (root / part).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(root)
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else [])
            if "weakref" in names or (isinstance(node, ast.ImportFrom) and node.module == "weakref"):
                found.append(f"{where}:{node.lineno} weakref")
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                cached = any(ast.unparse(d).split("(")[0].rsplit(".", 1)[-1] in ("cache", "lru_cache")
                             for d in node.decorator_list)
                takes = [a.annotation for a in node.args.args if a.annotation is not None]
                if cached and any(w in ast.unparse(t) for t in takes for w in ("Store", "Scope")):
                    found.append(f"{where}:{node.lineno} cache of {node.name}")
        for stmt in tree.body:  # module level only
            value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
            empty = (isinstance(value, ast.Dict | ast.Set | ast.List) and not getattr(value, "keys", None)
                     and not getattr(value, "elts", None)) or (
                isinstance(value, ast.Call) and not value.args and not value.keywords
                and ast.unparse(value.func).rsplit(".", 1)[-1] in _EMPTY_CONTAINERS)
            if empty:
                found.append(f"{where}:{stmt.lineno} empty container")
    return found


def test_no_module_of_core_mcp_or_app_keeps_a_module_level_cache_of_stores() -> None:
    assert module_caches(ROOT) == []


def test_the_cache_check_catches_a_dict_a_weakref_and_a_cached_store_function(tmp_path: Path) -> None:
    for part in ("core", "mcp", "app"):
        (tmp_path / part).mkdir()
    (tmp_path / "core" / "digests.py").write_text(
        "import functools\nfrom weakref import WeakKeyDictionary\n_SEEN: dict[str, int] = {}\n"
        "_BY = WeakKeyDictionary()\nNAMES = {'a': 1}\n\n@functools.lru_cache\ndef names(store: WorkspaceStore) -> int:\n"
        "    return 1\n")
    assert module_caches(tmp_path) == ["core/digests.py:2 weakref", "core/digests.py:8 cache of names",
                                       "core/digests.py:3 empty container", "core/digests.py:4 empty container"]
