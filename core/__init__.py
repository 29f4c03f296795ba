"""Engram's engine: stores, models, retrieval and tools. No Qt and no MCP in here.

The public surface is ``Engine`` (opened with ``Paths`` and ``Settings``), the settings helpers and
the ``EngramError`` tree. The names are loaded when first used, so that a small module of the engine
(``engram.core.capture.inbox``, which an editor's hook runs) imports without the stores and models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import Engine
    from .errors import EngramError
    from .paths import Paths
    from .settings import Settings
    from .tool_calls import ToolOutput

__all__ = ["Engine", "EngramError", "Paths", "Settings", "ToolOutput"]
_HOMES = {"Engine": ".engine", "EngramError": ".errors", "Paths": ".paths", "Settings": ".settings",
          "ToolOutput": ".tool_calls"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
