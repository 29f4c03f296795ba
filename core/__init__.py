"""Engram's engine: stores, models, retrieval and tools. No Qt and no MCP in here.

The public surface is ``Engine`` (opened with ``Paths`` and ``Settings``), the settings helpers and
the ``EngramError`` tree.
"""

from .engine import Engine, ToolOutput
from .errors import EngramError
from .paths import Paths
from .settings import Settings

__all__ = ["Engine", "EngramError", "Paths", "Settings", "ToolOutput"]
