"""Workspace stores: created on demand, durable across processes, refused when too new."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engram.core import Engine, Settings
from engram.core.errors import InvalidArgument, SchemaTooNew, WorkspaceError
from engram.core.paths import Paths
from engram.core.store import WorkspaceStore, Writer, inspection
from engram.core.store.opening import open_workspace
from engram.core.store.schema import SCHEMA_VERSION
from engram.core.store.writer import NotOnWriter

from .conftest import HashingEmbedder

WRITER = Writer()


def open_store(folder: Path, *, create: bool = True, dimensions: int = 384) -> WorkspaceStore:
    return WRITER.run(lambda: open_workspace("w", folder, dimensions=dimensions, embed_model="m",
                                                  read_consistency=timedelta(0), create=create))


def test_a_new_workspace_gets_its_tables_and_version_file(tmp_path: Path) -> None:
    store = open_store(tmp_path / "w")
    meta = json.loads((tmp_path / "w" / "workspace.json").read_text())
    assert meta == {"schema_version": SCHEMA_VERSION, "dimensions": 384, "embed_model": "m"}
    assert inspection.count(store, "memories") == 0 and inspection.count(store, "edges") == 0


def test_opening_without_create_does_not_make_a_workspace(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist yet"):
        open_store(tmp_path / "w", create=False)
    assert not (tmp_path / "w").exists()


def test_a_store_from_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    meta = {"schema_version": SCHEMA_VERSION + 1, "dimensions": 384, "embed_model": "m"}
    (folder / "workspace.json").write_text(json.dumps(meta))
    before = sorted(p.name for p in folder.rglob("*"))
    with pytest.raises(SchemaTooNew, match="newer Engram"):
        open_store(folder)
    assert sorted(p.name for p in folder.rglob("*")) == before


def test_a_store_built_for_another_vector_size_is_refused(tmp_path: Path) -> None:
    open_store(tmp_path / "w")
    with pytest.raises(WorkspaceError, match="384-dimensional"):
        open_store(tmp_path / "w", dimensions=768)


def test_writes_outside_the_writer_thread_are_refused(tmp_path: Path) -> None:
    store = open_store(tmp_path / "w")
    with pytest.raises(NotOnWriter, match="writer thread"):
        store.delete_memories(["x"])
    with pytest.raises(NotOnWriter, match="writer thread"):
        open_workspace("x", tmp_path / "x", dimensions=384, embed_model="m", read_consistency=timedelta(0),
                            create=True)
    assert not (tmp_path / "x").exists()


def test_a_new_workspace_has_a_full_text_index_from_the_start(tmp_path: Path) -> None:
    store = open_store(tmp_path / "w")
    assert [i.index_type for i in inspection.indexes(store, "memories")] == ["FTS"]


def test_workspace_names_are_validated(engine: Engine) -> None:
    with pytest.raises(InvalidArgument, match="not a workspace name"):
        engine.store("Bad Name")


@pytest.mark.slow
def test_memories_written_by_another_process_are_kept_and_visible(tmp_path: Path) -> None:
    data = tmp_path / "data"
    script = textwrap.dedent(f"""
        from pathlib import Path
        from engram.core import Engine, Settings
        from engram.core.paths import Paths
        from tests.conftest import HashingEmbedder
        paths = Paths(Path({str(data)!r}), Path({str(tmp_path / 'cfg')!r}), Path({str(tmp_path / 'logs')!r}))
        with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
            print(engine.call("store", {{"content": "written by the child process"}}).result.id)
    """)
    root = Path(__file__).resolve().parents[1]
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120)
    assert child.returncode == 0, child.stderr
    memory_id = child.stdout.strip().splitlines()[-1]
    paths = Paths(data, tmp_path / "cfg", tmp_path / "logs")
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        engine.call("store", {"content": "written by the parent"})
        got = engine.call("get_memory", {"ids": [memory_id]}).result
        assert got.items[0].content == "written by the child process"
        assert engine.call("status").result.memories == 2


def test_a_schema_2_store_gets_its_title_into_the_full_text_index_without_re_embedding(tmp_path: Path) -> None:
    """A workspace written before search_text existed (schema 2: the full-text index on content alone) is opened
    by this version: its rows are kept with their vectors, and a search finds a word that only a title holds."""
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    from engram.core.store.schema import (
        DIGESTS_SCHEMA,
        EDGES_SCHEMA,
        FACTS_SCHEMA,
        MERGE_FIELDS,
        SOURCES_SCHEMA,
        UPKEEP_FIELDS,
        memories_schema,
    )

    folder = tmp_path / "data" / "workspaces" / "default"
    folder.mkdir(parents=True)
    (folder / "workspace.json").write_text(json.dumps({"schema_version": 2, "dimensions": 384,
                                                       "embed_model": "all-minilm-l6-v2"}))
    old = pa.schema([f for f in memories_schema(384) if f.name != "search_text" and f not in UPKEEP_FIELDS
                     and f not in MERGE_FIELDS])
    embedder = HashingEmbedder()
    rows = [("m1", "Caroline, 8 May 2023", "Caroline: I went to the support group yesterday."),
            ("m2", "Melanie, 9 June 2023", "Melanie: That sounds wonderful, tell me more.")]
    vectors = embedder.embed([f"{t}\n{c}" for _, t, c in rows])
    now = datetime(2023, 5, 8, tzinfo=UTC)
    data = pa.Table.from_pylist([{
        "id": i, "project": "conversation", "source": "", "kind": "exchange", "type": "note", "tags": ["kind:exchange"],
        "title": t, "content": c, "vector": v.tolist(), "created_at": now, "updated_at": now, "content_hash": i,
        "chunk_index": 0, "start_line": 0, "end_line": 0} for (i, t, c), v in zip(rows, vectors, strict=True)],
        schema=old)
    db = lancedb.connect(folder / "lance")
    memories = db.create_table("memories", data=data)
    memories.create_index("content", config=FTS(with_position=False, stem=True, remove_stop_words=True,
                                                ascii_folding=True))
    for name, schema in (("sources", SOURCES_SCHEMA), ("facts", FACTS_SCHEMA), ("edges", EDGES_SCHEMA),
                         ("digests", DIGESTS_SCHEMA)):
        db.create_table(name, schema=schema)
    stored_vectors = {r["id"]: r["vector"] for r in memories.to_arrow().to_pylist()}

    with Engine(Paths(tmp_path / "data", tmp_path / "config", tmp_path / "logs"), Settings(),
                embedder=embedder) as engine:
        hits = engine.call("search", {"query": "what happened in June", "channels": ["lexical"]}).result.hits
        assert [h.id for h in hits] == ["m2"]  # "June" is in its title alone
        store = engine.store()
        assert [(i.columns, i.index_type) for i in inspection.indexes(store, "memories")] == [(["search_text"], "FTS")]
        after = {r["id"]: r for r in inspection.rows(store, "memories", None, ["id", "vector", "search_text"])}
        assert {i: r["vector"] for i, r in after.items()} == stored_vectors, "nothing is embedded again"
        assert after["m1"]["search_text"] == "Caroline, 8 May 2023\nCaroline: I went to the support group yesterday."
        engine.call("store", {"content": "A new note after the upgrade", "title": "Upgrade"})
        assert engine.call("search", {"query": "upgrade", "channels": ["lexical"]}).result.hits
    meta = json.loads((folder / "workspace.json").read_text())
    assert meta["schema_version"] == SCHEMA_VERSION == 5
