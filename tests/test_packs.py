"""Context packs under token budgets, altitude digests, and the store upgrade that added digests."""

from __future__ import annotations

import json
import math
from datetime import UTC, timedelta
from pathlib import Path

import pytest

from engram.core import Engine
from engram.core.errors import InvalidArgument, StoreError
from engram.core.recall.digests import refresh_digests
from engram.core.recall.pack import ByteTokenizer, ModelTokenizer, covers, item_text
from engram.core.store import Writer, inspection
from engram.core.store.opening import open_workspace
from engram.core.store.schema import SCHEMA_VERSION

from .conftest import write_tree

DOCS = {
    "ops/deploy.md": "# Deploy\n\nWe deploy with ``systemd`` units and roll back with ``git_revert``.\n\n"
                     "## Rollback\n\nRun ``git_revert`` then restart the ``systemd`` unit.",
    "ops/backup.md": "# Backups\n\nNightly ``restic`` snapshots of ``systemd`` managed volumes.",
    "ops/tasks.py": "def git_revert():\n    '''Undo the last deploy with systemd restart.'''\n",
    "ops/timers.md": "# Timers\n\n``systemd`` timers start the nightly jobs.",
}


@pytest.fixture
def filled(engine: Engine, tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", DOCS)
    engine.call("ingest_path", {"path": str(root / "ops"), "project": "ops"})
    engine.call("store", {"content": "Remember: systemd timers replace cron here", "project": "notes"})
    return root


def pack(engine: Engine, **request: object) -> object:
    return engine.context_pack({"query": "how do we roll back a systemd deploy", **request})


def test_items_carry_kind_id_row_score_sources_and_tokens(engine: Engine, filled: Path) -> None:
    out = pack(engine, budget_tokens=100_000, altitude="entity")
    assert out.items and out.omitted == 0 and out.altitude == "entity" and out.tokenizer == "bytes/4"
    first = out.items[0]
    assert first.kind == "memory" and first.id == first.row["id"] and first.score > 0
    assert set(first.sources) <= {"semantic", "lexical", "graph"} and first.sources
    assert first.tokens == math.ceil(len(item_text(first).encode()) / 4)
    assert out.tokens == sum(i.tokens for i in out.items)


def test_exact_fit_first_overflow_and_zero_budget(engine: Engine, filled: Path) -> None:
    everything = pack(engine, budget_tokens=100_000, altitude="entity")
    costs = [i.tokens for i in everything.items]
    n = len(costs)
    assert n >= 3
    exact = pack(engine, budget_tokens=sum(costs[:2]), altitude="entity")
    assert [i.id for i in exact.items] == [i.id for i in everything.items[:2]]
    assert exact.omitted == n - 2 and exact.tokens == sum(costs[:2])
    short = pack(engine, budget_tokens=sum(costs[:2]) - 1, altitude="entity")
    assert len(short.items) == 1 and short.omitted == n - 1, "packing stops at the first item that overflows"
    zero = pack(engine, budget_tokens=0, altitude="entity")
    assert zero.items == [] and zero.omitted == n and zero.tokens == 0


def test_a_failing_channel_is_a_warning(engine: Engine, filled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = engine.store()

    def broken(*args: object, **kwargs: object) -> list:
        raise StoreError("index unreadable (test)")

    monkeypatch.setattr(store, "text_search", broken)
    out = pack(engine, budget_tokens=10_000, altitude="entity")
    assert out.warnings == ["lexical channel failed: index unreadable (test)"] and out.items


def test_kinds_and_entities_restrict_the_rows(engine: Engine, filled: Path) -> None:
    notes = pack(engine, budget_tokens=10_000, altitude="entity", kinds=["note"])
    assert {i.row["kind"] for i in notes.items} == {"note"}
    restic = pack(engine, budget_tokens=10_000, altitude="entity", entities=["restic"])
    assert [Path(i.row["source"]).name for i in restic.items] == ["backup.md"]
    none = pack(engine, budget_tokens=10_000, altitude="entity", entities=["nothing_like_this"])
    assert none.items == [] and none.warnings == ["no memory mentions nothing_like_this"]


def test_a_model_tokenizer_plugs_in(engine: Engine, filled: Path, real_embedder: object) -> None:
    tokenizer = ModelTokenizer("all-MiniLM-L6-v2", real_embedder.count_tokens)  # type: ignore[attr-defined]
    out = engine.context_pack({"query": "rollback", "budget_tokens": 10_000, "altitude": "entity"}, tokenizer=tokenizer)
    assert out.tokenizer == "all-MiniLM-L6-v2"
    assert out.items[0].tokens == real_embedder.count_tokens(item_text(out.items[0]))  # type: ignore[attr-defined]


def test_altitudes_choose_rows_or_digests(engine: Engine, filled: Path) -> None:
    scope = pack(engine, budget_tokens=10_000, altitude="scope")
    assert scope.altitude == "scope" and {i.kind for i in scope.items} == {"digest"}
    assert {i.row["level"] for i in scope.items} == {"scope"}
    assert scope.items[0].row["key"] == "ops" and scope.items[0].row["content"].startswith("Project ops: 4 sources")
    workspace = pack(engine, budget_tokens=10_000, altitude="workspace")
    assert [i.row["level"] for i in workspace.items] == ["workspace"]
    assert workspace.items[0].row["content"].startswith("Workspace default: 2 projects.")


def test_auto_climbs_from_rows_to_digests_as_the_budget_shrinks(engine: Engine, filled: Path) -> None:
    assert pack(engine, budget_tokens=100_000).altitude == "entity"
    rows = pack(engine, budget_tokens=100_000, altitude="entity")
    top = sum(i.tokens for i in rows.items[:10])
    seen = []
    for budget in (top, top - 1, 60, 25, 0):
        out = pack(engine, budget_tokens=budget)
        seen.append(out.altitude)
        kinds = {i.kind for i in out.items}
        assert len(kinds) <= 1
    assert seen[0] == "entity" and seen[1] != "entity" and seen[-1] == "workspace"
    assert seen == sorted(seen, key=["entity", "entity-digests", "scope", "workspace"].index)


def test_a_digest_never_shares_a_pack_with_a_row_it_covers(engine: Engine, filled: Path) -> None:
    store = engine.store()
    rows = pack(engine, budget_tokens=100_000, altitude="entity").items
    for digest in inspection.rows(store, "digests", None):
        covered = [r for r in rows if covers(digest, r.row, {})]
        if digest["level"] in ("workspace",):
            assert covered == rows
    for budget in (0, 25, 60, 200, 1000, 100_000):
        items = pack(engine, budget_tokens=budget).items
        digests = [i.row for i in items if i.kind == "digest"]
        memories = [i.row for i in items if i.kind == "memory"]
        assert not [(d["id"], m["id"]) for d in digests for m in memories if covers(d, m, {})]


def test_digests_rebuild_only_what_changed(engine: Engine, filled: Path) -> None:
    store = engine.store()
    pack(engine, budget_tokens=10, altitude="workspace")  # builds the digests on first use
    levels = {d["level"] for d in inspection.rows(store, "digests", None)}
    assert levels == {"source", "entity", "scope", "workspace"}
    assert refresh_digests(store, engine.internals().writer) == {}
    (filled / "ops" / "backup.md").write_text("# Backups\n\nHourly ``restic`` snapshots now, kept for a week.")
    engine.call("ingest_path", {"path": str(filled / "ops"), "project": "ops"})
    changed = refresh_digests(store, engine.internals().writer)
    assert changed["source"] == 1 and changed["scope"] == 1 and changed["workspace"] == 1
    store_rows = {d["key"]: d for d in inspection.rows(store, "digests", "level = 'source'")}
    backup = (filled / "ops" / "backup.md").resolve().as_posix()
    assert "Hourly" in store_rows[backup]["content"]
    again = refresh_digests(store, engine.internals().writer)
    assert again == {}


def test_a_pack_request_is_validated(engine: Engine) -> None:
    with pytest.raises(InvalidArgument, match="budget_tokens"):
        engine.context_pack({"query": "x", "budget_tokens": -1})
    with pytest.raises(InvalidArgument, match="unknown argument 'colour'"):
        engine.context_pack({"query": "x", "budget_tokens": 10, "colour": 1})


def test_a_store_from_schema_1_gains_the_digests_table_and_keeps_its_data(tmp_path: Path) -> None:
    writer = Writer()
    folder = tmp_path / "w"
    store = writer.run(lambda: open_workspace("w", folder, dimensions=384, embed_model="m",
                                                   read_consistency=timedelta(0), create=True))
    from datetime import datetime

    import numpy as np

    from engram.core.ingest.records import note_row

    row = note_row(memory_id="a" * 12, project="p", kind="note", type_="note", tags=[], title="", content="kept",
                   vector=np.ones(384, dtype=np.float32) / np.sqrt(384), now=datetime.now(UTC))
    writer.run(store.upsert_memories, [row])
    import lancedb

    lancedb.connect(folder / "lance").drop_table("digests")
    (folder / "workspace.json").write_text(json.dumps({"schema_version": 1, "dimensions": 384, "embed_model": "m"}))
    reopened = writer.run(lambda: open_workspace("w", folder, dimensions=384, embed_model="m",
                                                      read_consistency=timedelta(0), create=False))
    assert json.loads((folder / "workspace.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert inspection.count(reopened, "digests") == 0
    assert reopened.memories_by_ids(["a" * 12], ["content"])["a" * 12]["content"] == "kept"
    writer.close()


def test_byte_tokenizer_rounds_up() -> None:
    assert [ByteTokenizer().count(t) for t in ("", "a", "abcd", "abcde", "é")] == [0, 1, 1, 2, 1]
