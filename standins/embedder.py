"""A deterministic stand-in for the embedding model, for runs where the model itself is not what is measured."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence

import numpy as np


class HashingEmbedder:
    """A deterministic stand-in for the embedding model: hashed bag of words, L2-normalised.

    Texts sharing words get similar vectors, which is all the retrieval tests need when the model
    itself is not what is being tested. Counts the texts it embeds.
    """

    model_id = "all-minilm-l6-v2"
    dimensions = 384

    def __init__(self) -> None:
        self.calls: list[int] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dimensions] += 1.0
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
            if not norm:
                out[i, 0] = 1.0
        with self._lock:
            self.calls.append(len(texts))
        return out

    @property
    def texts_embedded(self) -> int:
        return sum(self.calls)

    def close(self) -> None:
        pass
