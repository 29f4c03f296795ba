"""Engram's engine: stores, models, retrieval and tools. No Qt and no MCP in here.

The public surface is ``Engine`` (opened with ``Paths`` and ``Settings``), the settings helpers and
the ``EngramError`` tree.
"""

from .engine import Engine
from .errors import EngramError
from .paths import Paths
from .settings import Settings
from .tool_calls import ToolOutput

__all__ = ["Engine", "EngramError", "Paths", "Settings", "ToolOutput"]
