"""What every benchmark shares: the machine's description, engines on cached data folders, results."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import tarfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from engram.core import Engine, Paths, Settings

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache"
RESULTS = ROOT / "results"


def machine() -> dict[str, Any]:
    """The machine a result was measured on."""
    import llama_cpp

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"os": f"{platform.system()} {platform.release()}", "cpu": cpu, "cpu_count": os.cpu_count(),
            "memory_gb": mem, "python": sys.version.split()[0], "llama_cpp_python": llama_cpp.__version__,
            "llama_cpp_build": llama_cpp.llama_print_system_info().decode().strip()}


def open_engine(name: str, settings: Settings | None = None) -> Engine:
    """An engine on the benchmark's own cached data folder ``benchmark/.cache/<name>``."""
    base = CACHE / name
    return Engine(Paths(base / "data", base / "config", base / "logs"), settings or Settings())


def fetch_sdist(requirement: str) -> tuple[Path, str]:
    """Download (once) and unpack the source distribution of ``requirement``; returns (folder, sha256)."""
    target = CACHE / "corpus"
    target.mkdir(parents=True, exist_ok=True)
    archives = sorted(target.glob("*.tar.gz"))
    name = requirement.replace("==", "-").lower()
    found = [a for a in archives if a.name.lower().startswith(name)]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        requirement, "-d", str(target)], check=True)
        found = [a for a in sorted(target.glob("*.tar.gz")) if a.name.lower().startswith(name)]
    archive = found[0]
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    folder = target / archive.name[: -len(".tar.gz")]
    if not folder.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    return folder, digest


def write_result(suite: str, result: dict[str, Any], summary: str) -> Path:
    """Write ``result.json`` and ``summary.md`` under ``benchmark/results/<suite>-<UTC timestamp>/``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = RESULTS / f"{suite}-{stamp}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (folder / "summary.md").write_text(summary)
    return folder
