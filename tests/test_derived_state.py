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


def test_no_module_of_core_mcp_or_app_keeps_a_module_level_cache_of_stores() -> None:
    found = []
    for path in sorted(p for part in ("core", "mcp", "app") for p in (ROOT / part).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else [])
            if "weakref" in names or (isinstance(node, ast.ImportFrom) and node.module == "weakref"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
