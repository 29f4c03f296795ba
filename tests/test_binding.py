"""A damaged llama.cpp binding is a clear error that says how to repair the installation, never "Unexpected
error": the command line, the MCP tools and the window show it by its type."""

from __future__ import annotations

import sys

import pytest

from engram.core.models.backend import BindingBroken, llama_library

from .conftest import cli_in_process


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import llama_cpp`` fails, as it does when its shared library is missing or built for another CPU."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)


@pytest.mark.usefixtures("broken")
def test_a_binding_that_cannot_be_imported_says_how_to_repair_it() -> None:
    with pytest.raises(BindingBroken) as failed:
        llama_library()
    assert failed.value.title == "llama.cpp could not be loaded"
    assert "llama-cpp-python 0.3.36" in failed.value.message and "`engram bootstrap`" in failed.value.message
    assert "bash scripts/setup-env.sh" in failed.value.message and "reinstall Engram" in failed.value.message


@pytest.mark.usefixtures("broken")
def test_the_command_line_names_the_repair_not_an_unexpected_error(env: dict[str, str]) -> None:
    done = cli_in_process(env, "device")
    assert done.returncode == 1, done.stderr
    assert "llama.cpp could not be loaded" in done.stderr and "engram bootstrap" in done.stderr
    assert "Unexpected" not in done.stderr and "Traceback" not in done.stderr
