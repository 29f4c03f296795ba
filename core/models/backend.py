"""Which llama.cpp build fits this computer, how to install it, and what the loaded one can do.

The choice follows (OS, architecture, GPU): Metal on macOS, Vulkan on Windows and Linux x86-64 with a
GPU, the CPU build otherwise. ``bootstrap_plan`` says how to install it: upstream publishes prebuilt
wheels for the CPU and Metal builds (an extra package index); Vulkan is built from source with its
CMake flag. ``llama_library`` imports llama.cpp with its backends loaded (a build with dynamically loaded
backends, as the bundle carries, has none until asked); ``backend_devices`` asks it which ggml devices it
really has.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import platform
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import ModelError
from .gpu import Gpu

logger = logging.getLogger(__name__)

LLAMA_VERSION = "0.3.36"
WHEEL_INDEX = "https://abetlen.github.io/llama-cpp-python/whl/{backend}"
DEVICE_TYPES = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accelerator"}


@dataclass(frozen=True)
class BuildChoice:
    backend: str  # cpu | vulkan | metal
    reason: str


@dataclass(frozen=True)
class BootstrapPlan:
    choice: BuildChoice
    command: list[str]
    env: dict[str, str]
    prebuilt: bool

    def describe(self) -> str:
        env = " ".join(f"{k}={v!r}" for k, v in self.env.items())
        how = "prebuilt wheel from upstream's index" if self.prebuilt else "build from source"
        return f"{self.choice.backend} build ({self.choice.reason}); {how}:\n  {env + ' ' if env else ''}" + " ".join(
            self.command)


@dataclass(frozen=True)
class BackendDevice:
    name: str
    description: str
    kind: str
    memory_total_mb: int


def choose_build(gpu: Gpu | None, os_name: str | None = None, machine: str | None = None) -> BuildChoice:
    """The llama.cpp build for this OS, CPU architecture and chosen GPU."""
    os_name = os_name or sys.platform
    machine = (machine or platform.machine()).lower()
    if os_name == "darwin":
        return BuildChoice("metal", "macOS: Metal runs on Apple GPUs" + (f" ({gpu.name})" if gpu else ""))
    if gpu is not None and os_name in ("win32", "linux") and machine in ("x86_64", "amd64"):
        return BuildChoice("vulkan", f"{gpu.name} on {'Windows' if os_name == 'win32' else 'Linux'} x86-64")
    if gpu is None:
        return BuildChoice("cpu", "no GPU chosen")
    return BuildChoice("cpu", f"no GPU build chosen for {os_name} on {machine}")


def bootstrap_plan(choice: BuildChoice, python: str = sys.executable) -> BootstrapPlan:
    """How to (re)install llama-cpp-python for ``choice``."""
    base = [python, "-m", "pip", "install", "--force-reinstall", "--no-deps", f"llama-cpp-python=={LLAMA_VERSION}"]
    if choice.backend in ("cpu", "metal"):
        return BootstrapPlan(choice, base + ["--prefer-binary", "--extra-index-url",
                                             WHEEL_INDEX.format(backend=choice.backend)],
                             {"CMAKE_ARGS": "-DGGML_METAL=on" if choice.backend == "metal" else "-DGGML_NATIVE=ON"},
                             prebuilt=True)
    # Backends as loadable modules (GGML_BACKEND_DL): without a Vulkan driver the build still runs on the CPU.
    return BootstrapPlan(choice, base + ["--no-binary", "llama-cpp-python", "--no-cache-dir"],
                         {"CMAKE_ARGS": "-DGGML_VULKAN=on -DGGML_BACKEND_DL=on"}, prebuilt=False)


@dataclass(frozen=True)
class LoadedBackends:
    """The ggml backends of the installed llama.cpp once loaded: ``dynamic`` for a build whose backends are
    files loaded at run time (``GGML_BACKEND_DL``); ``note`` says when a GPU backend the build carries could
    not be used (no driver), so models run on the CPU."""

    names: tuple[str, ...]
    dynamic: bool
    note: str = ""


_loaded: LoadedBackends | None = None
_load_lock = threading.Lock()
#: Backend modules a build may carry, by file-name part, and the name their backend registers under.
GPU_MODULES = {"vulkan": "Vulkan", "cuda": "CUDA", "metal": "Metal", "hip": "ROCm", "sycl": "SYCL"}


class BindingBroken(ModelError):
    """llama.cpp's Python binding cannot be imported or its library cannot be loaded: a damaged installation."""

    title = "llama.cpp could not be loaded"


def repair_hint() -> str:
    """How to repair a damaged llama.cpp binding, for a bundled app and for a source checkout alike."""
    return ("Repair the installation: `engram bootstrap` installs the llama.cpp build that fits this computer "
            "again (from a source checkout, `bash scripts/setup-env.sh` does), or reinstall Engram.")


def llama_library() -> ModuleType:
    """``llama_cpp``, its backends loaded (once per process): every caller that loads a model or asks what the
    library can do goes through here.

    Raises:
        BindingBroken: llama-cpp-python is missing or its library cannot be loaded (the message says how to
            repair it).
        ModelError: a build with loadable backends has no CPU backend in its folder (a broken install).
    """
    try:
        import llama_cpp

        loaded_backends()
    except (ImportError, OSError) as exc:
        raise BindingBroken(f"Engram's llama.cpp binding (llama-cpp-python {LLAMA_VERSION}) could not be loaded "
                            f"({type(exc).__name__}: {exc}), so no model can run. {repair_hint()}") from exc
    return llama_cpp


def loaded_backends() -> LoadedBackends:
    """The installed llama.cpp's backends, loading them first when the build loads them from files.

    Raises:
        ImportError, OSError: llama-cpp-python is missing or its library cannot be loaded.
        ModelError: the build loads its backends from files and found no CPU backend among them.
    """
    global _loaded
    with _load_lock:
        if _loaded is None:
            _loaded = load_backends(ggml_library(), _lib_dir())
            if _loaded.note:
                logger.warning(_loaded.note)
        return _loaded


def _lib_dir() -> Path:
    import llama_cpp

    return Path(llama_cpp.__file__).parent / "lib"


@functools.cache
def ggml_library() -> Any:
    """libggml as libllama links it (opened once).

    Raises:
        ImportError, OSError: llama-cpp-python is missing or its library cannot be loaded.
    """
    lib_dir = _lib_dir()  # importing llama_cpp loads libllama, and with it libggml under its SONAME
    # A wheel holds copies, not links: libggml.so and libggml.so.0 are two files, and the one loaded under the
    # name libllama does not use (as llama_cpp._ggml does) is a second library with its own backend registry.
    # Linux: the SONAME (libggml.so.N); macOS: libggml.N.dylib; Windows: ggml.dll (one file).
    named = sorted(lib_dir.glob("libggml.so.[0-9]*"), key=lambda p: len(p.name)) + sorted(
        lib_dir.glob("libggml.[0-9]*.dylib"), key=lambda p: len(p.name))
    if named:
        return ctypes.CDLL(str(named[0]))
    from llama_cpp._ggml import libggml

    return libggml


def load_backends(lib: Any, lib_dir: Path) -> LoadedBackends:
    """Load the backends of the ggml library ``lib`` from ``lib_dir`` when it has none registered (a
    ``GGML_BACKEND_DL`` build); a build with built-in backends is left as it is.

    Raises:
        ModelError: no CPU backend after loading (the folder lacks ``ggml-cpu``).
    """
    lib.ggml_backend_reg_count.restype = ctypes.c_size_t
    lib.ggml_backend_reg_get.restype = ctypes.c_void_p
    lib.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
    lib.ggml_backend_reg_name.restype = ctypes.c_char_p
    lib.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
    dynamic = lib.ggml_backend_reg_count() == 0
    if dynamic:
        lib.ggml_backend_load_all_from_path.restype = None
        lib.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
        with _stderr_to_log():  # what each backend prints as it loads ("No devices found", …) goes to the log
            lib.ggml_backend_load_all_from_path(str(lib_dir).encode())
    names = tuple(lib.ggml_backend_reg_name(lib.ggml_backend_reg_get(i)).decode()
                  for i in range(lib.ggml_backend_reg_count()))
    if dynamic and "CPU" not in names:
        raise ModelError(f"llama.cpp found no CPU backend in {lib_dir} (backends loaded: "
                         f"{', '.join(names) or 'none'}); reinstall Engram or run `engram bootstrap`.")
    return LoadedBackends(names, dynamic, _missing_gpu_note(names, lib_dir) if dynamic else "")


@contextlib.contextmanager
def _stderr_to_log() -> Iterator[None]:
    """Native writes to file descriptor 2 inside the block go to Engram's log (debug), not the terminal."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all (a windowed app): nothing to keep off the terminal
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            for line in captured.read().decode("utf-8", "replace").splitlines():
                logger.debug("llama.cpp: %s", line)


def _missing_gpu_note(names: tuple[str, ...], lib_dir: Path) -> str:
    """A note for each GPU backend module in ``lib_dir`` that did not load (its driver is missing)."""
    files = [p.name.lower() for p in lib_dir.glob("*ggml-*")] if lib_dir.is_dir() else []
    missing = [name for part, name in GPU_MODULES.items()
               if any(f"ggml-{part}" in f for f in files) and name not in names]
    if not missing:
        return ""
    return (f"this llama.cpp build carries the {' and '.join(missing)} backend, but it could not be loaded (no "
            f"{' or '.join(missing)} driver found): models run on the CPU. Install or update your GPU's driver "
            "to use it.")


def backend_devices() -> list[BackendDevice]:
    """The ggml devices the installed llama.cpp library offers (``[]`` when it cannot be asked)."""
    try:
        loaded_backends()
        lib = ggml_library()
    except (ImportError, OSError, ModelError):
        return []
    try:
        lib.ggml_backend_dev_count.restype = ctypes.c_size_t
        lib.ggml_backend_dev_get.restype = ctypes.c_void_p
        lib.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        for fn in (lib.ggml_backend_dev_name, lib.ggml_backend_dev_description):
            fn.restype = ctypes.c_char_p
            fn.argtypes = [ctypes.c_void_p]
        lib.ggml_backend_dev_type.restype = ctypes.c_int
        lib.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        lib.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                                ctypes.POINTER(ctypes.c_size_t)]
        devices = []
        for i in range(lib.ggml_backend_dev_count()):
            dev = lib.ggml_backend_dev_get(i)
            free, total = ctypes.c_size_t(), ctypes.c_size_t()
            lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
            devices.append(BackendDevice(lib.ggml_backend_dev_name(dev).decode(),
                                         lib.ggml_backend_dev_description(dev).decode(),
                                         DEVICE_TYPES.get(lib.ggml_backend_dev_type(dev), "other"),
                                         int(total.value // 2**20)))
        return devices
    except (AttributeError, OSError):
        return []
