"""What a store derives from its tables is kept by that store (``store.derived``): a new store never sees an old
one's values."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import pytest

from engram.core import Engine, Settings
from engram.core.paths import Paths
from engram.core.recall import digests
from engram.core.store import WorkspaceStore, Writer, inspection
from engram.core.store.opening import open_workspace
from engram.core.tools import source_names
from engram.core.tools.scope import Scope

from .conftest import HashingEmbedder, write_tree

pytestmark = pytest.mark.slow  # many stores opened and dropped: the full run only


@dataclass(frozen=True)
class Workspace:
    folder: Path
    source: str  # the stored (absolute) name of its one file
    name: str  # the name callers see: relative to the ingest folder


@pytest.fixture
def two_workspaces(paths: Paths, tmp_path: Path, fake_embedder: HashingEmbedder) -> list[Workspace]:
    """Two workspaces, each of one file ingested from its own folder, their tables at the same versions."""
    made = []
    with Engine(paths, Settings(), embedder=fake_embedder) as engine:
        for name in ("one", "two"):
            root = write_tree(tmp_path / f"files-{name}", {f"{name}.md": f"# {name}\n\nThe {name} file.\n"})
            engine.call("ingest_path", {"path": str(root), "workspace": name})
            made.append(Workspace(paths.workspace_dir(name), (root / f"{name}.md").resolve().as_posix(), f"{name}.md"))
    return made


def open_store(writer: Writer, folder: Path) -> WorkspaceStore:
    return writer.run(lambda: open_workspace(folder.name, folder, dimensions=384, embed_model="all-minilm-l6-v2",
                                                  read_consistency=timedelta(0), create=False))


@pytest.fixture
def writer() -> Iterator[Writer]:
    writer = Writer()
    yield writer
    writer.close()


def test_a_new_store_never_sees_the_source_names_of_a_dropped_one(two_workspaces: list[Workspace],
                                                                    writer: Writer) -> None:
    # CPython often gives a new object the address (the id) of one just freed: alternate the two workspaces
    # many times so that a store reusing a dropped one's id is all but certain.
    for i in range(16):
        ws = two_workspaces[i % 2]
        store = open_store(writer, ws.folder)
        assert source_names.display(store, ws.source) == ws.name, f"round {i}"
        assert source_names.resolve(store, ws.folder.name, ws.name)["source"] == ws.source, f"round {i}"
        del store
        gc.collect()


def test_source_roots_are_kept_by_the_store_that_read_them_and_by_no_other(two_workspaces: list[Workspace],
                                                                          writer: Writer) -> None:
    kept = open_store(writer, two_workspaces[0].folder)
    assert source_names.display(kept, two_workspaces[0].source) == two_workspaces[0].name
    version = inspection.table(kept, "sources").version
    assert list(kept.derived.cached("source roots", version, dict)) == [two_workspaces[0].source]
    fresh = open_store(writer, two_workspaces[0].folder)
    assert fresh.derived.cached("source roots", version, lambda: {"nothing": "kept"}) == {"nothing": "kept"}


@pytest.fixture
def engine_scope(two_workspaces: list[Workspace], paths: Paths, fake_embedder: HashingEmbedder) -> Iterator[Scope]:
    """A tool's scope on a fresh engine over the same data folder (the tests swap in stores of their own)."""
    with Engine(paths, Settings(), embedder=fake_embedder) as engine:
        yield engine._scope("one")


def test_a_new_store_gets_its_own_digests_whatever_a_dropped_one_had(two_workspaces: list[Workspace],
                                                                      engine_scope: Scope) -> None:
    writer = engine_scope.writer
    for i in range(16):
        ws = two_workspaces[i % 2]
        store = open_store(writer, ws.folder)
        if i >= 2:  # every digest of both workspaces was written by the first two rounds: forget them
            writer.run(store.replace_digests, [], [d["id"] for d in inspection.rows(store, "digests", None, ["id"])])
        digests.ensure_digests(replace(engine_scope, workspace=ws.folder.name, store=store))
        sources = {d["key"] for d in inspection.rows(store, "digests", "level = 'source'", ["key"])}
        assert sources == {ws.source}, f"round {i}"
        del store
        gc.collect()


def test_the_digest_refresh_record_is_the_stores_own(two_workspaces: list[Workspace], engine_scope: Scope) -> None:
    store = open_store(engine_scope.writer, two_workspaces[0].folder)
    assert store.derived.stamp("digests") is None
    digests.ensure_digests(replace(engine_scope, store=store))
    assert store.derived.stamp("digests") == store.content_versions()
    assert open_store(engine_scope.writer, two_workspaces[0].folder).derived.stamp("digests") is None
