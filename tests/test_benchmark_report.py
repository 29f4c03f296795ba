"""RESULTS.md's generated parts come from the result files, every published folder holds the envelope, and the
benchmark imports nothing from the tests."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from benchmark import report

ROOT = Path(__file__).resolve().parents[1]


def test_results_md_is_what_the_result_files_give_and_every_folder_is_published(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert report.main(check=True) == 0, capsys.readouterr().err


def test_a_stale_block_is_rebuilt_and_an_unpublished_folder_is_reported_then_pruned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    (results / "budget-20990101T000000Z").mkdir(parents=True)
    stat = {"p50_ms": 1.0, "p95_ms": 2.0, "n": 3}
    envelope = {"envelope": 1, "suite": "budget", "quick": False, "seed": 7, "commit": "0" * 40, "dirty": False,
                "options": {"lookups": str(ROOT / "benchmark" / "django-lookups.json")}, "engram_version": "0.1.0",
                "settings": None, "models": {}, "machine": {"cpu": "a CPU", "cpu_count": 2},
                "started": "2099-01-01T00:00:00+00:00", "seconds": 1.5,
                "result": {"corpus": "django-5.2.8", "searches": 3, "queries": 3, "repeats": 1, "budget_off": stat,
                           "budget_on": stat, "used_up_run": stat, "added_ms": {"p50": 0.0, "p95": 0.0},
                           "ledger_ops": {"reserve": stat}}}
    (results / "budget-20990101T000000Z" / "result.json").write_text(json.dumps(envelope))
    (results / "recall-20990101T000000Z").mkdir()  # a folder no one published
    md = tmp_path / "RESULTS.md"
    md.write_text("# Results\n\nProse.\n\n<!-- results: budget-20990101T000000Z -->\nstale\n<!-- end results -->\n")
    monkeypatch.setattr(report, "RESULTS", results)
    monkeypatch.setattr(report, "RESULTS_MD", md)
    assert report.main(check=True) == 1
    err = capsys.readouterr().err
    assert "RESULTS.md is not what the result files give" in err and "results/recall-20990101T000000Z is not" in err
    assert report.main() == 0
    assert "unpublished (not in RESULTS.md; --prune removes it): results/recall-20990101T000000Z" in \
        capsys.readouterr().out
    text = md.read_text()
    assert "stale" not in text and "`python -m benchmark budget` → [results/budget-20990101T000000Z]" in text
    assert "| budget off |" in text and "commit 0000000000, Engram 0.1.0" in text
    assert report.main(prune=True) == 0 and not (results / "recall-20990101T000000Z").exists()
    assert report.main(check=True) == 0


def test_the_benchmark_and_the_stand_ins_import_nothing_from_the_tests() -> None:
    for folder in ("benchmark", "standins"):
        for path in sorted((ROOT / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                assert not any(n == "tests" or n.startswith("tests.") for n in names), f"{path} imports {names}"
