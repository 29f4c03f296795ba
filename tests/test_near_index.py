"""The duplicate lookup's in-memory index (core/upkeep/near_index.py): it answers as the table's query does, and is
read again whenever the table changed without it (another process, forgetting, an ingest)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.store import inspection
from engram.core.store.maintenance import maintain
from engram.core.upkeep import near_index as near_module
from engram.core.upkeep import writing
from engram.core.upkeep.near_index import NearIndex
from standins.embedder import HashingEmbedder

CACHE = "the cache keys of the web service expire after one hour unless a deploy clears them sooner"
#: A stream of writes: new texts, exact repeats (case and spacing), near repeats (longer and shorter), another
#: project, and a supersession.
STREAM = [("web", CACHE), ("web", "Deploys go out on Tuesdays"), ("web", CACHE.upper()), ("web", CACHE + " as agreed"),
          ("ops", CACHE), ("web", "deploys   go out on tuesdays"), ("web", CACHE), ("ops", "Backups run at 02:00"),
          ("web", "Lunch is at noon"), ("ops", CACHE + " as agreed")]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often a group was read from the table."""
    counted: Counter[str] = Counter()
    original = near_module.NearIndex._group

    def group(self: NearIndex, store: object, project: str, kind: str, version: object) -> object:
        name = self._stamp_name(project, kind)
        if self._groups.get((project, kind)) is None or store.derived.stamp(name) != version:  # type: ignore[attr-defined]
            counted[project] += 1
        return original(self, store, project, kind, version)  # type: ignore[arg-type]

    monkeypatch.setattr(near_module.NearIndex, "_group", group)
    return counted


def _engine(folder: Path) -> Engine:
    settings = Settings()
    settings.store.read_consistency_sec = 0  # another engine's commit is seen at once
    return Engine(Paths(data_dir=folder / "data", config_dir=folder / "config", log_dir=folder / "logs"), settings,
                  embedder=HashingEmbedder())


def _rows(engine: Engine) -> list[tuple[object, ...]]:
    rows = inspection.table(engine.store(), "memories").to_arrow().to_pylist()
    return sorted((r["project"], r["content"], r["seen_count"], r["valid_to"] is None) for r in rows)


def _write(engine: Engine) -> list[tuple[str | None, int]]:
    out = []
    for project, text in STREAM:
        stored = engine.tools.store(text, project=project).result
        out.append((stored.merged, stored.seen))
    old = engine.tools.store("Backups run at 02:30", project="ops").result.id
    engine.tools.store("Backups run at 03:30", project="ops", supersedes=[old])
    out.append((engine.tools.store("backups run at 02:30", project="ops").result.merged, 0))  # superseded: no match
    return out


def test_the_index_decides_every_write_as_the_tables_query_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                reads: Counter[str]) -> None:
    with _engine(tmp_path / "indexed") as engine:
        indexed = _write(engine), _rows(engine)
    assert reads == {"web": 1, "ops": 1}, "each group read once, then kept up to date by the writes"
    monkeypatch.setattr(NearIndex, "usable", staticmethod(lambda store: False))
    with _engine(tmp_path / "queried") as engine:
        queried = _write(engine), _rows(engine)
    assert indexed == queried
    decided = indexed[0]
    assert decided[2] == ("exact", 2) and decided[3][0] == "near" and decided[4] == (None, 1)
    assert decided[-1] == (None, 0), "a superseded memory is never matched"


def test_another_process_writing_the_folder_makes_the_index_read_again(tmp_path: Path, reads: Counter[str]) -> None:
    with _engine(tmp_path) as mine, _engine(tmp_path) as theirs:
        mine.tools.store("Deploys go out on Tuesdays", project="web")
        stored = theirs.tools.store(CACHE, project="web").result  # a row my index has never seen
        again = mine.tools.store(CACHE.upper(), project="web").result
        assert (again.id, again.merged, again.seen) == (stored.id, "exact", 2)
    assert reads["web"] == 3, "mine read it, theirs read it, mine read it again after their commit"


def test_forgetting_moves_the_table_on_and_a_forgotten_text_is_stored_anew(engine: Engine,
                                                                          reads: Counter[str]) -> None:
    first = engine.tools.store(CACHE, project="web").result.id
    engine.tools.delete(ids=[first])
    again = engine.tools.store(CACHE, project="web").result
    assert again.merged is None and again.id != first
    assert reads["web"] == 2


def test_maintenance_changes_no_row_and_keeps_the_index(engine: Engine, reads: Counter[str]) -> None:
    engine.tools.store(CACHE, project="web")
    store = engine.store()
    engine.internals().writer.run(maintain, store, 1)  # compaction and a vector index: new versions, same rows
    assert engine.tools.store(CACHE.lower(), project="web").result.merged == "exact"
    assert reads["web"] == 1


def test_a_group_too_large_to_hold_is_asked_of_the_table(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                         reads: Counter[str]) -> None:
    monkeypatch.setattr(near_module, "MAX_ROWS", 2)
    asked = Counter[str]()
    original = writing.find_duplicate

    def find_duplicate(*args: object, **kwargs: object) -> object:
        asked["table"] += 1
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(writing, "find_duplicate", find_duplicate)
    for text in ("one alpha", "two beta", "three gamma"):
        engine.tools.store(text, project="p")
    assert asked["table"] == 0, "held while it was small"
    assert engine.tools.store("THREE gamma", project="p").result.merged == "exact"
    assert engine.tools.store("four delta", project="p").result.merged is None
    assert asked["table"] == 2 and reads["p"] == 3, "outgrown at the third write, then found too large each time"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with _engine(tmp_path) as eng:
        yield eng


class _CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> Any:
        self.texts += texts
        return super().embed(texts)


def test_an_exact_repeat_is_counted_without_being_embedded_again_unless_it_no_longer_is_one(tmp_path: Path) -> None:
    counting = _CountingEmbedder()
    settings = Settings()
    settings.store.read_consistency_sec = 0
    paths = Paths(data_dir=tmp_path / "data", config_dir=tmp_path / "config", log_dir=tmp_path / "logs")
    with Engine(paths, settings, embedder=counting) as mine, _engine(tmp_path) as theirs:
        first = mine.tools.store(CACHE, project="web").result.id
        assert len(counting.texts) == 1
        again = mine.tools.store(CACHE.upper(), project="web").result
        assert (again.id, again.merged, again.seen) == (first, "exact", 2) and len(counting.texts) == 1
        theirs.tools.delete(ids=[first])  # the hint my index gives is now stale
        anew = mine.tools.store(CACHE, project="web").result
        assert anew.merged is None and anew.id != first and len(counting.texts) == 2
        assert [m.id for m in mine.tools.review(project="web").result.seen_again] == []


@pytest.mark.slow
def test_distances_are_cosine_distances_with_the_vector_index_as_without_it(engine: Engine) -> None:
    """The IVF_HNSW_SQ index's own distances are not cosine distances (about twice them): the store gives
    ``1 - cosine`` from the stored vectors either way, so thresholds (near duplicates at 0.95, forget's meaning
    floor) mean the same in a large, indexed workspace as in a small one."""
    import numpy as np

    for n in range(300):
        engine.tools.store(f"note number {n} about the {('deploy', 'backup', 'cache')[n % 3]} of host {n % 17}",
                           project="p")
    store = engine.store()
    engine.internals().writer.run(maintain, store, 256)
    assert any(i.index_type.startswith("Ivf") for i in store.memory_indexes()), "the vector index was built"
    query = engine.embedder().embed(["the backup of host 3"])[0]
    for exact in (False, True):
        rows = store.vector_search(query, 5, None, ["id", "vector"], exact=exact)
        for r in rows:
            v = np.asarray(r["vector"])
            cosine = float(np.dot(query, v) / np.linalg.norm(query) / np.linalg.norm(v))
            assert abs((1.0 - r["_distance"]) - cosine) < 1e-5
        assert [r["_distance"] for r in rows] == sorted(r["_distance"] for r in rows)
    assert "vector" not in store.vector_search(query, 1, None, ["id"])[0], "only the columns asked for"
