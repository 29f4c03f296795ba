"""Who owns each native resource, and that nothing outlives its owner's ``close``.

The model pool and ``LoadedModel`` run the real SmolLM2 test model; the pool's opener is the seam that
lets a load block on an event, so a test can hold one load in flight. The engine's embedding-model
loader and GPU detection are its seams for the same purpose.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_cpp import Llama

from engram.core import Engine, EngramError, Paths, Settings
from engram.core.embedding import Embedder
from engram.core.embedding.llama_embedder import LlamaEmbedder
from engram.core.errors import ModelError
from engram.core.manifest import model_entry
from engram.core.models.files import ModelFiles
from engram.core.models.gpu import Gpu
from engram.core.models.placement import OpenOptions
from engram.core.models.pool import ModelPool

from .conftest import HashingEmbedder

SMOL = ModelFiles(Path("/nonexistent")).path_for(model_entry("smollm2-135m-instruct"))
SAY_HI = [{"role": "user", "content": "Say hi."}]
BOUND_S = 60.0  # generous: two shared cores, and a real model loads in each of these tests


class RecordingLlama(Llama):
    """A real ``Llama`` that notes which thread closes it (``Llama.__del__`` closes again; only the first counts)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.closed_on: list[str] = []
        super().__init__(*args, **kwargs)

    def close(self) -> None:
        self.closed_on.append(threading.current_thread().name)
        super().close()


def at(n_ctx: int) -> tuple[str, OpenOptions]:
    """The pool's key of the test model on the CPU with ``n_ctx`` tokens of context (2 threads, the 256 batch)."""
    return str(SMOL), OpenOptions(n_ctx, threads=min(2, os.cpu_count() or 1))


class Opener:
    """The pool's opener seam: opens the real model file, counts loads per context size, and can hold a load
    (of one context size) until ``go`` is set or fail it."""

    def __init__(self, *, hold: int | None = None, fail: Callable[[int], bool] = lambda n_ctx: False) -> None:
        self.hold = hold
        self.fail = fail
        self.opening = threading.Event()  # a held load has started
        self.go = threading.Event()
        self.loads: dict[int, int] = {}
        self.llamas: list[RecordingLlama] = []
        self._lock = threading.Lock()

    def __call__(self, path: str, options: OpenOptions) -> object:
        n_ctx = options.n_ctx
        with self._lock:
            self.loads[n_ctx] = self.loads.get(n_ctx, 0) + 1
        if n_ctx == self.hold:
            self.opening.set()
            assert self.go.wait(BOUND_S), "the test never let the held load finish"
        if self.fail(n_ctx):
            raise ModelError(f"llama.cpp could not load {path}: failed as the test asked.")
        llama = RecordingLlama(model_path=path, **options.llama_params(), verbose=False)
        with self._lock:
            self.llamas.append(llama)
        return llama


class Call:
    """Runs ``fn`` on a thread of its own; ``wait`` tells whether it ended within a bound."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.started = threading.Event()

        def run() -> None:
            self.started.set()
            try:
                self.result = fn()
            except BaseException as exc:  # handed to the test's assertions
                self.error = exc
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait(self, timeout: float = BOUND_S) -> bool:
        return self.done.wait(timeout)


# ----------------------------------------------------------------- LoadedModel


def test_closing_a_model_frees_its_llama_once_on_its_worker_and_later_requests_are_refused() -> None:
    opener = Opener()
    pool = ModelPool(threads=2, opener=opener)
    try:
        model = pool.get("chat", SMOL, n_ctx=512)
        assert model.complete(SAY_HI, deadline=time.monotonic() + 60, max_tokens=4).tokens > 0
        model.close()
        model.close()
        closed_on = opener.llamas[0].closed_on
        assert len(closed_on) == 1 and closed_on[0].startswith("model-"), closed_on
        with pytest.raises(ModelError, match="closed"):
            model.complete(SAY_HI, deadline=time.monotonic() + 60, max_tokens=4)
    finally:
        pool.close()


def test_releasing_the_last_role_closes_its_model() -> None:
    opener = Opener()
    pool = ModelPool(threads=2, opener=opener)
    try:
        model = pool.get("tagger", SMOL, n_ctx=512)
        pool.release("tagger")
        assert pool.loaded() == {} and len(opener.llamas[0].closed_on) == 1
        with pytest.raises(ModelError, match="closed"):
            model.complete(SAY_HI, deadline=time.monotonic() + 60, max_tokens=4)
    finally:
        pool.close()


# ------------------------------------------------------------------- the pool


def test_a_load_in_flight_does_not_hold_up_another_configuration() -> None:
    opener = Opener(hold=512)
    pool = ModelPool(threads=2, opener=opener)
    held = Call(lambda: pool.get("chat", SMOL, n_ctx=512))
    try:
        assert opener.opening.wait(BOUND_S)
        other = Call(lambda: pool.get("tagger", SMOL, n_ctx=1024))
        assert other.wait(), "a request for another configuration waited for the load in flight"
        assert other.error is None and other.result.key == at(1024)
        assert not held.done.is_set()
        assert pool.loaded() == {at(1024): ["tagger"]}
    finally:
        opener.go.set()
        assert held.wait()
        pool.close()
    assert held.error is None


def test_two_requests_for_one_configuration_share_one_load() -> None:
    opener = Opener(hold=512)
    pool = ModelPool(threads=2, opener=opener)
    try:
        first = Call(lambda: pool.get("tagger", SMOL, n_ctx=512))
        assert opener.opening.wait(BOUND_S)
        second = Call(lambda: pool.get("planner", SMOL, n_ctx=512))
        assert second.started.wait(BOUND_S)
        opener.go.set()
        assert first.wait() and second.wait()
        assert first.error is None and second.error is None
        assert first.result is second.result and opener.loads == {512: 1}
        assert pool.loaded() == {at(512): ["planner", "tagger"]}
    finally:
        opener.go.set()
        pool.close()


def test_a_failed_load_leaves_nothing_behind_and_the_next_request_loads_again() -> None:
    failing = {512}
    opener = Opener(hold=512, fail=lambda n_ctx: n_ctx in failing)
    pool = ModelPool(threads=2, opener=opener)
    try:
        first = Call(lambda: pool.get("tagger", SMOL, n_ctx=512))
        assert opener.opening.wait(BOUND_S)
        second = Call(lambda: pool.get("planner", SMOL, n_ctx=512))
        assert second.started.wait(BOUND_S)
        opener.go.set()
        assert first.wait() and second.wait()
        for call in (first, second):
            assert isinstance(call.error, ModelError) and "failed as the test asked" in call.error.message
        assert pool.loaded() == {}
        failing.clear()
        model = pool.get("tagger", SMOL, n_ctx=512)
        assert pool.loaded() == {at(512): ["tagger"]} and model.key == at(512)
    finally:
        opener.go.set()
        pool.close()


def test_closing_the_pool_during_a_load_returns_at_once_and_frees_the_model_when_the_load_ends() -> None:
    opener = Opener(hold=512)
    pool = ModelPool(threads=2, opener=opener)
    held = Call(lambda: pool.get("chat", SMOL, n_ctx=512))
    try:
        assert opener.opening.wait(BOUND_S)
        closing = Call(pool.close)
        assert closing.wait(10), "close waited for a load in flight"
    finally:
        opener.go.set()
    assert held.wait()
    assert isinstance(held.error, ModelError) and "closed" in held.error.message
    assert len(opener.llamas) == 1 and len(opener.llamas[0].closed_on) == 1, "the loaded Llama was freed"
    assert opener.llamas[0].closed_on[0].startswith("model-")
    assert pool.loaded() == {}
    with pytest.raises(ModelError, match="closed"):
        pool.get("chat", SMOL, n_ctx=512)


# ----------------------------------------------------------------- the engine


class HeldLoader:
    """The engine's embedding-model loader seam: loads the real bundled model once ``go`` is set."""

    def __init__(self, model_file: Path) -> None:
        self.model_file = model_file
        self.loading = threading.Event()
        self.go = threading.Event()
        self.loaded: list[LlamaEmbedder] = []

    def __call__(self) -> Embedder:
        self.loading.set()
        assert self.go.wait(BOUND_S), "the test never let the load finish"
        embedder = LlamaEmbedder(self.model_file, model_id="all-minilm-l6-v2", dimensions=384, threads=1)
        self.loaded.append(embedder)
        return embedder


def assert_closed(embedder: LlamaEmbedder) -> None:
    with pytest.raises(ModelError, match="closed"):
        embedder.embed(["still loaded?"])


def test_an_embedding_model_whose_load_ends_after_close_is_closed_at_once(paths: Paths, model_file: Path) -> None:
    loader = HeldLoader(model_file)
    engine = Engine(paths, Settings(), embedder_loader=loader)
    asking = Call(engine.embedder)
    try:
        assert loader.loading.wait(BOUND_S)
        closing = Call(engine.close)
        assert closing.wait(10), "close waited for the embedding model's load"
    finally:
        loader.go.set()
    assert asking.wait()
    assert isinstance(asking.error, EngramError) and asking.error.message == "The engine is closed."
    assert len(loader.loaded) == 1
    assert_closed(loader.loaded[0])
    assert not engine.embedder_loaded()


def test_a_closed_engine_loads_no_model_and_opens_no_store(paths: Paths, model_file: Path) -> None:
    loader = HeldLoader(model_file)
    loader.go.set()
    engine = Engine(paths, Settings(), embedder_loader=loader)
    engine.close()
    for use in (engine.embedder, engine.embedder_or_none, engine.store, engine.model_pool):
        with pytest.raises(EngramError, match="The engine is closed"):
            use()
    assert loader.loaded == [] and not loader.loading.is_set()
    assert engine.workspace_names() == []


def test_a_slow_gpu_probe_holds_up_neither_the_embedding_model_nor_the_model_pool(paths: Paths) -> None:
    probing, go = threading.Event(), threading.Event()
    found = [Gpu(0, "nvidia", "Test GPU", 8192, True, "test")]

    def detect() -> list[Gpu]:
        probing.set()
        assert go.wait(BOUND_S), "the test never ended the probe"
        return found

    engine = Engine(paths, Settings(), embedder=HashingEmbedder(), detect_gpus=detect)
    probe = Call(engine.gpus)
    try:
        assert probing.wait(BOUND_S)
        embedding = Call(engine.embedder)
        pooling = Call(engine.model_pool)
        assert embedding.wait(10) and pooling.wait(10), "a GPU probe held up the embedding model or the pool"
        assert embedding.error is None and pooling.error is None
        assert not probe.done.is_set()
    finally:
        go.set()
        assert probe.wait()
        engine.close()
    assert probe.result == found


# ---------------------------------------------------------------- the service


def warm_up_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "warm-up"]


def test_closing_the_service_ends_its_warm_up_and_leaves_no_model_loaded(paths: Paths, model_file: Path) -> None:
    from engram.mcp.service import Service

    others = warm_up_threads()  # of services other tests may have left
    loader = HeldLoader(model_file)
    settings = Settings()  # service.port 0: a free port
    engine = Engine(paths, settings, embedder_loader=loader)
    service = Service(paths, settings, engine=engine, handle_signals=False)
    service.open()
    try:
        assert loader.loading.wait(BOUND_S), "the warm-up did not start loading the embedding model"
        engine.close()  # the owner closes the engine while the warm-up is still loading
    finally:
        loader.go.set()
        service.close()
    assert [t for t in warm_up_threads() if t not in others] == [], "the warm-up outlived the service's close"
    assert len(loader.loaded) == 1
    assert_closed(loader.loaded[0])
    assert not engine.embedder_loaded()
    assert engine.workspace_names() == [], "the warm-up opened a store after the engine was closed"
