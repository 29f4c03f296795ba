"""What every suite shares: run options, the machine's description, engines on cached folders, results."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.core import Engine, Paths, Settings
from engram.core.embedding import Embedder

ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Run:
    """Options every suite takes (see ``python -m benchmark --help``)."""

    quick: bool = False
    seed: int = 7
    cache: Path = ROOT / ".cache"
    results: Path = ROOT / "results"

    def workspace(self, name: str) -> Path:
        return self.cache / ("quick-" + name if self.quick else name)


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


def engine_at(folder: Path, settings: Settings | None = None, embedder: Embedder | None = None) -> Engine:
    """An engine on the data folder ``folder/data`` (settings and logs beside it); ``embedder`` shares
    another engine's loaded model. The corpora lie in the cache folder beside ``folder``, which need not be
    under the home folder: ingest may read there too."""
    settings = (settings or Settings()).model_copy(deep=True)
    settings.ingest.allowed_roots = [*settings.ingest.allowed_roots, str(folder.parent.resolve())]
    return Engine(Paths(folder / "data", folder / "config", folder / "logs"), settings, embedder=embedder)


def fetch_sdist(requirement: str, cache: Path) -> tuple[Path, str]:
    """Download (once, with pip, from the package registry) and unpack ``requirement``'s source
    distribution; returns (its folder, the archive's SHA256)."""
    target = cache / "corpus"
    target.mkdir(parents=True, exist_ok=True)
    name = requirement.replace("==", "-").lower()
    found = [a for a in sorted(target.glob("*.tar.gz")) if a.name.lower().startswith(name)]
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


def result_folder(run: Run, suite: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = run.results / f"{suite}{'-quick' if run.quick else ''}-{stamp}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_result(folder: Path, result: dict[str, Any], summary: str) -> Path:
    """Write ``result.json`` and ``summary.md`` into ``folder`` (plots are written there by the suite)."""
    (folder / "result.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (folder / "summary.md").write_text(summary)
    return folder


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0–1) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]
