"""The model pool: one loaded model per (file, open options), shared by every role.

Roles (tagger, summarizer, recall planner and answerer, chat) ask the pool for a model; the same
configuration (context size, GPU offload, threads, batch) gives them the same ``LoadedModel`` (one
copy in memory, one worker). When a role moves to another configuration, the old model is released
unless another role still uses it. A model that cannot be loaded onto the GPU (e.g. out of memory) is
loaded on the CPU with a note.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import ModelError
from .generation import LoadedModel
from .placement import DEFAULT_BATCH, DEFAULT_THREADS, ON_CPU, Offload, OpenOptions, cpu_threads

logger = logging.getLogger(__name__)

Key = tuple[str, OpenOptions]
#: (model file, open options) → a loaded ``Llama``; raises ``ModelError``.
Opener = Callable[[str, OpenOptions], Any]


def open_llama(path: str, options: OpenOptions) -> Any:
    """Load ``path`` with llama.cpp (the pool's default opener).

    Raises:
        ModelError: llama.cpp cannot load the file (also: the GPU cannot hold the layers asked for).
    """
    from .backend import llama_library

    try:
        return llama_library().Llama(model_path=path, **options.llama_params(), verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(f"llama.cpp could not load {path}: {exc}.") from exc


class ModelPool:
    """Loaded generation models of this process. Thread-safe; ``close`` frees them all.

    Models load outside the pool's lock: while one configuration loads, requests for other ones are
    served, and further requests for the loading one wait for that single load (and get its model, or
    its error; a failed load leaves nothing behind, so the next request loads again). ``release``
    does not cancel a load in flight (the role that asked gets its model when the load ends). ``close``
    does not wait for loads in flight: each one frees its model on its worker as soon as it ends, and
    the requests waiting for it get ``ModelError``.
    """

    def __init__(self, *, threads: int = DEFAULT_THREADS, batch: int = DEFAULT_BATCH,
                 opener: Opener = open_llama) -> None:
        """``threads`` (0: every core; never more than the cores) and ``batch`` are what ``get`` uses when it
        is given none. ``opener`` loads one model file (the default: llama.cpp; the seam tests use)."""
        self.threads = cpu_threads(threads)
        self.batch = batch
        self._opener = opener
        self._models: dict[Key, LoadedModel] = {}
        self._loading: dict[Key, Future[LoadedModel]] = {}
        self._roles: dict[str, Key] = {}
        self._lock = threading.Lock()
        self._closed = False

    def get(self, role: str, path: Path, *, n_ctx: int = 4096, offload: Offload = ON_CPU, threads: int | None = None,
            batch: int | None = None) -> LoadedModel:
        """The model for ``role``: loaded once per configuration, shared with other roles. ``threads`` (0: every
        core) and ``batch`` default to the pool's.

        Raises:
            ModelError: llama.cpp cannot load the file, it has no usable chat template, or the pool is
                closed (also when it closes during the load).
        """
        options = OpenOptions(n_ctx, offload, self.threads if threads is None else cpu_threads(threads),
                              self.batch if batch is None else batch)
        key: Key = (str(path), options)
        while True:
            with self._lock:
                if self._closed:
                    raise _closed_error()
                model = self._models.get(key)
                pending = self._loading.get(key)
                if model is not None:
                    unused = self._assign(role, key)
                elif pending is None:  # this request loads it
                    loading: Future[LoadedModel] = Future()
                    self._loading[key] = loading
            if model is not None:
                _close_all(unused)
                return model
            if pending is None:
                return self._load_for(role, key, loading)
            pending.result()  # another request is loading it: its error is ours
            # Loaded: the next turn takes it from ``_models`` (or loads again if it was released meanwhile).

    def loaded(self) -> dict[Key, list[str]]:
        """Each loaded configuration and the roles using it."""
        with self._lock:
            return {k: sorted(r for r, rk in self._roles.items() if rk == k) for k in self._models}

    def release(self, role: str) -> None:
        """``role`` no longer needs its model; free it when no other role uses it."""
        with self._lock:
            key = self._roles.pop(role, None)
            unused = self._unused(key)
        _close_all(unused)

    def close(self) -> None:
        """Free every loaded model; loads in flight free theirs when they end. Idempotent."""
        with self._lock:
            self._closed = True
            models = list(self._models.values())
            self._models.clear()
            self._roles.clear()
        _close_all(models)

    def _assign(self, role: str, key: Key) -> list[LoadedModel]:
        """Give ``role`` the model of ``key``; returns its previous model if no role uses that any more."""
        previous = self._roles.get(role)
        self._roles[role] = key
        return self._unused(previous) if previous != key else []

    def _unused(self, key: Key | None) -> list[LoadedModel]:
        if key is None or key in self._roles.values():
            return []
        model = self._models.pop(key, None)
        return [] if model is None else [model]

    def _load_for(self, role: str, key: Key, loading: Future[LoadedModel]) -> LoadedModel:
        """Load ``key`` (outside the lock), publish it for ``role`` and hand it to the requests waiting."""
        try:
            model = self._load(key)
        except BaseException as exc:  # handed to the waiting requests, then raised here
            with self._lock:
                del self._loading[key]
            loading.set_exception(exc)
            raise
        with self._lock:
            del self._loading[key]
            closed = self._closed
            unused = [] if closed else self._assign(role, key)
            if not closed:
                self._models[key] = model
        if closed:
            model.close()
            error = _closed_error()
            loading.set_exception(error)
            raise error
        loading.set_result(model)
        _close_all(unused)
        return model

    def _load(self, key: Key) -> LoadedModel:
        path, options = key
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"model-{Path(path).stem[:20]}")
        try:
            llama, note = self._open(executor, path, options)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        try:
            return LoadedModel(llama, key, executor, note)
        except BaseException:
            executor.submit(llama.close).result()
            executor.shutdown(wait=True)
            raise

    def _open(self, executor: ThreadPoolExecutor, path: str, options: OpenOptions) -> tuple[Any, str]:
        """The loaded ``Llama`` (on ``executor``'s worker, which owns it from then on) and a note."""
        try:
            return executor.submit(self._opener, path, options).result(), ""
        except ModelError as exc:
            if not options.offload.on_gpu:
                raise
            note = f"the GPU could not load {Path(path).name} ({exc.message}); it runs on the CPU"
        print(f"engram: note: {note}", file=sys.stderr)
        logger.warning(note)
        return executor.submit(self._opener, path, options.on_cpu()).result(), note


def _close_all(models: list[LoadedModel]) -> None:
    for model in models:
        model.close()
        logger.info("released model %s", model.key[0])


def _closed_error() -> ModelError:
    return ModelError("The model pool is closed (Engram is shutting down).", title="Model closed")
