"""The layer rule: app → mcp → core, app → core. core imports no Qt, no MCP SDK, nothing above it; app
reaches the store and the models only through the engine (no LanceDB, no llama.cpp); and core's packages
import each other without a cycle (the tool catalog is the one module that joins tools and recall); and no module
of core, mcp or app imports itself through others (a circle of modules), TYPE_CHECKING imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "core": ("PySide6", "qasync", "mcp", "engram.app", "engram.mcp"),
    "mcp": ("engram.app",),
    "app": ("lancedb", "llama_cpp"),
}


def import_statements(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in a file: ``import a.b`` gives ``a.b`` and no names, ``from x import
    y, z`` gives ``x`` (a relative one resolved against the file's package) and ``[y, z]``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = "engram." + ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module, [alias.name for alias in node.names]))
    return found


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, relative imports resolved against its package."""
    return [(line, module) for line, module, _ in import_statements(path)]


def violations(layer: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, module in imported_modules(path):
            for banned in FORBIDDEN[layer]:
                if module == banned or module.startswith(banned + "."):
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer: str) -> None:
    assert violations(layer) == []


def core_unit(module: str) -> str | None:
    """The package (or top-level module) of core that ``module`` belongs to: ``engram.core.tools.reads`` → ``tools``."""
    parts = module.split(".")
    if parts[:2] != ["engram", "core"] or len(parts) < 3:
        return None
    return parts[2]


def core_graph() -> dict[str, set[str]]:
    """Which of core's packages (and top-level modules) import which others, TYPE_CHECKING imports included."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / "core").rglob("*.py")):
        rel = path.relative_to(ROOT / "core").with_suffix("").parts
        if rel == ("__init__",):
            continue  # the package's front door re-exports; it is not a unit
        unit = rel[0]
        graph.setdefault(unit, set())
        for _, module in imported_modules(path):
            # ``from .. import errors`` imports the module engram.core.errors
            names = [module] if module != "engram.core" else [f"engram.core.{n}" for n in _names_from(path, module)]
            for name in names:
                other = core_unit(name)
                if other is not None and other != unit and other != "__init__":
                    graph[unit].add(other)
    return graph


def _names_from(path: Path, package: str) -> list[str]:
    """The names imported by ``from <package> import a, b`` statements of a file (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = "engram." + ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.module:
            base = own.split(".")
            if ".".join(base[: len(base) - (node.level - 1)]) == package:
                found += [alias.name for alias in node.names]
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one unit (Tarjan), each sorted; empty when acyclic."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_core_packages_import_each_other_without_a_cycle() -> None:
    assert cycles(core_graph()) == []


def test_the_cycle_check_catches_an_injected_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for package, imports in {"tools": "from ..recall import run\n", "recall": "from ..tools import reads\n",
                             "store": "from .. import errors\n"}.items():
        (tmp_path / "core" / package).mkdir(parents=True)
        (tmp_path / "core" / package / "mod.py").write_text(imports)
    (tmp_path / "core" / "errors.py").write_text("")
    (tmp_path / "core" / "engine.py").write_text("from .tools import mod\nfrom typing import TYPE_CHECKING\n"
                                                 "if TYPE_CHECKING:\n    from .engine import x\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert cycles(core_graph()) == [["recall", "tools"]]
    # An import only for type checking is an import too: engine → tools → engine.
    (tmp_path / "core" / "tools" / "late.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                          "    from ..engine import Engine\n")
    (tmp_path / "core" / "errors.py").write_text("from .store import mod\n")
    assert cycles(core_graph()) == [["engine", "recall", "tools"], ["errors", "store"]]


def test_the_check_catches_lancedb_or_llama_cpp_in_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "window.py").write_text("import lancedb\n\ndef f():\n    from llama_cpp import Llama\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert violations("app") == ["app/window.py:1 imports lancedb", "app/window.py:4 imports llama_cpp"]


def test_the_check_catches_a_forbidden_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_root = tmp_path
    (fake_root / "core").mkdir()
    (fake_root / "core" / "bad.py").write_text("from PySide6 import QtCore\nimport mcp.server\n")
    (fake_root / "core" / "sub").mkdir()
    (fake_root / "core" / "sub" / "worse.py").write_text("from ...app import cli\n")
    monkeypatch.setitem(globals(), "ROOT", fake_root)
    assert violations("core") == [
        "core/bad.py:1 imports PySide6",
        "core/bad.py:2 imports mcp.server",
        "core/sub/worse.py:1 imports engram.app",
    ]


def module_name(root: Path, path: Path) -> str:
    """``core/store/workspace.py`` → ``engram.core.store.workspace``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return "engram." + ".".join(parts)


def module_graph() -> dict[str, set[str]]:
    """Which modules of core, mcp and app import which others: ``from .x import y`` names the module ``x``, or the
    module ``x.y`` when ``y`` is one; imports under TYPE_CHECKING and inside functions count too."""
    paths = {module_name(ROOT, p): p for layer in ("core", "mcp", "app") for p in sorted((ROOT / layer).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        found: set[str] = set()
        for _, module, names in import_statements(path):
            if not names:
                found |= {module} & paths.keys()
            for imported in names:
                if f"{module}.{imported}" in paths:
                    found.add(f"{module}.{imported}")
                elif module in paths:
                    found.add(module)
        found.discard(name)
        graph[name] = found
    return graph


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(module_graph()) == []


def test_the_module_check_catches_a_circle_through_a_type_checking_import(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "app" / "desktop").mkdir(parents=True)
    (tmp_path / "app" / "desktop" / "__init__.py").write_text("from .desktop import Desktop\n")
    (tmp_path / "app" / "desktop" / "desktop.py").write_text("from .window import MainWindow\n")
    (tmp_path / "app" / "desktop" / "window.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import desktop\n")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "a.py").write_text("def f():\n    from engram.core import b\n")
    (tmp_path / "core" / "b.py").write_text("from .a import f\n")
    (tmp_path / "mcp").mkdir()
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert cycles(module_graph()) == [["engram.app.desktop.desktop", "engram.app.desktop.window"],
                                      ["engram.core.a", "engram.core.b"]]


#: HTTP clients other than the one Engram uses (httpx2, the MCP SDK's own): none of them may come back.
OTHER_HTTP_CLIENTS = ("httpx", "requests", "urllib.request", "http.client", "aiohttp", "urllib3")


def other_http_clients() -> list[str]:
    """``path:line imports module`` for each import of another HTTP library in core, mcp or app."""
    return [f"{path.relative_to(ROOT)}:{line} imports {module}"
            for layer in ("core", "mcp", "app") for path in sorted((ROOT / layer).rglob("*.py"))
            for line, module in imported_modules(path)
            if any(module == other or module.startswith(other + ".") for other in OTHER_HTTP_CLIENTS)]


def test_one_http_library() -> None:
    assert other_http_clients() == []


def test_the_http_check_catches_a_second_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for layer in ("core", "mcp", "app"):
        (tmp_path / layer).mkdir()
    (tmp_path / "core" / "fetch.py").write_text("import httpx2\nimport httpx\n")
    (tmp_path / "app" / "get.py").write_text("from urllib.request import urlopen\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert other_http_clients() == ["core/fetch.py:2 imports httpx", "app/get.py:1 imports urllib.request"]


def engine_internals_used() -> list[str]:
    """``path:line`` of each use of ``Engine.internals`` (or of the engine's private parts) in mcp or app."""
    import ast

    out = []
    for layer in ("mcp", "app"):
        for path in sorted((ROOT / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr in ("internals", "_writer", "_maintenance", "_scope"):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {node.attr}")
    return out


def test_the_app_and_the_server_use_only_the_engines_public_surface() -> None:
    """The writer, the maintenance schedule and a workspace's scope are the engine's own; only benchmarks and tests
    reach them, through ``Engine.internals``."""
    assert engine_internals_used() == []


def test_the_internals_check_catches_a_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for layer in ("mcp", "app"):
        (tmp_path / layer).mkdir()
    (tmp_path / "app" / "page.py").write_text("def f(engine):\n    return engine.internals().writer\n")
    (tmp_path / "mcp" / "tool.py").write_text("def g(engine):\n    engine._scope('')\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert engine_internals_used() == ["mcp/tool.py:2 uses _scope", "app/page.py:2 uses internals"]
