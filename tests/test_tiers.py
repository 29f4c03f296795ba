"""The fast tier (`bash scripts/test.sh --fast`: every test not marked `slow`) holds every module's unit tests: each
test file keeps tests in it, except the files that exist to run real processes, servers, builds or load."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
#: Files with no test in the fast tier, and why.
WHOLLY_SLOW = {
    "test_benchmark.py": "runs every benchmark suite",
    "test_bundle.py": "builds the installer bundle",
    "test_capture_service.py": "real hook and service processes",
    "test_claude_code_plugin.py": "the real Claude Code from npm in real sessions",
    "test_cli_service.py": "a real service process",
    "test_inspector.py": "the MCP Inspector from npm against real processes",
    "test_mcp_processes.py": "real launcher and service processes",
    "test_reliability.py": "kills, load and a network guard on real processes",
    "test_service_trust.py": "real service processes and their tokens",
    "test_store_caches.py": "many stores opened and dropped",
    "test_vulkan.py": "the Vulkan build (opt-in)",
}


def _marked_slow(decorators: list[ast.expr]) -> bool:
    return any("mark.slow" in ast.unparse(d) for d in decorators)


def fast_tests(path: Path) -> list[str]:
    """The names of the tests in ``path`` that the fast tier runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            if "mark.slow" in ast.unparse(node.value):
                return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_") and not _marked_slow(node.decorator_list)]


def test_every_test_file_keeps_unit_tests_in_the_fast_tier() -> None:
    files = sorted(TESTS.glob("test_*.py"))
    without = {f.name for f in files if not fast_tests(f)}
    assert without == set(WHOLLY_SLOW), (
        f"no fast test (mark fewer slow, or list why): {sorted(without - set(WHOLLY_SLOW))}; "
        f"listed but they have fast tests: {sorted(set(WHOLLY_SLOW) - without)}")


def test_the_reader_of_marks_sees_a_slow_mark_and_its_absence(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text("import pytest\n\n\n@pytest.mark.slow\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    assert fast_tests(sample) == ["test_b"]
    sample.write_text("import pytest\n\npytestmark = [pytest.mark.anyio, pytest.mark.slow]\n\n\ndef test_b():\n"
                      "    pass\n")
    assert fast_tests(sample) == []
