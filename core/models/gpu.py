"""Finding the GPUs of this computer from what the OS offers, without importing heavy libraries.

Each source is a small command whose output is parsed by a pure function (tested against recorded
outputs): ``nvidia-smi`` (NVIDIA), ``system_profiler`` (macOS), ``lspci`` plus sysfs (Linux: AMD,
Intel, others), ``vulkaninfo --summary`` (any Vulkan device), and PowerShell's CIM query (Windows).
``choose`` picks the device for inference: ``auto`` = the discrete GPU with the most memory (Apple
GPUs count: their memory is unified), ``cpu``, an index, or part of a device's name.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

Runner = Callable[[list[str]], str | None]
VENDORS = {"0x10de": "nvidia", "10de": "nvidia", "0x1002": "amd", "1002": "amd", "0x8086": "intel", "8086": "intel",
           "0x106b": "apple", "106b": "apple"}


@dataclass(frozen=True)
class Gpu:
    index: int
    vendor: str  # nvidia | amd | intel | apple | other
    name: str
    memory_mb: int | None
    discrete: bool
    source: str  # the tool it was found with


def run_tool(command: list[str], timeout: float = 5.0) -> str | None:
    """A command's stdout, or ``None`` when it is missing, fails or hangs."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


# ------------------------------------------------------------------------ parsers (pure)

def parse_nvidia_smi(text: str) -> list[Gpu]:
    """``nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits``."""
    gpus: list[Gpu] = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3 and parts[0].isdigit():
            memory = int(float(parts[2])) if re.match(r"^\d+(\.\d+)?$", parts[2]) else None
            gpus.append(Gpu(int(parts[0]), "nvidia", parts[1], memory, True, "nvidia-smi"))
    return gpus


def _size_mb(text: str) -> int | None:
    m = re.match(r"^\s*([\d.]+)\s*(MB|GB|TB)", text or "", re.I)
    if not m:
        return None
    return int(float(m.group(1)) * {"mb": 1, "gb": 1024, "tb": 1024 * 1024}[m.group(2).lower()])


def parse_system_profiler(text: str, system_memory_mb: int | None) -> list[Gpu]:
    """``system_profiler SPDisplaysDataType -json`` (macOS). Apple GPUs share the system memory."""
    try:
        items = json.loads(text).get("SPDisplaysDataType", [])
    except ValueError:
        return []
    gpus: list[Gpu] = []
    for i, item in enumerate(items):
        name = item.get("sppci_model") or item.get("_name") or "GPU"
        vendor_text = (item.get("sppci_vendor") or item.get("spdisplays_vendor") or "").lower()
        vendor = next((v for v in ("apple", "amd", "nvidia", "intel") if v in vendor_text or v in name.lower()), "other")
        vram = _size_mb(item.get("spdisplays_vram") or item.get("spdisplays_vram_shared") or item.get("_spdisplays_vram")
                        or "")
        if vendor == "apple":
            gpus.append(Gpu(i, vendor, name, system_memory_mb, True, "system_profiler"))
        else:
            discrete = vendor in ("amd", "nvidia") and "spdisplays_vram_shared" not in item
            gpus.append(Gpu(i, vendor, name, vram, discrete, "system_profiler"))
    return gpus


_LSPCI = re.compile(r"^(?P<slot>[0-9a-f:.]+) (?:VGA compatible controller|3D controller|Display controller) "
                    r"\[03\d\d\]: (?P<name>.*?) \[(?P<vendor>[0-9a-f]{4}):[0-9a-f]{4}\]", re.I)


def parse_lspci(text: str, vram_mb: Callable[[str], int | None]) -> list[Gpu]:
    """``lspci -nn`` lines of display controllers; ``vram_mb(slot)`` reads dedicated memory (sysfs)."""
    gpus: list[Gpu] = []
    for line in text.splitlines():
        m = _LSPCI.match(line.strip())
        if not m:
            continue
        vendor = VENDORS.get(m.group("vendor").lower(), "other")
        memory = vram_mb(m.group("slot"))
        discrete = vendor in ("nvidia", "amd") and (memory is None or memory >= 1024)
        gpus.append(Gpu(len(gpus), vendor, m.group("name").strip(), memory, discrete, "lspci"))
    return gpus


def sysfs_vram_mb(slot: str, root: Path = Path("/sys/bus/pci/devices")) -> int | None:
    """Dedicated memory of a PCI GPU from sysfs (AMD exposes mem_info_vram_total)."""
    full = slot if slot.count(":") == 2 else f"0000:{slot}"
    try:
        return int((root / full / "mem_info_vram_total").read_text().strip()) // 2**20
    except (OSError, ValueError):
        return None


def parse_vulkaninfo(text: str) -> list[Gpu]:
    """``vulkaninfo --summary``: one ``GPUn:`` block per device (no memory in the summary)."""
    gpus: list[Gpu] = []
    block: dict[str, str] = {}

    def flush() -> None:
        if block.get("deviceName"):
            kind = block.get("deviceType", "")
            if "CPU" in kind:
                return
            vendor = VENDORS.get(block.get("vendorID", "").lower(), "other")
            gpus.append(Gpu(len(gpus), vendor, block["deviceName"], None, "DISCRETE" in kind, "vulkaninfo"))

    for line in text.splitlines():
        if re.match(r"^\s*GPU\d+:\s*$", line):
            flush()
            block = {}
        elif "=" in line:
            key, _, value = line.partition("=")
            block[key.strip()] = value.strip()
    flush()
    return gpus


def parse_windows_cim(text: str) -> list[Gpu]:
    """PowerShell ``Get-CimInstance Win32_VideoController | Select Name,AdapterRAM,AdapterCompatibility |
    ConvertTo-Json``. AdapterRAM is a 32-bit field: values of 4 GB and more are not reported."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    gpus: list[Gpu] = []
    for item in items:
        name = str(item.get("Name") or "GPU")
        maker = str(item.get("AdapterCompatibility") or "").lower()
        vendor = next((v for v in ("nvidia", "amd", "intel") if v in maker or v in name.lower()),
                      "amd" if "advanced micro devices" in maker or "radeon" in name.lower() else "other")
        ram = item.get("AdapterRAM")
        memory = int(ram) // 2**20 if isinstance(ram, (int, float)) and ram > 0 else None
        if memory is not None and memory >= 4095:
            memory = None  # saturated 32-bit field
        discrete = vendor in ("nvidia", "amd") and "basic" not in name.lower()
        gpus.append(Gpu(len(gpus), vendor, name, memory, discrete, "windows-cim"))
    return gpus


# --------------------------------------------------------------------------- detection

def detect(run: Runner = run_tool, platform: str = sys.platform, system_memory_mb: int | None = None,
           vram: Callable[[str], int | None] = sysfs_vram_mb) -> list[Gpu]:
    """Every GPU this computer reports, best-described source first, without duplicates."""
    found: list[Gpu] = []
    if (out := run(["nvidia-smi", "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"])):
        found += parse_nvidia_smi(out)
    if platform == "darwin":
        if (out := run(["system_profiler", "SPDisplaysDataType", "-json"])):
            found += parse_system_profiler(out, system_memory_mb)
    elif platform == "win32":
        cmd = ["powershell", "-NoProfile", "-Command",
               "Get-CimInstance Win32_VideoController | Select-Object Name,AdapterRAM,AdapterCompatibility | "
               "ConvertTo-Json"]
        if (out := run(cmd)):
            found += [g for g in parse_windows_cim(out) if not _known(g, found)]
    else:
        if (out := run(["lspci", "-nn"])):
            found += [g for g in parse_lspci(out, vram) if not _known(g, found)]
    if (out := run(["vulkaninfo", "--summary"])):
        found += [g for g in parse_vulkaninfo(out) if not _known(g, found)]
    return [replace(g, index=i) for i, g in enumerate(found)]


def _known(gpu: Gpu, found: list[Gpu]) -> bool:
    """Whether another source already reported this device (same vendor, overlapping name)."""
    words = set(re.findall(r"\w+", gpu.name.lower())) - {"nvidia", "amd", "intel", "corporation", "graphics"}
    for other in found:
        if other.vendor == gpu.vendor and words & set(re.findall(r"\w+", other.name.lower())):
            return True
    return False


def choose(gpus: list[Gpu], setting: str = "auto") -> Gpu | None:
    """The device to offload to, or ``None`` for the CPU.

    ``setting``: ``auto`` (the discrete GPU with the most memory), ``cpu``, a device index, or part of a
    device's name (case-insensitive).
    """
    setting = setting.strip().lower()
    if setting == "cpu" or not gpus:
        return None
    if setting == "auto":
        discrete = [g for g in gpus if g.discrete]
        return max(discrete, key=lambda g: (g.memory_mb or 0, -g.index)) if discrete else None
    if setting.isdigit():
        return next((g for g in gpus if g.index == int(setting)), None)
    return next((g for g in gpus if setting in g.name.lower()), None)
