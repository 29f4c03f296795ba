"""Embedding models: the ``Embedder`` seam, the bundled MiniLM GGUF and its llama.cpp runtime."""

from .embedder import Embedder

__all__ = ["Embedder"]
