"""Which llama.cpp build fits this computer, how to install it, and what the loaded one can do.

The choice follows (OS, architecture, GPU): Metal on macOS, Vulkan on Windows and Linux x86-64 with a
GPU, the CPU build otherwise. ``bootstrap_plan`` says how to install it: upstream publishes prebuilt
wheels for the CPU and Metal builds (an extra package index); Vulkan is built from source with its
CMake flag. ``backend_devices`` asks the loaded library which ggml backends and devices it really has.
"""

from __future__ import annotations

import ctypes
import platform
import sys
from dataclasses import dataclass

from .gpu import Gpu

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
    return BootstrapPlan(choice, base + ["--no-binary", "llama-cpp-python", "--no-cache-dir"],
                         {"CMAKE_ARGS": "-DGGML_VULKAN=on"}, prebuilt=False)


def backend_devices() -> list[BackendDevice]:
    """The ggml devices the installed llama.cpp library offers (``[]`` when it cannot be asked)."""
    try:
        from llama_cpp._ggml import libggml as lib
    except (ImportError, OSError):
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
