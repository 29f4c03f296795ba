"""The model pool: one loaded model per (file, context size, GPU layers), shared by every role.

Roles (tagger, summarizer, recall planner and answerer, chat) ask the pool for a model; the same
configuration gives them the same ``LoadedModel`` (one copy in memory, one worker). When a role
moves to another configuration, the old model is released unless another role still uses it. A
model that cannot be loaded onto the GPU (e.g. out of memory) is loaded on the CPU with a note.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import ModelError
from .generation import LoadedModel

logger = logging.getLogger(__name__)

Key = tuple[str, int, int]


class ModelPool:
    """Loaded generation models of this process. Thread-safe; ``close`` frees them all."""

    def __init__(self, *, threads: int = 0) -> None:
        self.threads = threads or os.cpu_count() or 1
        self._models: dict[Key, LoadedModel] = {}
        self._roles: dict[str, Key] = {}
        self._lock = threading.Lock()

    def get(self, role: str, path: Path, *, n_ctx: int = 4096, gpu_layers: int = 0) -> LoadedModel:
        """The model for ``role``: loaded once per configuration, shared with other roles.

        Raises:
            ModelError: llama.cpp cannot load the file, or it has no usable chat template.
        """
        key: Key = (str(path), n_ctx, gpu_layers)
        with self._lock:
            previous = self._roles.get(role)
            model = self._models.get(key)
            if model is None:
                model = self._load(key)
                self._models[key] = model
            self._roles[role] = key
            if previous is not None and previous != key and previous not in self._roles.values():
                self._release(previous)
            return model

    def loaded(self) -> dict[Key, list[str]]:
        """Each loaded configuration and the roles using it."""
        with self._lock:
            return {k: sorted(r for r, rk in self._roles.items() if rk == k) for k in self._models}

    def release(self, role: str) -> None:
        """``role`` no longer needs its model; free it when no other role uses it."""
        with self._lock:
            key = self._roles.pop(role, None)
            if key is not None and key not in self._roles.values():
                self._release(key)

    def _release(self, key: Key) -> None:
        model = self._models.pop(key, None)
        if model is not None:
            model._executor.submit(model.llama.close).result()
            model._executor.shutdown(wait=True)
            logger.info("released model %s", key[0])

    def _load(self, key: Key) -> LoadedModel:
        path, n_ctx, gpu_layers = key
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"model-{Path(path).stem[:20]}")
        note = ""
        try:
            llama = executor.submit(self._open, path, n_ctx, gpu_layers).result()
        except ModelError as exc:
            if gpu_layers == 0:
                executor.shutdown(wait=False)
                raise
            note = f"the GPU could not load {Path(path).name} ({exc.message}); it runs on the CPU"
            print(f"engram: note: {note}", file=sys.stderr)
            logger.warning(note)
            llama = executor.submit(self._open, path, n_ctx, 0).result()
        try:
            return LoadedModel(llama, key, executor, note)
        except ModelError:
            executor.submit(llama.close).result()
            executor.shutdown(wait=True)
            raise

    def _open(self, path: str, n_ctx: int, gpu_layers: int) -> object:
        from llama_cpp import Llama

        try:
            return Llama(model_path=path, n_ctx=n_ctx, n_gpu_layers=gpu_layers, n_threads=self.threads,
                         n_threads_batch=self.threads, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}.") from exc

    def close(self) -> None:
        with self._lock:
            for key in list(self._models):
                self._release(key)
            self._roles.clear()
