"""Every third-party distribution the shipped code imports is declared in pyproject's dependencies.

A package that arrives only as another's dependency (``anyio`` through the MCP SDK, ``jinja2`` through
llama-cpp-python) can disappear from a fresh install when that package changes its own requirements.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("core", "mcp", "app")
OWN_PACKAGE = "engram"


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares it: ``PySide6_Essentials`` == ``pyside6-essentials``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_distributions(pyproject: Path) -> set[str]:
    """The normalised names in ``[project] dependencies`` (extras and optional dependencies left out)."""
    requirements = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    found = set()
    for requirement in requirements:
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        assert name, f"cannot read the name of the requirement {requirement!r}"
        found.add(normalise(name.group(1)))
    return found


def third_party_imports(folders: Iterable[Path]) -> dict[str, set[str]]:
    """Top-level module → the files importing it, for every absolute import that is neither the standard
    library nor Engram itself (imports under ``TYPE_CHECKING`` count: the type checker needs them)."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for file in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_bytes(), filename=str(file))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top != OWN_PACKAGE:
                        found.setdefault(top, set()).add(file.relative_to(folder.parent).as_posix())
    return found


def undeclared(imports: Mapping[str, set[str]], declared: set[str],
               providers: Mapping[str, list[str]]) -> list[str]:
    """One line per imported module that no declared distribution provides (or that nothing installed does)."""
    problems = []
    for module, files in sorted(imports.items()):
        where = ", ".join(sorted(files))
        dists = providers.get(module)
        if not dists:
            problems.append(f"{module} (imported by {where}) comes from no installed distribution")
        elif not declared & {normalise(d) for d in dists}:
            problems.append(f"{module} (imported by {where}) comes from {' or '.join(sorted(set(dists)))}, "
                            "which pyproject's [project] dependencies do not declare")
    return problems


def test_every_third_party_import_is_a_declared_dependency() -> None:
    imports = third_party_imports(ROOT / folder for folder in SHIPPED)
    declared = declared_distributions(ROOT / "pyproject.toml")
    assert undeclared(imports, declared, importlib.metadata.packages_distributions()) == []


def test_the_check_finds_an_import_of_an_undeclared_distribution(tmp_path: Path) -> None:
    package = tmp_path / "core"
    (package / "sub").mkdir(parents=True)
    (package / "fine.py").write_text("import json\nimport numpy as np\nfrom engram.core import Engine\n"
                                     "from . import sibling\nfrom .sub import thing\n")
    (package / "sub" / "late.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                             "    from _pytest.fixtures import FixtureRequest\n"
                                             "def f():\n    import pytest.mark\n")
    providers = importlib.metadata.packages_distributions()
    problems = undeclared(third_party_imports([package]), declared_distributions(ROOT / "pyproject.toml"), providers)
    assert problems == [
        "_pytest (imported by core/sub/late.py) comes from pytest, which pyproject's [project] dependencies do not "
        "declare",
        "pytest (imported by core/sub/late.py) comes from pytest, which pyproject's [project] dependencies do not "
        "declare",
    ]
    (package / "fine.py").write_text("import no_such_module_anywhere\n")
    assert undeclared(third_party_imports([package]), {"numpy", "pytest"}, providers) == [
        "no_such_module_anywhere (imported by core/fine.py) comes from no installed distribution"]


def test_names_are_compared_as_pep_503_normalises_them(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["PySide6-Essentials>=6.8,<7", "Jinja2 >= 3.1", '
                         '"llama_cpp.python==0.3.36 ; python_version >= \'3.11\'"]\n')
    assert declared_distributions(pyproject) == {"pyside6-essentials", "jinja2", "llama-cpp-python"}
    assert undeclared({"PySide6": {"app/x.py"}}, declared_distributions(pyproject),
                      {"PySide6": ["PySide6_Essentials"]}) == []
