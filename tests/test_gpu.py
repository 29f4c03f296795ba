"""GPU detection from recorded tool outputs, the device choice, the build choice — and this machine for real."""

from __future__ import annotations

import json
import sys

import pytest

from engram.core.models.backend import backend_devices, bootstrap_plan, choose_build
from engram.core.models.gpu import (
    Gpu,
    choose,
    detect,
    parse_lspci,
    parse_nvidia_smi,
    parse_system_profiler,
    parse_vulkaninfo,
    parse_windows_cim,
)

NVIDIA_SMI = "0, NVIDIA GeForce RTX 3060, 12288\n1, NVIDIA RTX A4000, 16376\n"

LSPCI = """\
00:02.0 VGA compatible controller [0300]: Intel Corporation Alder Lake-P GT2 [Iris Xe Graphics] [8086:46a6] (rev 0c)
01:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX] [1002:744c] (rev c8)
02:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd NVMe SSD [144d:a80a]
"""

VULKANINFO = """\
==========
VULKANINFO
==========

Devices:
========
GPU0:
	apiVersion         = 1.3.274
	vendorID           = 0x1002
	deviceID           = 0x744c
	deviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
	deviceName         = AMD Radeon RX 7900 XTX (RADV NAVI31)
GPU1:
	vendorID           = 0x8086
	deviceType         = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU
	deviceName         = Intel(R) Graphics (ADL GT2)
GPU2:
	vendorID           = 0x10005
	deviceType         = PHYSICAL_DEVICE_TYPE_CPU
	deviceName         = llvmpipe (LLVM 17.0.6, 256 bits)
"""

SYSTEM_PROFILER_APPLE = json.dumps({"SPDisplaysDataType": [
    {"_name": "Apple M2 Pro", "sppci_model": "Apple M2 Pro", "sppci_vendor": "sppci_vendor_Apple", "sppci_cores": "19"}]})
SYSTEM_PROFILER_INTEL_MAC = json.dumps({"SPDisplaysDataType": [
    {"sppci_model": "Intel UHD Graphics 630", "spdisplays_vram_shared": "1536 MB", "spdisplays_vendor": "Intel"},
    {"sppci_model": "AMD Radeon Pro 5500M", "spdisplays_vram": "8 GB", "spdisplays_vendor": "sppci_vendor_amd"}]})

WINDOWS_CIM = json.dumps([
    {"Name": "NVIDIA GeForce RTX 4070", "AdapterRAM": 4293918720, "AdapterCompatibility": "NVIDIA"},
    {"Name": "Intel(R) UHD Graphics 770", "AdapterRAM": 1073741824, "AdapterCompatibility": "Intel Corporation"},
])


def test_nvidia_smi() -> None:
    assert parse_nvidia_smi(NVIDIA_SMI) == [Gpu(0, "nvidia", "NVIDIA GeForce RTX 3060", 12288, True, "nvidia-smi"),
                                           Gpu(1, "nvidia", "NVIDIA RTX A4000", 16376, True, "nvidia-smi")]
    assert parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the driver.") == []


def test_lspci_with_sysfs_memory() -> None:
    gpus = parse_lspci(LSPCI, lambda slot: 24560 if slot == "01:00.0" else None)
    assert [(g.vendor, g.discrete, g.memory_mb) for g in gpus] == [("intel", False, None), ("amd", True, 24560)]
    assert gpus[1].name.startswith("Advanced Micro Devices")


def test_vulkaninfo_skips_software_devices() -> None:
    gpus = parse_vulkaninfo(VULKANINFO)
    assert [(g.vendor, g.discrete, g.name) for g in gpus] == [
        ("amd", True, "AMD Radeon RX 7900 XTX (RADV NAVI31)"), ("intel", False, "Intel(R) Graphics (ADL GT2)")]


def test_macos_apple_gpus_share_system_memory_and_intel_macs_report_vram() -> None:
    (apple,) = parse_system_profiler(SYSTEM_PROFILER_APPLE, system_memory_mb=32768)
    assert (apple.vendor, apple.memory_mb, apple.discrete) == ("apple", 32768, True)
    intel, amd = parse_system_profiler(SYSTEM_PROFILER_INTEL_MAC, system_memory_mb=16384)
    assert (intel.discrete, amd.discrete, amd.memory_mb) == (False, True, 8192)


def test_windows_cim_treats_a_saturated_32bit_memory_field_as_unknown() -> None:
    nvidia, intel = parse_windows_cim(WINDOWS_CIM)
    assert (nvidia.vendor, nvidia.discrete, nvidia.memory_mb) == ("nvidia", True, None)
    assert (intel.vendor, intel.discrete, intel.memory_mb) == ("intel", False, 1024)


def test_detect_merges_sources_without_duplicates() -> None:
    outputs = {"nvidia-smi": "0, NVIDIA GeForce RTX 3060, 12288\n",
               "lspci": "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA106 [GeForce RTX 3060] "
                        "[10de:2504] (rev a1)\n",
               "vulkaninfo": "GPU0:\n\tvendorID = 0x10de\n\tdeviceType = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n"
                             "\tdeviceName = NVIDIA GeForce RTX 3060\n"}
    gpus = detect(run=lambda cmd: outputs.get(cmd[0]), platform="linux", vram=lambda slot: None)
    assert [(g.index, g.name, g.source) for g in gpus] == [(0, "NVIDIA GeForce RTX 3060", "nvidia-smi")]


@pytest.mark.parametrize(("setting", "expected"), [
    ("auto", "big"), ("cpu", None), ("0", "small"), ("integrated", "integrated thing"), ("nothing-like-it", None),
])
def test_choose(setting: str, expected: str | None) -> None:
    gpus = [Gpu(0, "nvidia", "small", 8192, True, "t"), Gpu(1, "amd", "big", 24576, True, "t"),
            Gpu(2, "intel", "integrated thing", None, False, "t")]
    chosen = choose(gpus, setting)
    assert (chosen.name if chosen else None) == expected
    assert choose([Gpu(0, "intel", "igpu", None, False, "t")], "auto") is None


@pytest.mark.parametrize(("os_name", "machine", "gpu", "backend"), [
    ("darwin", "arm64", Gpu(0, "apple", "Apple M2", 16384, True, "t"), "metal"),
    ("darwin", "x86_64", None, "metal"),
    ("linux", "x86_64", Gpu(0, "amd", "RX 7900", 24576, True, "t"), "vulkan"),
    ("win32", "AMD64", Gpu(0, "nvidia", "RTX 4070", 12288, True, "t"), "vulkan"),
    ("linux", "aarch64", Gpu(0, "other", "Mali", None, True, "t"), "cpu"),
    ("linux", "x86_64", None, "cpu"),
])
def test_build_choice_matrix(os_name: str, machine: str, gpu: Gpu | None, backend: str) -> None:
    assert choose_build(gpu, os_name, machine).backend == backend


def test_bootstrap_plans() -> None:
    vulkan = bootstrap_plan(choose_build(Gpu(0, "amd", "RX", 8192, True, "t"), "linux", "x86_64"), python="py")
    assert not vulkan.prebuilt and vulkan.env == {"CMAKE_ARGS": "-DGGML_VULKAN=on -DGGML_BACKEND_DL=on"}
    assert vulkan.command[:4] == ["py", "-m", "pip", "install"] and "--no-binary" in vulkan.command
    metal = bootstrap_plan(choose_build(None, "darwin", "arm64"), python="py")
    assert metal.prebuilt and metal.command[-1].endswith("/whl/metal")


def test_this_machine_for_real() -> None:
    gpus = detect()
    devices = backend_devices()
    assert any(d.kind == "cpu" and d.memory_total_mb > 0 for d in devices)
    if sys.platform == "linux" and not gpus:
        assert choose(gpus, "auto") is None and choose_build(None).backend == "cpu"
