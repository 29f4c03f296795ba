"""The embedder seam: what the engine needs from an embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of ``dimensions`` floats.

    Implementations serialise their own inference (one worker per loaded model), so ``embed`` may
    be called from any thread.
    """

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dimensions)`` float32 array, one normalised row per text.

        Raises:
            ModelError: the model failed while embedding.
        """
        ...

    def close(self) -> None:
        """Free the model; later calls to ``embed`` raise ``ModelError``."""
        ...
