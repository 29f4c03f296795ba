"""RESULTS.md's generated parts, rebuilt from the result files: ``python -m benchmark report [--check] [--prune]``.

Between ``<!-- results: FOLDER -->`` and ``<!-- end results -->`` RESULTS.md holds what the suite's ``summary``
renders from ``results/FOLDER/result.json`` (its title left out, its links pointed into the folder), under a line
saying what ran it: the command, the commit, the machine, when and how long. Everything else in RESULTS.md is
prose written by people. ``--check`` changes nothing and fails when RESULTS.md differs from what the result files
give or when a result folder is not published (not named in RESULTS.md); ``--prune`` deletes unpublished folders.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from .common import ROOT
from .harness import read_envelope
from .suites import SUITES

RESULTS_MD = ROOT / "RESULTS.md"
RESULTS = ROOT / "results"
_BLOCK = re.compile(r"(<!-- results: (?P<folder>[\w.-]+) -->\n)(?P<body>.*?)(<!-- end results -->)", re.S)
_LINK = re.compile(r"\]\((?!https?:|/|#|results/)([^)\s]+)\)")


def command_line(envelope: dict[str, Any]) -> str:
    """The command that makes a run like this one (options left at their defaults are left out)."""
    suite = SUITES[envelope["suite"]]
    words = ["python", "-m", "benchmark", envelope["suite"]]
    given = envelope.get("options") or {}
    defaults = suite.options()
    for f in fields(defaults):
        value, default = given.get(f.name), getattr(defaults, f.name)
        default = [str(v) for v in default] if isinstance(default, list) else (
            str(default) if isinstance(default, Path) else default)
        if value is None or _shown(value) == _shown(default):
            continue
        for one in value if isinstance(value, list) else [value]:
            words += [f"--{f.name.replace('_', '-')}", str(_shown(one))]
    if envelope.get("quick"):
        words.append("--quick")
    if envelope.get("seed") not in (None, 7):
        words += ["--seed", str(envelope["seed"])]
    return " ".join(words)


def _shown(value: Any) -> Any:
    """An option as the command line shows it: a file of this repository's ``benchmark/`` folder relative to the
    repository, wherever the checkout that recorded it was (``/work/main/benchmark/x.json`` and a fresh clone's
    ``/tmp/…/benchmark/x.json`` are both ``benchmark/x.json``), a data file of ``shared/data`` as
    ``../shared/data/NAME``; anything else as recorded."""
    if isinstance(value, list):
        return [_shown(v) for v in value]
    if not isinstance(value, str) or not value.startswith("/"):
        return value
    parts = Path(value).parts
    if "benchmark" in parts:
        tail = parts[len(parts) - parts[::-1].index("benchmark"):]
        if tail and ROOT.joinpath(*tail).exists():
            return "/".join(("benchmark", *tail))
    if len(parts) > 3 and parts[-3:-1] == ("shared", "data"):  # the data files beside the checkout
        return "../shared/data/" + parts[-1]
    return value


def provenance(folder: str, envelope: dict[str, Any]) -> str:
    machine = envelope.get("machine") or {}
    commit = (envelope.get("commit") or "unknown")[:10] + (" with uncommitted changes" if envelope.get("dirty") else "")
    return (f"`{command_line(envelope)}` → [results/{folder}](results/{folder}/summary.md): commit {commit}, "
            f"Engram {envelope.get('engram_version')}, {machine.get('cpu', '?')} ({machine.get('cpu_count', '?')} "
            f"cores), started {envelope.get('started')}, {envelope.get('seconds')} s.")


def render(folder: str) -> str:
    """The generated block for result folder ``folder``.

    Raises:
        ValueError: the folder holds no result envelope.
    """
    envelope = read_envelope(RESULTS / folder)
    suite = SUITES[envelope["suite"]]
    text = importlib.import_module(f"benchmark.{suite.module}").summary(envelope)
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    body = _LINK.sub(lambda m: f"](results/{folder}/{m.group(1)})", "\n".join(lines).rstrip())
    return f"{provenance(folder, envelope)}\n\n{body}\n"


def regenerate(text: str) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + render(m.group("folder")) + m.group(4), text)


def published(text: str) -> set[str]:
    """Result folders RESULTS.md names (a generated block or a link)."""
    return set(re.findall(r"results/([\w.-]+?)(?:/|\))", text)) | {m.group("folder") for m in _BLOCK.finditer(text)}


def main(check: bool = False, prune: bool = False) -> int:
    text = RESULTS_MD.read_text(encoding="utf-8")
    try:
        fresh = regenerate(text)
    except ValueError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 1
    named = published(fresh)
    folders = sorted(p.name for p in RESULTS.iterdir() if p.is_dir()) if RESULTS.is_dir() else []
    unpublished = [f for f in folders if f not in named]
    missing = sorted(f for f in named if not (RESULTS / f).is_dir())
    problems = [f"RESULTS.md names results/{f}, which is not there" for f in missing]
    for f in folders:
        if f in named:
            try:
                read_envelope(RESULTS / f)
            except ValueError as exc:
                problems.append(str(exc))
    if prune:
        for f in unpublished:
            shutil.rmtree(RESULTS / f)
            print(f"removed unpublished results/{f}")
        unpublished = []
    if check:
        if fresh != text:
            problems.append("RESULTS.md is not what the result files give: run `python -m benchmark report`")
        problems += [f"results/{f} is not published in RESULTS.md (publish it or remove it: "
                     "`python -m benchmark report --prune`)" for f in unpublished]
    else:
        if fresh != text:
            RESULTS_MD.write_text(fresh, encoding="utf-8")
            print("RESULTS.md regenerated")
        else:
            print("RESULTS.md is up to date")
        for f in unpublished:
            print(f"unpublished (not in RESULTS.md; --prune removes it): results/{f}")
    for p in problems:
        print(f"report: {p}", file=sys.stderr)
    return 1 if problems else 0
