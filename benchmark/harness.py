"""The harness: runs one registered suite and writes its result in the one envelope every result has.

A suite's module provides ``run_suite(run, options) -> dict`` (its figures; plots go into ``run.folder``) and
``summary(envelope) -> str`` (the Markdown of ``summary.md``, which ``python -m benchmark report`` also embeds in
RESULTS.md). The harness makes the folder, times the run, records the settings and models the suite's engines
used (``common.note_settings`` / ``common.note_model``) and writes::

    {"envelope": 1, "suite", "quick", "seed", "options", "commit", "dirty", "engram_version", "settings",
     "models", "machine", "started", "seconds", "result"}

``settings`` holds the effective settings of the first engine the suite opened (``effective``) and, for each
other engine whose settings differed, the keys that differed (``variants``). ``models`` names every model file a
suite loaded with its SHA256 (the bundled embedding model is pinned by the manifest and verified when loaded).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import common
from .common import ROOT, Run

ENVELOPE_VERSION = 1
#: What a run writes or caches: neither makes the measured tree dirty.
_NOT_SOURCE = ("benchmark/results/", "benchmark/.cache/")


def source_state(repo: Path = ROOT.parent) -> tuple[str | None, bool | None]:
    """(the commit checked out, whether the tree differs from it outside the results and the cache); ``(None,
    None)`` where git or the repository is not there (an unpacked archive)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                                timeout=30, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=normal"], cwd=repo,
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    changed = [line[3:] for line in status.splitlines() if line.strip()]
    return commit, any(not path.startswith(_NOT_SOURCE) for path in changed)


def engram_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("engram")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def plain(value: Any) -> Any:
    """``value`` with paths as strings and dataclasses as dicts, for JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def new_folder(results: Path, suite: str, quick: bool) -> Path:
    """A fresh result folder ``<suite>[-quick]-<UTC timestamp>`` (a suffix where one of that second exists)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{suite}{'-quick' if quick else ''}-{stamp}"
    folder, n = results / base, 1
    while folder.exists():
        n += 1
        folder = results / f"{base}-{n}"
    folder.mkdir(parents=True)
    return folder


def run_one(module: str, name: str, options: Any, *, quick: bool, seed: int, cache: Path,
            results: Path) -> Path:
    """Run suite ``name`` (module ``benchmark.<module>``) with ``options``; returns its result folder.

    Raises whatever the suite raises (the folder is then left holding what the suite wrote so far, and no
    result.json: a half run is never mistaken for a result).
    """
    suite = importlib.import_module(f"benchmark.{module}")
    folder = new_folder(results, name, quick)
    run = Run(quick=quick, seed=seed, cache=cache, results=results, folder=folder)
    record = common.Record()
    started = datetime.now(UTC)
    clock = time.perf_counter()
    with common.recording(record):
        result = suite.run_suite(run, options)
    seconds = time.perf_counter() - clock
    commit, dirty = source_state()
    envelope = {"envelope": ENVELOPE_VERSION, "suite": name, "quick": quick, "seed": seed, "options": plain(options),
                "commit": commit, "dirty": dirty, "engram_version": engram_version(),
                "settings": record.settings_json(), "models": record.models_json(), "machine": common.machine(),
                "started": started.isoformat(timespec="seconds"), "seconds": round(seconds, 1),
                "result": plain(result)}
    (folder / "result.json").write_text(json.dumps(envelope, indent=2, default=str) + "\n", encoding="utf-8")
    (folder / "summary.md").write_text(suite.summary(envelope), encoding="utf-8")
    return folder


def read_envelope(folder: Path) -> dict[str, Any]:
    """The envelope in ``folder/result.json``.

    Raises:
        ValueError: no result.json there, or one without the envelope (the message says which).
    """
    path = folder / "result.json"
    if not path.is_file():
        raise ValueError(f"{folder}: no result.json (an unfinished or foreign folder)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("envelope") != ENVELOPE_VERSION:
        raise ValueError(f"{path}: not a result envelope (version {ENVELOPE_VERSION}); re-run the suite")
    return data
