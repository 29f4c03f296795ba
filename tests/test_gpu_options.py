"""The GPU that was chosen is the GPU that runs: what reaches llama.cpp for a chosen GPU and for the CPU.

The seams: GPU detection (``detect_gpus``), llama.cpp's own device list (``llama_devices``), the pool's
opener (records the options it was given) and the ``Llama`` constructor (records its arguments). No GPU
is needed: ``llama_supports_gpu_offload`` is made to answer as a GPU build of llama.cpp would.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import llama_cpp
import pytest

from engram.core.manifest import ModelEntry
from engram.core.models.backend import BackendDevice
from engram.core.models.gpu import Gpu
from engram.core.models.inference import Inference
from engram.core.models.placement import (
    ALL_LAYERS,
    DEFAULT_BATCH,
    Offload,
    OpenOptions,
    cpu_threads,
    llama_gpu_index,
)
from engram.core.models.pool import ModelPool, open_llama
from engram.core.settings import Settings

CORES = os.cpu_count() or 1
RTX_3060 = Gpu(0, "nvidia", "NVIDIA GeForce RTX 3060", 12288, True, "nvidia-smi")
RTX_A4000 = Gpu(1, "nvidia", "NVIDIA RTX A4000", 16376, True, "nvidia-smi")
CPU_DEVICE = BackendDevice("CPU", "Intel(R) Xeon(R) Processor", "cpu", 32768)
# Vulkan enumerates in its own order: the A4000 first, although nvidia-smi numbers it 1.
VULKAN = [CPU_DEVICE, BackendDevice("Vulkan0", "NVIDIA RTX A4000", "gpu", 16376),
          BackendDevice("Vulkan1", "NVIDIA GeForce RTX 3060", "gpu", 12288)]


class FakeLlama:
    """What ``LoadedModel`` reads from a loaded model, and nothing more."""

    metadata = {"tokenizer.chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}

    class _model:  # the attribute name llama-cpp-python uses
        @staticmethod
        def token_bos() -> int:
            return -1

        @staticmethod
        def token_eos() -> int:
            return -1

    def __init__(self) -> None:
        self.evaluated: list[int] = []

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(text)

    def eval(self, tokens: list[int]) -> None:  # the warm-up at load
        self.evaluated += tokens

    def close(self) -> None:
        pass


class RecordingOpener:
    """The pool's opener seam: records each (file, options) and returns a fake model."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, OpenOptions]] = []

    def __call__(self, path: str, options: OpenOptions) -> FakeLlama:
        self.opened.append((path, options))
        return FakeLlama()


class Files:
    def __init__(self, path: Path) -> None:
        self.path = path

    def verify(self, entry: ModelEntry) -> Path:
        return self.path


@pytest.fixture
def gpu_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_cpp, "llama_supports_gpu_offload", lambda: True)


def inference(settings: Settings, tmp_path: Path, opener: RecordingOpener, gpus: list[Gpu] | None = None,
              devices: list[BackendDevice] | None = None) -> Inference:
    return Inference(lambda: settings, lambda: Files(tmp_path / "helper.gguf"),  # type: ignore[arg-type, return-value]
                     detect_gpus=lambda: list(gpus or []), llama_devices=lambda: list(devices or []), opener=opener)


# ------------------------------------------------------------------ generation


def test_a_chosen_gpu_reaches_the_opener_as_its_llama_cpp_device(tmp_path: Path, gpu_build: None) -> None:
    opener = RecordingOpener()
    engine = inference(Settings(), tmp_path, opener, [RTX_3060, RTX_A4000], VULKAN)
    try:
        engine.provider("helper")
        assert engine.device_plan().gpu == RTX_A4000 and engine.device_plan().note == ""
    finally:
        engine.close()
    assert opener.opened == [(str(tmp_path / "helper.gguf"),
                              OpenOptions(n_ctx=8192, offload=Offload(ALL_LAYERS, main_gpu=0),
                                          threads=min(4, CORES), batch=256))]


def test_a_gpu_chosen_by_index_is_found_by_name_in_llama_cpps_list(tmp_path: Path, gpu_build: None) -> None:
    opener = RecordingOpener()
    settings = Settings()
    settings.model.gpu_device = "0"  # the RTX 3060 of `engram device`: Vulkan's second GPU
    settings.helper.local.n_gpu_layers = 20
    engine = inference(settings, tmp_path, opener, [RTX_3060, RTX_A4000], VULKAN)
    try:
        engine.provider("helper")
    finally:
        engine.close()
    assert opener.opened[0][1].offload == Offload(20, main_gpu=1)


@pytest.mark.parametrize("case", ["cpu-setting", "no-gpu", "cpu-build"])
def test_on_the_cpu_no_gpu_option_reaches_the_opener(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     case: str) -> None:
    monkeypatch.setattr(llama_cpp, "llama_supports_gpu_offload", lambda: case != "cpu-build")
    opener = RecordingOpener()
    settings = Settings()
    if case == "cpu-setting":
        settings.model.gpu_device = "cpu"
    engine = inference(settings, tmp_path, opener, [] if case == "no-gpu" else [RTX_3060], VULKAN)
    try:
        engine.provider("helper")
    finally:
        engine.close()
    assert opener.opened[0][1].offload == Offload()
    assert not opener.opened[0][1].offload.on_gpu


def test_threads_and_batch_follow_the_settings(tmp_path: Path) -> None:
    opener = RecordingOpener()
    settings = Settings()
    settings.helper.local.threads = 1
    settings.helper.local.batch = 128
    engine = inference(settings, tmp_path, opener)
    try:
        engine.provider("helper")
        settings.helper.local.threads = 0  # every core: a new configuration, loaded once more
        engine.provider("helper")
        engine.provider("planner")  # the same configuration: shared, not loaded again
    finally:
        engine.close()
    assert [(o.threads, o.batch) for _, o in opener.opened] == [(1, 128), (CORES, 128)]


def test_the_seed_defaults_are_four_threads_and_a_256_token_batch() -> None:
    local = Settings().helper.local
    assert (local.threads, local.batch, DEFAULT_BATCH) == (4, 256, 256)
    assert cpu_threads(4, cores=2) == 2 and cpu_threads(4, cores=16) == 4
    assert cpu_threads(0, cores=16) == 16 and cpu_threads(8, cores=16) == 8
    assert ModelPool().threads == min(4, CORES) and ModelPool().batch == 256


def test_the_pool_keeps_one_copy_per_configuration(tmp_path: Path) -> None:
    opener = RecordingOpener()
    pool = ModelPool(threads=2, opener=opener)
    path = tmp_path / "m.gguf"
    try:
        first = pool.get("tagger", path, n_ctx=512, offload=Offload(ALL_LAYERS, main_gpu=1))
        assert pool.get("planner", path, n_ctx=512, offload=Offload(ALL_LAYERS, main_gpu=1)) is first
        other = pool.get("chat", path, n_ctx=512, offload=Offload(ALL_LAYERS, main_gpu=0))
        assert other is not first
        assert pool.get("summary", path, n_ctx=512, offload=Offload(ALL_LAYERS, main_gpu=1), batch=64) is not first
        threads = min(2, CORES)
        assert pool.loaded() == {
            (str(path), OpenOptions(512, Offload(ALL_LAYERS, 1), threads, 256)): ["planner", "tagger"],
            (str(path), OpenOptions(512, Offload(ALL_LAYERS, 0), threads, 256)): ["chat"],
            (str(path), OpenOptions(512, Offload(ALL_LAYERS, 1), threads, 64)): ["summary"]}
    finally:
        pool.close()
    assert len(opener.opened) == 3


# ------------------------------------------------------------ the Llama constructor


class RecordingLlamaClass:
    calls: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        RecordingLlamaClass.calls.append(kwargs)


def test_gpu_options_reach_the_llama_constructor_and_split_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    RecordingLlamaClass.calls = []
    monkeypatch.setattr(llama_cpp, "Llama", RecordingLlamaClass)
    open_llama("m.gguf", OpenOptions(n_ctx=2048, offload=Offload(ALL_LAYERS, main_gpu=1), threads=3, batch=256))
    open_llama("m.gguf", OpenOptions(n_ctx=2048, offload=Offload(), threads=3, batch=128))
    gpu, cpu = RecordingLlamaClass.calls
    assert gpu == {"model_path": "m.gguf", "n_ctx": 2048, "n_batch": 256, "n_ubatch": 256, "n_threads": 3,
                   "n_threads_batch": 3, "n_gpu_layers": ALL_LAYERS, "main_gpu": 1,
                   "split_mode": llama_cpp.LLAMA_SPLIT_MODE_NONE, "verbose": False}
    assert cpu == {"model_path": "m.gguf", "n_ctx": 2048, "n_batch": 128, "n_ubatch": 128, "n_threads": 3,
                   "n_threads_batch": 3, "n_gpu_layers": 0, "verbose": False}


# ------------------------------------------------------------------ embedding


def test_the_embedding_model_follows_the_chosen_gpu(tmp_path: Path, gpu_build: None) -> None:
    engine = inference(Settings(), tmp_path, RecordingOpener(), [RTX_3060, RTX_A4000], VULKAN)
    assert engine.embedding_offload() == Offload(ALL_LAYERS, main_gpu=0)
    settings = Settings()
    settings.model.gpu_device = "geforce"
    settings.helper.local.n_gpu_layers = 0  # the helper's layers: the embedding model is not the helper
    engine = inference(settings, tmp_path, RecordingOpener(), [RTX_3060, RTX_A4000], VULKAN)
    assert engine.embedding_offload() == Offload(ALL_LAYERS, main_gpu=1)


def never_detect() -> list[Gpu]:
    raise AssertionError("the GPUs were probed although no GPU can be used")


@pytest.mark.parametrize("case", ["cpu-setting", "cpu-build"])
def test_the_embedding_model_stays_on_the_cpu_without_probing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              case: str) -> None:
    monkeypatch.setattr(llama_cpp, "llama_supports_gpu_offload", lambda: case != "cpu-build")
    settings = Settings()
    if case == "cpu-setting":
        settings.model.gpu_device = "cpu"
    engine = Inference(lambda: settings, lambda: Files(tmp_path), detect_gpus=never_detect)  # type: ignore[arg-type, return-value]
    assert engine.embedding_offload() == Offload()


def test_the_embedding_model_stays_on_the_cpu_when_no_gpu_is_found(tmp_path: Path, gpu_build: None) -> None:
    assert inference(Settings(), tmp_path, RecordingOpener(), [], [CPU_DEVICE]).embedding_offload() == Offload()


# ------------------------------------------------- our GPU numbers → llama.cpp's


def test_llama_cpps_list_holds_its_gpus_in_its_own_order_without_cpus_or_integrated_ones() -> None:
    igpu = BackendDevice("Vulkan0", "Intel(R) Graphics (ADL GT2)", "igpu", 0)
    amd = BackendDevice("Vulkan1", "AMD Radeon RX 7900 XTX (RADV NAVI31)", "gpu", 24560)
    lspci_amd = Gpu(1, "amd", "Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX]", 24560,
                    True, "lspci")
    intel = Gpu(0, "intel", "Intel Corporation Alder Lake-P GT2 [Iris Xe Graphics]", None, False, "lspci")
    assert llama_gpu_index(lspci_amd, [intel, lspci_amd], [CPU_DEVICE, igpu, amd]) == (0, "")
    assert llama_gpu_index(RTX_A4000, [RTX_3060, RTX_A4000], VULKAN) == (0, "")
    assert llama_gpu_index(RTX_3060, [RTX_3060, RTX_A4000], VULKAN) == (1, "")


def test_integrated_gpus_count_when_llama_cpp_has_no_other() -> None:
    uhd = Gpu(0, "intel", "Intel(R) UHD Graphics 770", 1024, False, "windows-cim")
    devices = [CPU_DEVICE, BackendDevice("Vulkan0", "Intel(R) UHD Graphics 770", "igpu", 0)]
    assert llama_gpu_index(uhd, [uhd], devices) == (0, "")


def test_identical_cards_keep_their_order() -> None:
    cards = [Gpu(i, "nvidia", "NVIDIA GeForce RTX 3090", 24576, True, "nvidia-smi") for i in range(2)]
    devices = [BackendDevice(f"CUDA{i}", "NVIDIA GeForce RTX 3090", "gpu", 24576) for i in range(2)] + [CPU_DEVICE]
    assert [llama_gpu_index(card, cards, devices) for card in cards] == [(0, ""), (1, "")]


def test_one_gpu_each_side_is_the_same_gpu_even_by_another_name() -> None:
    unnamed = Gpu(0, "nvidia", "NVIDIA Corporation Device 2684", None, True, "lspci")
    assert llama_gpu_index(unnamed, [unnamed], [BackendDevice("Vulkan0", "NVIDIA GeForce RTX 4090", "gpu", 24564),
                                                 CPU_DEVICE]) == (0, "")


def test_an_unknown_mapping_falls_back_to_llama_cpps_first_gpu_with_a_note() -> None:
    a770 = Gpu(2, "intel", "Intel(R) Arc(TM) A770 Graphics", 16384, True, "windows-cim")
    index, note = llama_gpu_index(a770, [RTX_3060, RTX_A4000, a770], VULKAN)
    assert index == 0
    assert note == ("llama.cpp lists no GPU named like Intel(R) Arc(TM) A770 Graphics (it has: NVIDIA RTX A4000, "
                    "NVIDIA GeForce RTX 3060); models run on its first, NVIDIA RTX A4000")
    index, note = llama_gpu_index(RTX_3060, [RTX_3060, RTX_A4000], [])
    assert index == 0
    assert note == ("llama.cpp's device list could not be read; NVIDIA GeForce RTX 3060 is taken to be its first GPU")


def test_the_plan_says_when_the_device_had_to_be_guessed(tmp_path: Path, gpu_build: None) -> None:
    settings = Settings()
    settings.model.gpu_device = "a770"
    a770 = Gpu(2, "intel", "Intel(R) Arc(TM) A770 Graphics", 16384, True, "windows-cim")
    plan = inference(settings, tmp_path, RecordingOpener(), [RTX_3060, RTX_A4000, a770], VULKAN).device_plan()
    assert plan.gpu == a770 and "llama.cpp lists no GPU named like" in plan.note
