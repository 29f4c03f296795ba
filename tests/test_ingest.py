"""Ingest: chunks, edges and source rows; incremental re-runs; skips counted with reasons."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.core import Engine
from engram.core.errors import IngestError, InvalidArgument
from engram.core.ingest.listing import source_key
from engram.core.store import inspection
from engram.core.store.schema import SOURCE_PREFIX

from .conftest import HashingEmbedder, write_tree

DOC = """\
Caching
=======

The cache framework stores rendered pages. Use ``cache_page`` to cache a view.

Per-site cache
--------------

Add ``UpdateCacheMiddleware`` and ``FetchFromCacheMiddleware`` to the middleware list.
"""

CODE = '''\
"""Cache middleware."""


class UpdateCacheMiddleware:
    """Stores responses in the cache."""

    def process_response(self, request, response):
        return response
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "proj", {"docs/cache.txt": DOC + "\n" + "Filler paragraph.\n\n" * 80,
                                          "src/middleware.py": CODE,
                                          "README.md": "# Proj\n\nA small project about caching.\n"})


def ingest(engine: Engine, root: Path, **extra: object) -> object:
    return engine.call("ingest_path", {"path": str(root), "project": "proj", **extra}).result


def test_files_become_chunks_with_sources_and_edges(engine: Engine, project: Path) -> None:
    report = ingest(engine, project)
    assert (report.files_listed, report.files_indexed, report.files_unchanged) == (3, 3, 0)
    store = engine.store()
    assert inspection.count(store, "sources") == 3
    assert inspection.count(store, "memories") == report.chunks_written
    doc = source_key((project / "docs/cache.txt").resolve())
    chunks = sorted(inspection.rows(store, "memories", f"source = '{doc}'"), key=lambda r: r["chunk_index"])
    assert [c["kind"] for c in chunks] == ["chunk"] * len(chunks)
    relations = {(e["relation"]) for e in inspection.rows(store, "edges", None)}
    assert relations == {"part_of", "mentions", "next"}
    part_of = inspection.rows(store, "edges", f"dst = '{SOURCE_PREFIX}{doc}'")
    assert {e["src"] for e in part_of} == {c["id"] for c in chunks}
    mentions = {e["dst"] for e in inspection.rows(store, "edges", "relation = 'mentions'")}
    assert "e:updatecachemiddleware" in mentions and "e:cache_page" in mentions


def test_rerun_reads_and_embeds_nothing_when_nothing_changed(engine: Engine, project: Path,
                                                              fake_embedder: HashingEmbedder) -> None:
    ingest(engine, project)
    embedded = fake_embedder.texts_embedded
    report = ingest(engine, project)
    assert (report.files_indexed, report.files_unchanged, report.chunks_written) == (0, 3, 0)
    assert fake_embedder.texts_embedded == embedded


def test_a_touched_but_identical_file_is_not_re_embedded(engine: Engine, project: Path,
                                                         fake_embedder: HashingEmbedder) -> None:
    ingest(engine, project)
    embedded = fake_embedder.texts_embedded
    os.utime(project / "README.md", (1_000_000, 1_000_000))
    report = ingest(engine, project)
    assert (report.files_indexed, report.files_unchanged) == (0, 3)
    assert fake_embedder.texts_embedded == embedded
    store = engine.store()
    readme = source_key((project / "README.md").resolve())
    assert inspection.rows(store, "sources", f"source = '{readme}'")[0]["mtime"] == 1_000_000


def test_a_changed_file_has_its_chunks_replaced_and_only_it_is_embedded(
        engine: Engine, project: Path, fake_embedder: HashingEmbedder) -> None:
    ingest(engine, project)
    store = engine.store()
    doc = source_key((project / "docs/cache.txt").resolve())
    old_ids = {r["id"] for r in inspection.rows(store, "memories", f"source = '{doc}'")}
    other = {r["id"] for r in inspection.rows(store, "memories", f"source != '{doc}'")}
    before = fake_embedder.texts_embedded
    (project / "docs/cache.txt").write_text(DOC.replace("rendered pages", "whole rendered pages quickly"))
    report = ingest(engine, project)
    assert (report.files_indexed, report.files_unchanged) == (1, 2)
    new_rows = inspection.rows(store, "memories", f"source = '{doc}'")
    assert fake_embedder.texts_embedded - before == len(new_rows)
    assert any("quickly" in r["content"] for r in new_rows)
    new_ids = {r["id"] for r in new_rows}
    assert old_ids - new_ids, "the changed chunk must get a new id"
    assert inspection.count(store, "memories", " OR ".join(f"id = '{i}'" for i in old_ids - new_ids)) == 0
    assert {r["id"] for r in inspection.rows(store, "memories", f"source != '{doc}'")} == other
    src = inspection.rows(store, "sources", f"source = '{doc}'")[0]
    assert src["chunk_count"] == len(new_rows)


def test_deleted_files_are_forgotten_on_the_next_run(engine: Engine, project: Path) -> None:
    ingest(engine, project)
    (project / "src/middleware.py").unlink()
    report = ingest(engine, project)
    assert report.files_removed == 1
    store = engine.store()
    gone = source_key((project / "src/middleware.py").resolve())
    assert inspection.count(store, "memories", f"source = '{gone}'") == 0
    assert inspection.count(store, "sources", f"source = '{gone}'") == 0
    assert inspection.count(store, "edges", f"origin = '{gone}'") == 0


def test_a_forgotten_file_stays_out_when_its_folder_is_ingested_again_until_taken_back(
        engine: Engine, project: Path) -> None:
    ingest(engine, project)
    forgotten = source_key((project / "src/middleware.py").resolve())
    deleted = engine.call("delete", {"source": "src/middleware.py"})
    assert deleted.result.kept_out and "stays out when its folder is ingested again" in deleted.text
    again = ingest(engine, project)
    assert [(s.path, s.reason.split(":")[0]) for s in again.skipped] == [(forgotten, "forgotten earlier")]
    assert (again.files_indexed, again.files_removed) == (0, 0)
    store = engine.store()
    assert inspection.count(store, "memories", f"source = '{forgotten}'") == 0
    assert store.count_sources() == 2 and forgotten not in {r["source"] for r in store.source_rows()}
    assert engine.call("status", {}).result.sources == 2, "a forgotten file is counted nowhere"
    (project / "src/middleware.py").write_text(CODE + "\n# edited\n")
    assert ingest(engine, project).files_indexed == 0, "an edit does not bring it back either"
    back = ingest(engine, project, again=[str(project / "src/middleware.py")])
    assert back.files_indexed == 1 and not back.skipped
    assert store.source(forgotten) is not None and not store.excluded_sources()


def test_taking_back_refuses_a_file_outside_the_folder_and_a_plain_forget_lets_it_return(
        engine: Engine, project: Path, tmp_path: Path) -> None:
    ingest(engine, project)
    with pytest.raises(InvalidArgument, match="outside"):
        ingest(engine, project / "docs", again=[str(project / "README.md")])
    assert not engine.call("delete", {"source": "README.md", "keep_out": False}).result.kept_out
    assert ingest(engine, project).files_indexed == 1, "forgotten only until the folder was ingested again"
    engine.call("delete", {"source": "README.md"})
    (project / "README.md").unlink()
    ingest(engine, project)
    assert not engine.store().excluded_sources(), "a forgotten file gone from its folder needs keeping out no longer"


def test_bad_files_are_skipped_and_counted_while_the_rest_is_ingested(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "mixed", {"good.md": "# Good\n\nfine text", "bin.dat": b"\x00\x01\x02",
                                           "latin.txt": "caf\xe9".encode("latin-1"), "big.txt": "x" * 50})
    engine.settings.ingest.max_file_bytes = 1024
    (root / "big.txt").write_text("y" * 5000)
    report = ingest(engine, root)
    reasons = sorted(s.reason.split(" (")[0] for s in report.skipped)
    assert reasons == ["binary content", "larger than ingest.max_file_bytes", "not UTF-8 text"]
    assert report.files_indexed == 1


def test_ingesting_a_missing_path_is_refused_and_writes_nothing(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="does not exist"):
        ingest(engine, tmp_path / "missing")
    store = engine.store()
    assert inspection.count(store, "memories") == 0


def test_inline_content_is_chunked_and_replaced_by_title(engine: Engine) -> None:
    first = engine.call("ingest_content", {"content": DOC, "title": "cache notes", "project": "p"}).result
    assert first.chunks_written >= 1
    engine.call("ingest_content", {"content": "Completely different text.", "title": "cache notes", "project": "p"})
    store = engine.store()
    rows = inspection.rows(store, "memories", "source = 'content:cache notes'")
    assert [r["content"] for r in rows] == ["Completely different text."]
    assert rows[0]["kind"] == "content" and rows[0]["title"] == "cache notes"


@pytest.mark.slow
def test_real_model_ingest_and_search_find_the_right_file(real_engine: Engine, project: Path) -> None:
    ingest(real_engine, project)
    hits = real_engine.call("search", {"query": "store whole pages of the site in a cache"}).result.hits
    assert Path(hits[0].source).name == "cache.txt"
    assert "semantic" in hits[0].channels


def test_an_edit_in_a_long_file_re_embeds_only_the_chunks_it_changed(
        engine: Engine, tmp_path: Path, fake_embedder: HashingEmbedder) -> None:
    sections = [f"Section {n}\n----------\n\n" + f"Paragraph {n} explains topic number {n} at length. " * 12 + "\n"
                for n in range(30)]
    root = write_tree(tmp_path / "book", {"guide.txt": "Guide\n=====\n\n" + "\n".join(sections)})
    first = ingest(engine, root)
    assert first.chunks_written >= 20
    embedded = fake_embedder.texts_embedded
    sections[17] = sections[17].replace("at length", "briefly, with an example")
    (root / "guide.txt").write_text("Guide\n=====\n\n" + "\n".join(sections))
    second = ingest(engine, root)
    assert second.files_indexed == 1
    # The edited section's chunk (and at most its overlapping neighbours) is embedded again; the rest keep their vectors.
    assert 1 <= fake_embedder.texts_embedded - embedded <= 3
    store = engine.store()
    rows = inspection.rows(store, "memories", None, ["title", "content", "vector"])
    assert len(rows) == second.chunks_written
    for row in rows:  # every stored vector is the one the model gives for the chunk's text as stored now
        expected = fake_embedder.embed([f"{row['title']}\n{row['content']}" if row["title"] else row["content"]])[0]
        assert list(row["vector"]) == pytest.approx(list(expected), abs=1e-6)


def test_identical_files_are_embedded_once(engine: Engine, tmp_path: Path, fake_embedder: HashingEmbedder) -> None:
    root = write_tree(tmp_path / "copies", {f"pkg{n}/LICENSE.txt": "Permission is hereby granted, free of charge.\n" * 20
                                             for n in range(4)})
    report = ingest(engine, root)
    assert report.files_indexed == 4
    assert fake_embedder.texts_embedded == report.chunks_written // 4
