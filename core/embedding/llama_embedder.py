"""An ``Embedder`` running a GGUF embedding model on llama.cpp, in its own single worker."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from ..models.placement import ON_CPU, Offload

logger = logging.getLogger(__name__)


class LlamaEmbedder:
    """Embeds texts with llama-cpp-python; one worker thread owns the ``Llama`` (the inference lock).

    The context is ``max_tokens`` long with ``n_batch = n_ubatch = max_tokens``: llama-cpp-python's
    ``embed(truncate=True)`` cuts at ``n_batch`` and a larger batch would drop the final ``[SEP]``
    of long texts further from where sentence-transformers truncates. Texts go one per call, which
    is faster on CPU than large lists. A model that cannot be loaded onto the GPU it was given is loaded
    on the CPU, and ``note`` says why.
    """

    def __init__(self, model_path: Path, *, model_id: str, dimensions: int, max_tokens: int = 256,
                 threads: int = 0, offload: Offload = ON_CPU, llama: Callable[..., Any] | None = None) -> None:
        """Load ``model_path`` in the worker thread, on the GPU ``offload`` names (the CPU by default).
        ``llama`` replaces llama.cpp's ``Llama`` constructor (the seam tests use).

        Raises:
            ModelError: llama.cpp cannot load the file (on the CPU either).
        """
        self.model_id = model_id
        self.dimensions = dimensions
        self.note = ""  # e.g. why it runs on the CPU
        self._path = model_path
        self._max_tokens = max_tokens
        self._threads = threads or os.cpu_count() or 1
        self._offload = offload
        self._new_llama = llama
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"embed-{model_id}")
        self._llama: Any = None
        self._closed = False
        self._executor.submit(self._load).result()

    def _load(self) -> None:
        try:
            self._llama = self._open(self._offload)
            return
        except (ValueError, RuntimeError, OSError) as exc:
            if not self._offload.on_gpu:
                raise self._load_error(exc) from exc
            self.note = f"the GPU could not load the embedding model ({exc}); it runs on the CPU"
        print(f"engram: note: {self.note}", file=sys.stderr)
        logger.warning(self.note)
        try:
            self._llama = self._open(ON_CPU)
        except (ValueError, RuntimeError, OSError) as exc:
            raise self._load_error(exc) from exc

    def _open(self, offload: Offload) -> Any:
        if self._new_llama is None:
            from ..models.backend import llama_library

            self._new_llama = llama_library().Llama
        return self._new_llama(model_path=str(self._path), embedding=True, n_ctx=self._max_tokens,
                               n_batch=self._max_tokens, n_ubatch=self._max_tokens, n_threads=self._threads,
                               n_threads_batch=self._threads, **offload.llama_params(), flash_attn=True,
                               verbose=False)

    def _load_error(self, exc: Exception) -> ModelError:
        return ModelError(f"llama.cpp could not load {self._path}: {exc}. Delete the file to rebuild it.")

    def _embed_all(self, texts: Sequence[str]) -> np.ndarray:
        if self._llama is None:
            raise ModelError("The embedding model is closed.")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            try:
                out[i] = self._llama.embed(text if text.strip() else " ", truncate=True)
            except (ValueError, RuntimeError) as exc:
                raise ModelError(f"The embedding model failed on a text of {len(text)} characters: {exc}.") from exc
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised vectors for ``texts``, computed in the model's worker.

        Raises:
            ModelError: the model is closed or failed.
        """
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        if self._closed:
            raise ModelError("The embedding model is closed.")
        return self._executor.submit(self._embed_all, list(texts)).result()

    @property
    def max_tokens(self) -> int:
        """The most tokens of one text the model reads (longer texts are cut)."""
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` becomes for this model (with its special tokens)."""
        return self._executor.submit(lambda: len(self._llama.tokenize(text.encode("utf-8")))).result()

    def close(self) -> None:
        """Free the model; idempotent."""
        if self._closed:
            return
        self._closed = True

        def _free() -> None:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

        self._executor.submit(_free).result()
        self._executor.shutdown(wait=True)
