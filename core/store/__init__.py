"""Stores: one LanceDB database per workspace, written through one writer."""

from .workspace import WorkspaceStore
from .writer import Writer

__all__ = ["WorkspaceStore", "Writer"]
