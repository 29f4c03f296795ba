"""The layer rule: app → mcp → core, app → core. core imports no Qt, no MCP SDK, nothing above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "core": ("PySide6", "qasync", "mcp", "engram.app", "engram.mcp"),
    "mcp": ("engram.app",),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, relative imports resolved against its package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = "engram." + ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
    return found


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
