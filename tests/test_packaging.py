"""The distribution ships exactly the packages the tree holds, under the engram.* names."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_code_folder_is_listed_as_a_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = config["package-dir"]
    listed = set(config["packages"])
    on_disk = set()
    for package, folder in mapping.items():
        base = ROOT / folder
        on_disk.add(package)
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            if rel.parts:
                on_disk.add(package + "." + ".".join(rel.parts))
        # A folder of modules without __init__.py imports in a development install (a namespace package) and is
        # missing from the wheel and the bundle: core/capture once was.
        loose = sorted(str(f.relative_to(ROOT)) for f in base.rglob("*") if f.is_dir() and "__pycache__" not in f.parts
                       and f != base and any(f.glob("*.py")) and not (f / "__init__.py").exists())
        assert loose == [], f"code folders without __init__.py: {loose}"
    assert listed == on_disk


def test_mcp_folder_has_no_top_level_init_so_import_mcp_means_the_sdk() -> None:
    assert not (ROOT / "mcp" / "__init__.py").exists()
