"""Hybrid retrieval: fused channels, recorded provenance, filters, graph expansion, degradation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.errors import StoreError
from engram.core.retrieval.fusion import fuse

from .conftest import HashingEmbedder, write_tree


def test_rrf_scores_are_weighted_reciprocal_ranks() -> None:
    fused = fuse({"semantic": ["a", "b"], "lexical": ["b", "c"]}, {"semantic": 1.0, "lexical": 2.0}, k=60)
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert scores["c"] == pytest.approx(2 / 62)
    assert [f.id for f in fused] == ["b", "c", "a"]
    assert fused[0].ranks == {"semantic": 2, "lexical": 1}


def notes(engine: Engine) -> dict[str, str]:
    items = {
        "tabs": ("I prefer tabs over spaces in every editor", "general", ["style"]),
        "db": ("We chose LanceDB for storing vectors and full text", "engram", ["storage", "decision"]),
        "deploy": ("Deploy with systemd on the home server", "ops", []),
        "lance2": ("LanceDB folders are copied nightly for backup", "ops", ["storage"]),
    }
    return {k: engine.call("store", {"content": c, "project": p, "tags": t}).result.id
            for k, (c, p, t) in items.items()}


def test_each_hit_records_the_channels_that_found_it(engine: Engine) -> None:
    ids = notes(engine)
    hits = engine.call("search", {"query": "LanceDB vectors", "channels": ["semantic", "lexical"]}).result.hits
    assert hits[0].id == ids["db"]
    assert hits[0].channels == ["semantic", "lexical"]
    semantic_only = engine.call("search", {"query": "LanceDB vectors", "channels": ["semantic"]}).result.hits
    assert all(h.channels == ["semantic"] for h in semantic_only)


def test_filters_restrict_every_channel(engine: Engine) -> None:
    ids = notes(engine)
    by_project = engine.call("search", {"query": "LanceDB", "project": "ops"}).result.hits
    assert by_project[0].id == ids["lance2"]
    assert {h.project for h in by_project} == {"ops"}
    by_tag = engine.call("search", {"query": "LanceDB storage", "tags": ["decision"]}).result.hits
    assert [h.id for h in by_tag] == [ids["db"]]
    two_tags = engine.call("search", {"query": "LanceDB", "tags": ["decision", "style"]}).result.hits
    assert {h.id for h in two_tags} == {ids["db"], ids["tabs"]}
    future = datetime.now(UTC) + timedelta(days=1)
    assert engine.call("search", {"query": "LanceDB", "since": future.isoformat()}).result.hits == []
    assert len(engine.call("search", {"query": "LanceDB", "until": future.isoformat()}).result.hits) >= 2
    assert engine.call("search", {"query": "LanceDB", "kind": "chunk"}).result.hits == []


def test_source_prefix_filter_and_type_filter(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"a/one.md": "# One\n\nalpha beta gamma", "b/two.py": "def alpha():\n    pass\n"})
    engine.call("ingest_path", {"path": str(root)})
    prefix = (root / "a").resolve().as_posix()
    hits = engine.call("search", {"query": "alpha", "source_prefix": prefix}).result.hits
    assert hits and all(h.source.startswith(prefix) for h in hits)
    assert [h.type for h in engine.call("search", {"query": "alpha", "type": "python"}).result.hits] == ["python"]


def test_graph_channel_reaches_chunks_that_share_an_identifier(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "g", {
        "guide.md": "# Guide\n\nTurn on ``SECURE_SSL_REDIRECT`` to force encrypted connections.",
        "settings.py": "# Settings\nSECURE_SSL_REDIRECT = True\n",
        "other.md": "# Other\n\nNothing related here at all.",
    })
    engine.call("ingest_path", {"path": str(root)})
    hits = engine.call("search", {"query": "force encrypted connections", "channels": ["lexical", "graph"]}).result.hits
    by_name = {Path(h.source).name: h for h in hits}
    assert "lexical" in by_name["guide.md"].channels
    assert by_name["settings.py"].channels == ["graph"]
    assert "other.md" not in by_name


def test_neighbors_follow_sequence_and_shared_names(engine: Engine, tmp_path: Path) -> None:
    body = "\n\n".join(f"Paragraph {i} about ``cache_page`` and more words to fill the chunk." * 3
                       for i in range(30))
    root = write_tree(tmp_path / "n", {"long.md": "# Long\n\n" + body, "code.py": "def cache_page():\n    pass\n"})
    engine.call("ingest_path", {"path": str(root)})
    store = engine.store()
    first = min(store.scan(store.memories, "chunk_index = 0 AND source LIKE '%long.md'"), key=lambda r: r["id"])
    result = engine.call("neighbors", {"id": first["id"], "limit": 50}).result
    relations = {n.relation for n in result.items}
    assert "next" in relations and "mentions" in relations
    assert any(Path(n.source).name == "code.py" and n.via == "e:cache_page" for n in result.items)
    second = next(n for n in result.items if n.relation == "next")
    back = engine.call("neighbors", {"id": second.id, "reverse": True, "limit": 50}).result
    assert any(n.id == first["id"] and n.relation == "next^-1" for n in back.items)


def test_without_an_embedding_model_search_degrades_to_a_warning(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as writer:
        writer.call("store", {"content": "tabs over spaces"})
    # The bundled model cannot be built: its folder is blocked by a file of the same name.
    paths.models_dir.write_text("not a folder")
    with Engine(paths, Settings()) as engine:
        out = engine.call("search", {"query": "tabs"})
        assert [h.channels for h in out.result.hits] == [["lexical"]]
        assert out.result.warnings[0] == "semantic channel unavailable: no embedding model is loaded"
        assert "Cannot write to the models folder" in out.result.warnings[1]
        assert out.text.startswith("! semantic channel unavailable")


def test_a_failing_channel_is_reported_and_the_others_answer(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    notes(engine)
    store = engine.store()

    def broken(*args: object, **kwargs: object) -> list:
        raise StoreError("full-text index unreadable (test)")

    monkeypatch.setattr(store, "text_search", broken)
    out = engine.call("search", {"query": "LanceDB"}).result
    assert out.warnings == ["lexical channel failed: full-text index unreadable (test)"]
    assert out.hits and all("lexical" not in h.channels for h in out.hits)
