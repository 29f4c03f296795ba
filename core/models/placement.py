"""Where and how a model is opened: the GPU offload, the options of one load, and llama.cpp's number for a GPU.

Engram numbers GPUs by its own detection (``engram device``: nvidia-smi, lspci, vulkaninfo, …, merged);
llama.cpp numbers them in its own device list. ``main_gpu`` is an index into llama.cpp's list, so the
chosen ``Gpu`` is looked up there by name (``llama_gpu_index``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any

from .backend import BackendDevice
from .gpu import Gpu

#: The seed's defaults: 4 CPU threads (fewer on a machine with fewer cores) and a 256-token prompt batch.
DEFAULT_THREADS = 4
DEFAULT_BATCH = 256
#: More layers than any model has: "offload all of them" (llama.cpp caps it at the model's count).
ALL_LAYERS = 1000


@dataclass(frozen=True)
class Offload:
    """``layers`` of a model on llama.cpp's GPU number ``main_gpu``, the whole model on that one GPU;
    no layers: the CPU (``main_gpu`` is then meaningless and kept at 0)."""

    layers: int = 0
    main_gpu: int = 0

    @property
    def on_gpu(self) -> bool:
        return self.layers != 0

    def llama_params(self) -> dict[str, Any]:
        """The ``Llama`` arguments: on a GPU, that GPU alone (``LLAMA_SPLIT_MODE_NONE``: nothing is split
        across devices); on the CPU, no layers and llama.cpp's own defaults for the rest."""
        if not self.on_gpu:
            return {"n_gpu_layers": 0}
        from llama_cpp import LLAMA_SPLIT_MODE_NONE

        return {"n_gpu_layers": self.layers, "main_gpu": self.main_gpu, "split_mode": LLAMA_SPLIT_MODE_NONE}


ON_CPU = Offload()


@dataclass(frozen=True)
class OpenOptions:
    """Everything one generation model is opened with besides its file; the model pool keeps one copy per
    (file, options)."""

    n_ctx: int = 4096
    offload: Offload = ON_CPU
    threads: int = DEFAULT_THREADS
    batch: int = DEFAULT_BATCH  # prompt tokens per step: llama.cpp's n_batch and n_ubatch

    def on_cpu(self) -> OpenOptions:
        """The same options without GPU offload."""
        return replace(self, offload=ON_CPU)

    def llama_params(self) -> dict[str, Any]:
        """The ``Llama`` arguments for these options (all but the file)."""
        return {"n_ctx": self.n_ctx, "n_batch": self.batch, "n_ubatch": self.batch, "n_threads": self.threads,
                "n_threads_batch": self.threads, **self.offload.llama_params()}


def cpu_threads(setting: int, cores: int | None = None) -> int:
    """CPU threads for a threads setting: 0 = every core; otherwise the setting, but never more than the
    cores (more threads than cores only slows llama.cpp down)."""
    cores = cores or os.cpu_count() or 1
    return cores if setting <= 0 else min(setting, cores)


# ------------------------------------------------------------- llama.cpp's device numbers

# Words every GPU name of a vendor shares: they tell nothing about which device it is.
_VENDOR_WORDS = frozenset({"nvidia", "amd", "ati", "intel", "apple", "corporation", "inc", "advanced", "micro",
                           "devices", "device", "graphics", "gpu", "r", "tm", "co", "ltd"})


def llama_gpus(devices: list[BackendDevice]) -> list[BackendDevice]:
    """The GPUs llama.cpp offloads to, in the order ``main_gpu`` counts them.

    llama.cpp (``llama_model_load_from_file``) walks ggml's device list in order and keeps the GPUs;
    integrated GPUs only when there is no other GPU; CPUs and accelerators never. (It also puts RPC
    servers first and drops a GPU that a second backend lists again, e.g. CUDA and Vulkan both built in;
    Engram's builds have neither, and a duplicate comes after its first listing, which the name match
    finds first.)
    """
    gpus = [d for d in devices if d.kind == "gpu"]
    return gpus or [d for d in devices if d.kind == "igpu"]


def _words(name: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", name.lower())) - _VENDOR_WORDS


def _likeness(gpu_name: str, device: BackendDevice) -> tuple[int, int]:
    """(shared model numbers, shared other words) of two names; (0, 0) when they cannot be the same GPU."""
    ours, theirs = _words(gpu_name), _words(device.description) | _words(device.name)
    numbers = {w for w in ours if any(c.isdigit() for c in w)}
    shared = ours & theirs
    if not shared or (numbers and not numbers & shared):
        return 0, 0  # a name with a model number (3060, a770, m2) matches only a name with that number
    return len(shared & numbers), len(shared - numbers)


def llama_gpu_index(gpu: Gpu, detected: list[Gpu], devices: list[BackendDevice]) -> tuple[int, str]:
    """llama.cpp's ``main_gpu`` for ``gpu`` (one of ``detected``), and a note when it had to be guessed.

    ``devices`` is llama.cpp's own device list (``backend.backend_devices``). The two numberings differ:
    vendor tools count in PCI order, CUDA fastest first, Vulkan in its driver's order, and Engram's
    detection merges several tools. So the GPU is found by name in llama.cpp's list (the description is
    the device's own name there: "NVIDIA GeForce RTX 3060", "AMD Radeon RX 7900 XTX (RADV NAVI31)",
    "Apple M2 Pro"). Cards of the same name keep their order: the second such card detected is the second
    such card in llama.cpp's list (PCI order both, for identical cards). One GPU on each side is the same
    GPU whatever the names say. Otherwise it falls back to llama.cpp's first GPU, with a note.
    """
    gpus = llama_gpus(devices)
    if not gpus:
        return 0, f"llama.cpp's device list could not be read; {gpu.name} is taken to be its first GPU"
    if len(gpus) == 1 and len(detected) == 1:
        return 0, ""
    scores = [_likeness(gpu.name, d) for d in gpus]
    best = max(scores)
    if best == (0, 0):
        names = ", ".join(d.description for d in gpus)
        return 0, (f"llama.cpp lists no GPU named like {gpu.name} (it has: {names}); models run on its first, "
                   f"{gpus[0].description}")
    matches = [i for i, score in enumerate(scores) if score == best]
    twins = [g for g in detected if g.name == gpu.name]
    ordinal = twins.index(gpu) if gpu in twins else 0
    return matches[min(ordinal, len(matches) - 1)], ""
