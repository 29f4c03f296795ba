"""Queries live in core/store: no module of core, mcp or app outside ``core/store`` writes filter text, reaches a
LanceDB table or the store's plain reads, or imports the filter builder or the raw inspection reads; it asks the
store's named reads (``core/store/queries.py``) instead. Checked on each module's syntax tree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "core" / "store"

#: Modules that may not be imported from outside core/store: the filter-text builder and the raw reads for tests.
PRIVATE_MODULES = ("engram.core.store.filters", "engram.core.store.inspection")
#: The store's LanceDB tables and its plain reads under them.
PRIVATE_ATTRIBUTES = {"_memories", "_sources", "_facts", "_edges", "_digests", "_scan", "_indexes", "_rows"}
#: What only a LanceDB table (or the library itself) answers.
LANCEDB_CALLS = {"open_table", "count_rows", "list_indices", "list_versions", "merge_insert", "to_arrow",
                 "create_scalar_index", "create_fts_index", "bypass_vector_index", "optimize"}
#: Filter text: comparisons against quoted literals, IN lists, NULL tests, LIKE, array and timestamp functions,
#: and an f-string part that ends in ``column =`` (the literal comes from a quoting call). A bare column name with
#: spaces around its operator: ``style='…'``, ``bytes=`` and ``model.gpu_device = '…'`` are not filters.
SQL_TEXT = re.compile(r"""(?<![.\w])[a-z_]+\s+(=|!=|<>|>=|<=)\s+'|\sIN\s*\(|\bIS\s+(NOT\s+)?NULL\b|\barray_has_any\b|\sLIKE\s"""
                      r"""|\bCAST\s*\(|\bESCAPE\s'""")
FSTRING_COMPARISON = re.compile(r"(?<![.\w])[a-z_]+\s+(=|!=|>=|<=)\s+$")
#: Modules with SQL of a database of their own, not the workspace store's: the run budget's SQLite ledger.
ALLOWED_SQL = {"core/budget/ledger.py"}


def _package(relative: Path) -> list[str]:
    return ["engram", *relative.with_suffix("").parts[:-1]]


def violations(relative: Path, source: str) -> list[str]:
    """What in ``source`` (the module at ``relative`` under the repository) crosses the store's seam."""
    tree = ast.parse(source, filename=str(relative))
    found: list[str] = []
    allowed_sql = relative.as_posix() in ALLOWED_SQL
    fstring_parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in PRIVATE_MODULES or alias.name == "lancedb" or alias.name.startswith("lancedb."):
                    found.append(f"{relative}:{node.lineno} imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(relative)
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for name in [module, *(f"{module}.{alias.name}" for alias in node.names)]:
                if name in PRIVATE_MODULES or name == "lancedb" or name.startswith("lancedb."):
                    found.append(f"{relative}:{node.lineno} imports {name}")
        elif isinstance(node, ast.Attribute):
            if node.attr in PRIVATE_ATTRIBUTES and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.append(f"{relative}:{node.lineno} uses the store's {node.attr}")
            elif node.attr in LANCEDB_CALLS:
                found.append(f"{relative}:{node.lineno} calls LanceDB's {node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and not allowed_sql:
            if SQL_TEXT.search(node.value) or (id(node) in fstring_parts and FSTRING_COMPARISON.search(node.value)):
                found.append(f"{relative}:{node.lineno} holds filter text {node.value[:40]!r}")
    return found


def _modules() -> list[Path]:
    return sorted(p for part in ("core", "mcp", "app") for p in (ROOT / part).rglob("*.py")
                  if STORE not in p.parents)


def test_no_module_outside_core_store_writes_filter_text_or_reaches_a_table() -> None:
    found = [v for path in _modules() for v in violations(path.relative_to(ROOT), path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_check_reads_every_package_of_the_engine() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"core/recall/digests.py", "core/retrieval/search.py", "core/tools/reads.py", "mcp/server.py",
            "app/cli.py"} <= names
    assert not any(n.startswith("core/store/") for n in names)


@pytest.mark.parametrize(("injected", "caught"), [
    ("from ..store import filters as sql\n", "imports engram.core.store.filters"),
    ("from engram.core.store.filters import quote\n", "imports engram.core.store.filters"),
    ("from ..store import inspection\n", "imports engram.core.store.inspection"),
    ("import lancedb\n", "imports lancedb"),
    ("rows = store.scan(store._memories, None)\n", "uses the store's _memories"),
    ("rows = store._scan(table, None)\n", "uses the store's _scan"),
    ("n = table.count_rows()\n", "calls LanceDB's count_rows"),
    ("where = \"kind = 'note'\"\n", "holds filter text"),
    ("where = \"relation IN ('mentions', 'part_of')\"\n", "holds filter text"),
    ("where = 'ended IS NULL'\n", "holds filter text"),
    ("where = 'array_has_any(tags, [t])'\n", "holds filter text"),
    ("where = f\"project = {quote(project)}\"\n", "holds filter text"),
    ("where = f\"end_line >= {int(line)}\"\n", "holds filter text"),
    ("where = f\"source LIKE {pattern}\"\n", "holds filter text"),
])
def test_the_check_catches_an_injected_violation(injected: str, caught: str) -> None:
    module = Path("core/tools/reads.py")
    clean = (ROOT / module).read_text(encoding="utf-8")
    assert violations(module, clean) == []
    found = violations(module, clean + "\n\ndef leak(store, table, quote, project, line, pattern, t):\n    "
                       + injected.replace("\n", "\n    ") + "return None\n")
    assert len(found) == 1 and caught in found[0], found


def test_plain_text_and_the_ledgers_own_sql_are_not_filter_text() -> None:
    text = ('message = f"{count} = {total}"\nnote = "a = b, read it as it is"\nsent = f"bytes={start}-"\n'
            'said = f"(model.gpu_device = \'{device}\')"\nhtml = "<span style=\'color: red\'>"\n')
    assert violations(Path("core/tools/reads.py"), text) == []
    ledger = Path("core/budget/ledger.py")
    assert violations(ledger, (ROOT / ledger).read_text(encoding="utf-8")) == []
