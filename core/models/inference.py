"""The helper models of an engine: where they run (GPU or CPU), the loaded ones, and the provider per role."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

from ..errors import EngineClosed
from ..manifest import resolve_model
from ..settings import Settings
from .backend import BackendDevice, BuildChoice, backend_devices, choose_build, llama_library
from .files import ModelFiles, total_memory_mb
from .gpu import Gpu, choose, detect
from .placement import ALL_LAYERS, ON_CPU, Offload, llama_gpu_index
from .pool import ModelPool, Opener, open_llama
from .providers import AnthropicProvider, LocalProvider, OpenAICompatibleProvider, Provider, api_key
from .runs_where import runs_where


class DevicePlan(NamedTuple):
    """Where local generation runs: the chosen GPU (or none), the fitting llama.cpp build, the layers to
    offload, and a note when the build cannot use the GPU that was found."""

    gpu: Gpu | None
    build: BuildChoice
    layers: int
    note: str


class Inference:
    """GPU detection, the device plan, the model pool and the providers of one engine. Thread-safe."""

    def __init__(self, settings: Callable[[], Settings], files: Callable[[], ModelFiles], *,
                 generator: Provider | None = None, detect_gpus: Callable[[], list[Gpu]] | None = None,
                 llama_devices: Callable[[], list[BackendDevice]] = backend_devices,
                 opener: Opener = open_llama) -> None:
        """``settings`` and ``files`` give the current settings and model files on each use. ``generator``
        replaces every provider, ``detect_gpus`` the GPU detection, ``llama_devices`` llama.cpp's device
        list and ``opener`` how the pool loads a model file (the seams tests use)."""
        self._settings = settings
        self._files = files
        self._generator = generator
        self._detect_gpus = detect_gpus or (lambda: detect(system_memory_mb=total_memory_mb()))
        self._llama_devices = llama_devices
        self._opener = opener
        self._gpus: list[Gpu] | None = None
        self._devices: list[BackendDevice] | None = None
        self._pool: ModelPool | None = None
        self._closed = False
        # One lock per resource, so that a slow GPU probe or a model load holds up only its own callers.
        self._gpu_lock = threading.Lock()  # held while the GPUs are detected
        self._pool_lock = threading.Lock()

    def gpus(self) -> list[Gpu]:
        """The GPUs this computer reports (detected once)."""
        with self._gpu_lock:
            if self._gpus is None:
                self._gpus = self._detect_gpus()
            return self._gpus

    def device_plan(self) -> DevicePlan:
        """The chosen GPU, the fitting llama.cpp build, GPU layers to offload, and a note when they differ
        (also when llama.cpp's number for the GPU had to be guessed)."""
        return self._placement()[0]

    def offload(self, layers: int | None = None) -> Offload:
        """Where a local generation model goes: the plan's layers (``layers`` instead of
        ``helper.local.n_gpu_layers`` when given, e.g. ``chat.n_gpu_layers``) on llama.cpp's number for the
        chosen GPU (that GPU alone), or the CPU."""
        plan, main_gpu = self._placement(layers)
        return Offload(plan.layers, main_gpu) if plan.layers else ON_CPU

    def embedding_offload(self) -> Offload:
        """Where the embedding model goes: all its layers on the GPU ``model.gpu_device`` chooses, the same
        one as the helper model (``helper.local.n_gpu_layers`` is the helper's alone), or the CPU when no GPU
        is chosen or the llama.cpp build cannot offload. The GPUs are probed only when one could be used."""
        llama_cpp = llama_library()

        if self._settings().model.gpu_device.strip().lower() == "cpu" or not llama_cpp.llama_supports_gpu_offload():
            return ON_CPU
        plan, main_gpu = self._placement()
        return Offload(ALL_LAYERS, main_gpu) if plan.gpu is not None else ON_CPU

    def _placement(self, layers: int | None = None) -> tuple[DevicePlan, int]:
        """The device plan and llama.cpp's number (``main_gpu``) for its GPU (0 without one)."""
        llama_cpp = llama_library()

        settings = self._settings()
        gpus = self.gpus()
        gpu = choose(gpus, settings.model.gpu_device)
        build = choose_build(gpu)
        if gpu is None:
            return DevicePlan(None, build, 0, ""), 0
        if not llama_cpp.llama_supports_gpu_offload():
            return DevicePlan(gpu, build, 0, f"{gpu.name} found, but this llama.cpp build runs on the CPU only; "
                                             f"`engram bootstrap` installs the {build.backend} build"), 0
        main_gpu, note = llama_gpu_index(gpu, gpus, self.llama_devices())
        if layers is None:
            layers = settings.helper.local.n_gpu_layers
        return DevicePlan(gpu, build, ALL_LAYERS if layers < 0 else layers, note), main_gpu

    def llama_devices(self) -> list[BackendDevice]:
        """The devices of the loaded llama.cpp library (asked once)."""
        with self._gpu_lock:
            if self._devices is None:
                self._devices = self._llama_devices()
            return self._devices

    def model_pool(self) -> ModelPool:
        """The loaded generation models (the pool is created on first use, closed by ``close``).

        Raises:
            EngineClosed: ``close`` ran.
        """
        with self._pool_lock:
            if self._pool is None:
                if self._closed:
                    raise EngineClosed("The engine is closed.")
                local = self._settings().helper.local
                self._pool = ModelPool(threads=local.threads, batch=local.batch, opener=self._opener)
            return self._pool

    def provider(self, role: str = "helper") -> Provider:
        """Where the helper model runs for ``role``, per ``helper.provider``. Never downloads a model.

        Raises:
            ModelError: the local model is missing or unverified (the message says how to get it), it
                cannot be loaded, or a remote provider lacks its API key.
            EngineClosed: ``close`` ran.
        """
        settings = self._settings()
        if self._generator is not None:
            return self._generator
        where, local = runs_where(settings, role), settings.helper.local
        if where.in_process:
            path = self._files().verify(resolve_model(where.model))
            return LocalProvider(self.model_pool().get(role, path, n_ctx=local.n_ctx, offload=self.offload(),
                                                       threads=local.threads, batch=local.batch))
        if where.provider == "anthropic":
            return AnthropicProvider(where.model or "claude-sonnet-4-5", api_key("anthropic"), base_url=where.url)
        key = api_key(where.provider) if where.provider == "openai" else None
        return OpenAICompatibleProvider(where.provider, where.url, where.model, key)

    def close(self) -> None:
        """Unload every model; later ``model_pool`` calls raise ``EngineClosed``. Idempotent."""
        with self._pool_lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
