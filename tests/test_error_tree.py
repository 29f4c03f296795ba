"""One error tree: every exception class of core, mcp and app derives from ``EngramError`` and is drawn,
under its base and with its module, in ``core/errors.py``'s docstring."""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from engram.core import errors
from engram.core.errors import EngramError

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "mcp", "app")

#: Exception classes that are not errors a user meets, by module and name, with the reason.
EXEMPT = {
    "engram.core.store.writer.NotOnWriter": "an AssertionError: only a programming error (a store write off the "
                                               "writer thread) raises it",
}

_NODE = re.compile(r"^ {4}(?P<stem>[│ ]*)[├└]── (?P<name>\w+)(?P<rest>.*)$")
_MODULE = re.compile(r"\((?P<path>[\w/]+\.py)\)$")


@dataclass(frozen=True)
class Drawn:
    """A class as the docstring draws it: its base and the file it is defined in."""

    base: str
    path: str


def drawn_tree(doc: str) -> dict[str, Drawn]:
    """The classes of the docstring's tree, by name. A class without ``(path.py)`` is in core/errors.py."""
    tree = {"EngramError": Drawn("Exception", "core/errors.py")}
    ancestors = ["EngramError"]
    for line in doc.splitlines():
        if (node := _NODE.match(line)) is None:
            continue
        depth = len(node["stem"]) // 4
        del ancestors[depth + 1:]
        module = _MODULE.search(node["rest"].rstrip())
        tree[node["name"]] = Drawn(ancestors[depth], module["path"] if module else "core/errors.py")
        ancestors.append(node["name"])
    return tree


def engram_modules() -> list[ModuleType]:
    """Every module of core, mcp and app, imported."""
    names = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":  # importing it runs the command line; it defines no class
                continue
            names.append(".".join(("engram", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return [importlib.import_module(name) for name in names]


def defined_errors(modules: Iterable[ModuleType]) -> list[tuple[ModuleType, type[BaseException]]]:
    """The exception classes each module defines (not those it imports)."""
    return [(module, value) for module in modules for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__]


def violations(modules: Iterable[ModuleType], doc: str, root: Path) -> list[str]:
    """What is wrong with the exception classes of ``modules`` against the tree in ``doc`` (files under ``root``)."""
    tree = drawn_tree(doc)
    bad = []
    seen: dict[str, str] = {}
    for module, cls in defined_errors(modules):
        if f"{cls.__module__}.{cls.__qualname__}" in EXEMPT:
            continue
        path = Path(module.__file__ or "").resolve().relative_to(root).as_posix()
        where = f"{path}: {cls.__name__}"
        if cls.__name__ in seen:
            bad.append(f"{where} has the name of a class in {seen[cls.__name__]}")
        seen[cls.__name__] = path
        if not issubclass(cls, EngramError):
            bad.append(f"{where} does not derive from EngramError")
        drawn = tree.get(cls.__name__)
        if drawn is None:
            bad.append(f"{where} is not in core/errors.py's tree")
            continue
        if drawn.path != path:
            bad.append(f"{where} is drawn as defined in {drawn.path}")
        if drawn.base != cls.__bases__[0].__name__:
            bad.append(f"{where} derives from {cls.__bases__[0].__name__} but is drawn under {drawn.base}")
    return bad


def test_every_error_class_derives_from_engram_error_and_is_drawn_in_the_tree() -> None:
    assert violations(engram_modules(), errors.__doc__ or "", ROOT) == []


def test_the_tree_draws_only_classes_that_exist() -> None:
    defined = {cls.__name__ for _, cls in defined_errors(engram_modules())}
    assert sorted(set(drawn_tree(errors.__doc__ or "")) - defined) == []


def test_the_check_catches_a_stray_an_undrawn_and_a_misdrawn_class(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    path = tmp_path / "core" / "injected.py"
    path.write_text("from engram.core.errors import EngramError\n\n\n"
                    "class Stray(ValueError):\n    pass\n\n\n"
                    "class Undrawn(EngramError):\n    pass\n\n\n"
                    "class DeadlineExceeded(EngramError):\n    pass\n\n\n"
                    "class NotOnWriter(AssertionError):\n    pass\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("engram_injected", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert violations([module], errors.__doc__ or "", tmp_path) == [
        "core/injected.py: Stray does not derive from EngramError",
        "core/injected.py: Stray is not in core/errors.py's tree",
        "core/injected.py: Undrawn is not in core/errors.py's tree",
        "core/injected.py: DeadlineExceeded is drawn as defined in core/models/generation.py",
        "core/injected.py: DeadlineExceeded derives from EngramError but is drawn under ModelError",
        "core/injected.py: NotOnWriter does not derive from EngramError",
        "core/injected.py: NotOnWriter is not in core/errors.py's tree",
    ]


def test_the_check_catches_two_classes_of_one_name(tmp_path: Path) -> None:
    modules = []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.py"
        path.write_text("from engram.core.errors import EngramError\n\n\n"
                        "class ServiceUnavailable(EngramError):\n    pass\n", encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"engram_{name}", path)
        assert spec is not None and spec.loader is not None
        modules.append(importlib.util.module_from_spec(spec))
        spec.loader.exec_module(modules[-1])
    assert "second.py: ServiceUnavailable has the name of a class in first.py" in violations(
        modules, errors.__doc__ or "", tmp_path)


def test_every_error_below_the_app_crosses_the_service_as_its_own_class() -> None:
    """What the CLI's endpoint sends for each class is decoded back to that class, title and message (before, only
    the classes of core/errors.py crossed: ``BucketUnreachable`` or ``DiskFull`` arrived as a plain EngramError)."""
    from engram.mcp.error_codec import decode, encode, error_classes

    defined = {cls for module, cls in defined_errors(engram_modules())
               if issubclass(cls, EngramError) and not module.__name__.startswith("engram.app")}
    assert set(error_classes().values()) == defined | {EngramError}, "the codec knows every class of the tree"
    for cls in sorted(defined | {EngramError}, key=lambda c: c.__name__):
        back = decode(encode(cls("What went wrong, and what to do.", title="A title"))["error"])
        assert type(back) is cls and back.message == "What went wrong, and what to do." and back.title == "A title"
    assert type(decode({"type": "NoSuchError", "message": "m", "refused": True})).__name__ == "InvalidArgument"
    assert type(decode({"type": "ValueError", "message": "m"})) is EngramError, "only the tree's classes are made"
