"""Workspace stores: created on demand, durable across processes, refused when too new."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from engram.core import Engine, Settings
from engram.core.errors import InvalidArgument, SchemaTooNew, WorkspaceError
from engram.core.paths import Paths
from engram.core.store import WorkspaceStore, Writer
from engram.core.store.schema import SCHEMA_VERSION
from engram.core.store.workspace import NotOnWriter

from .conftest import HashingEmbedder

WRITER = Writer()


def open_store(folder: Path, *, create: bool = True, dimensions: int = 384) -> WorkspaceStore:
    return WRITER.run(lambda: WorkspaceStore.open("w", folder, dimensions=dimensions, embed_model="m",
                                                  read_consistency=timedelta(0), create=create))


def test_a_new_workspace_gets_its_tables_and_version_file(tmp_path: Path) -> None:
    store = open_store(tmp_path / "w")
    meta = json.loads((tmp_path / "w" / "workspace.json").read_text())
    assert meta == {"schema_version": SCHEMA_VERSION, "dimensions": 384, "embed_model": "m"}
    assert store.count(store.memories) == 0 and store.count(store.edges) == 0


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
        WorkspaceStore.open("x", tmp_path / "x", dimensions=384, embed_model="m", read_consistency=timedelta(0),
                            create=True)
    assert not (tmp_path / "x").exists()


def test_a_new_workspace_has_a_full_text_index_from_the_start(tmp_path: Path) -> None:
    store = open_store(tmp_path / "w")
    assert [i.index_type for i in store.indices(store.memories)] == ["FTS"]


def test_workspace_names_are_validated(engine: Engine) -> None:
    with pytest.raises(InvalidArgument, match="not a workspace name"):
        engine.store("Bad Name")


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
