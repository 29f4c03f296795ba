"""How an ``EngramError`` crosses the CLI's endpoint: every class of the tree by its name, with title and message.

The service answers a refused or failed direct call with ``{"error": {"type", "title", "message", "refused"}}``;
the CLI raises the same class again, so that it reacts by type as it does in process (``BucketUnreachable`` stays
``BucketUnreachable``, a ``DiskFull`` stays a ``DiskFull``). The classes are found by walking the tree from
``EngramError`` once the modules that define them are imported (the list in ``core/errors.py``'s docstring);
``tests/test_error_tree.py`` sends every one across. No class of the tree carries more than its title and message.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from engram.core.errors import EngramError, InvalidArgument, SettingsError

#: The modules below ``app/`` that define classes of the tree (``app/`` errors never leave the process).
ERROR_MODULES = ("engram.core.errors", "engram.core.store.bucket_access", "engram.core.store.bucket_errors",
                 "engram.core.store.writer", "engram.core.models.backend", "engram.core.models.download",
                 "engram.core.models.generation",
                 "engram.mcp.errors", "engram.mcp.handshake", "engram.mcp.service", "engram.mcp.setup_clients")


def encode(exc: EngramError) -> dict[str, Any]:
    """The error document for ``exc`` (``refused``: bad input, which the CLI exits with status 2 for)."""
    return {"error": {"type": type(exc).__name__, "title": exc.title, "message": exc.message,
                      "refused": isinstance(exc, (InvalidArgument, SettingsError))}}


def decode(error: dict[str, Any]) -> EngramError:
    """The exception an error document describes: its own class when the tree has one of that name, else
    ``InvalidArgument`` for a refusal and ``EngramError`` for anything else."""
    cls = error_classes().get(str(error.get("type", "")))
    if cls is None:
        cls = InvalidArgument if error.get("refused") else EngramError
    return cls(str(error.get("message", "")), title=str(error.get("title") or cls.title))


@cache
def error_classes() -> dict[str, type[EngramError]]:
    """Every class of the ``EngramError`` tree in Engram's ``core/`` and ``mcp/``, by name (a subclass some
    other code defines is not one the service sends).

    Raises:
        RuntimeError: two classes of the tree share a name (one could not cross as itself).
    """
    for module in ERROR_MODULES:
        importlib.import_module(module)
    found: dict[str, type[EngramError]] = {}
    pending: list[type[EngramError]] = [EngramError]
    while pending:
        cls = pending.pop()
        if cls.__module__.startswith("engram.") and not cls.__module__.startswith("engram.app"):
            if found.setdefault(cls.__name__, cls) is not cls:
                raise RuntimeError(f"two error classes are called {cls.__name__}: {found[cls.__name__]} and {cls}")
        pending.extend(cls.__subclasses__())
    return found
