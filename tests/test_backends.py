"""Loading llama.cpp's backends: a build with built-in backends is left alone; a build whose backends are files
(``GGML_BACKEND_DL``, as the bundle carries) gets them loaded from its folder, and says when a GPU backend it
carries could not load (no driver), so models run on the CPU."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engram.core.errors import ModelError
from engram.core.models import backend
from engram.core.models.backend import load_backends, loaded_backends


def fake_ggml(built_in: list[str], loadable: list[str]) -> tuple[Any, list[str]]:
    """A stand-in for libggml (the ctypes seam): ``built_in`` backends are registered from the start;
    ``loadable`` ones register when ``ggml_backend_load_all_from_path`` is called. Returns it and the folders
    it was asked to load from."""
    registry = list(built_in)
    asked: list[str] = []

    def fn(body: Callable[..., Any]) -> Callable[..., Any]:
        return body  # ctypes sets restype/argtypes on it: plain functions take attributes

    def load_all(path: bytes) -> None:
        asked.append(path.decode())
        registry.extend(loadable)

    lib = SimpleNamespace(
        ggml_backend_reg_count=fn(lambda: len(registry)),
        ggml_backend_reg_get=fn(lambda i: i),
        ggml_backend_reg_name=fn(lambda i: registry[i].encode()),
        ggml_backend_load_all_from_path=fn(load_all),
    )
    return lib, asked


def test_a_build_with_built_in_backends_is_left_alone(tmp_path: Path) -> None:
    lib, asked = fake_ggml(["CPU"], ["Vulkan"])
    loaded = load_backends(lib, tmp_path)
    assert loaded.names == ("CPU",) and not loaded.dynamic and loaded.note == "" and asked == []


def test_a_dynamic_build_loads_its_backends_from_its_folder(tmp_path: Path) -> None:
    (tmp_path / "libggml-cpu.so").write_bytes(b"")
    (tmp_path / "libggml-vulkan.so").write_bytes(b"")
    lib, asked = fake_ggml([], ["CPU", "Vulkan"])
    loaded = load_backends(lib, tmp_path)
    assert asked == [str(tmp_path)] and loaded.names == ("CPU", "Vulkan") and loaded.dynamic
    assert loaded.note == ""


def test_a_gpu_backend_without_its_driver_falls_back_to_the_cpu_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "libggml-cpu.so").write_bytes(b"")
    (tmp_path / "ggml-vulkan.dll").write_bytes(b"")  # Windows names its modules without the lib prefix
    lib, _ = fake_ggml([], ["CPU"])  # the Vulkan module did not load: libvulkan is missing
    loaded = load_backends(lib, tmp_path)
    assert loaded.names == ("CPU",)
    assert "carries the Vulkan backend, but it could not be loaded" in loaded.note
    assert "models run on the CPU" in loaded.note and "driver" in loaded.note


def test_a_dynamic_build_without_a_cpu_backend_is_refused_with_the_fix(tmp_path: Path) -> None:
    lib, _ = fake_ggml([], [])
    with pytest.raises(ModelError, match=r"no CPU backend in .*engram bootstrap"):
        load_backends(lib, tmp_path)


def test_the_installed_build_has_its_cpu_backend_and_loads_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "_loaded", None)
    calls: list[Path] = []
    real = backend.load_backends

    def counting(lib: Any, lib_dir: Path) -> Any:
        calls.append(lib_dir)
        return real(lib, lib_dir)

    monkeypatch.setattr(backend, "load_backends", counting)
    first, second = loaded_backends(), loaded_backends()
    assert "CPU" in first.names and first is second and len(calls) == 1
    assert calls[0].name == "lib" and calls[0].parent.name == "llama_cpp"
