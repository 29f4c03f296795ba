"""Upkeep at write time: duplicates counted on the stored memory, superseded memories kept as history."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.errors import InvalidArgument, NotFound
from engram.core.store import inspection
from engram.core.upkeep.keys import dedup_key, normalised
from standins.embedder import HashingEmbedder
from tests.conftest import write_tree


def _notes(engine: Engine, workspace: str = "default") -> list[dict[str, object]]:
    rows = inspection.table(engine.store(workspace), "memories").to_arrow().to_pylist()
    return [r for r in rows if r["kind"] in ("note", "exchange")]


# ------------------------------------------------------------------------------------------------ duplicates


def test_normalised_text_ignores_case_spacing_and_unicode_forms() -> None:
    assert normalised("  We chose\tLanceDB\n\nfor  STORAGE. ") == "we chose lancedb for storage."
    assert normalised("ﬁle Ⅻ") == normalised("file XII")  # NFKC
    assert dedup_key("note", "a", "Same text") == dedup_key("note", "a", "same   TEXT")
    assert len({dedup_key("note", "a", "t"), dedup_key("note", "b", "t"), dedup_key("exchange", "a", "t")}) == 3


def test_the_same_note_stored_again_is_counted_on_the_stored_one(engine: Engine) -> None:
    first = engine.call("store", {"content": "We chose LanceDB for storage.", "tags": ["db"]})
    again = engine.call("store", {"content": "we chose   LanceDB for storage.", "tags": ["decision"]})
    assert (again.result.id, again.result.duplicate_of, again.result.merged, again.result.seen) == (
        first.result.id, first.result.id, "exact", 2)
    assert again.text.startswith(f"already remembered as note {first.result.id} in default/general: the same text, "
                                 "now seen 2 times; nothing new was stored")
    (row,) = _notes(engine)
    assert row["content"] == "We chose LanceDB for storage."  # the stored text stays
    assert row["seen_count"] == 2 and row["last_seen"] >= row["created_at"]
    assert {"db", "decision"} <= set(row["tags"])  # type: ignore[call-overload]
    shown = engine.call("get_memory", {"ids": [first.result.id]}).text
    assert "seen 2 times" in shown


def test_a_near_duplicate_shows_the_longer_text_keeps_the_shorter_and_its_words_become_searchable(
        engine: Engine) -> None:
    first = engine.call("store", {"content": "Deploys of the billing service run on Fridays after all the tests pass"})
    longer = engine.call("store", {"content": "After all the tests pass, deploys of the billing service run on "
                                              "Fridays, as the whole team agreed"})
    assert (longer.result.id, longer.result.merged) == (first.result.id, "near")
    (row,) = _notes(engine)
    assert row["content"] == ("After all the tests pass, deploys of the billing service run on Fridays, as the whole "
                              "team agreed")
    hits = engine.call("search", {"query": "whole team agreed", "channels": ["lexical"]}).result.hits
    assert [h.id for h in hits] == [first.result.id]  # the shown text's full-text entry moved with it
    (kept,) = engine.tools.get_memory([first.result.id]).result.items
    assert kept.own_text == "Deploys of the billing service run on Fridays after all the tests pass"
    assert [(m.content, m.how, m.shown) for m in kept.merged] == [(row["content"], "near", True)]
    shorter = engine.call("store", {"content": "deploys of the billing service run on fridays after all the tests pass!"})
    assert shorter.result.merged in ("exact", "near") and shorter.result.seen == 3
    assert _notes(engine)[0]["content"] == row["content"]


def test_duplicates_are_never_merged_across_projects_kinds_or_workspaces(engine: Engine) -> None:
    text = "The release train leaves every second Tuesday."
    ids = {engine.call("store", {"content": text}).result.id,
           engine.call("store", {"content": text, "project": "other"}).result.id,
           engine.call("store", {"content": text, "kind": "exchange"}).result.id,
           engine.call("store", {"content": text, "workspace": "team"}).result.id}
    assert len(ids) == 4
    assert len(_notes(engine)) == 3 and len(_notes(engine, "team")) == 1


def test_duplicate_handling_off_or_exact_follows_the_setting(paths: Paths) -> None:
    settings = Settings()
    settings.upkeep.duplicates = "off"
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        engine.call("store", {"content": "Cache keys expire after one hour"})
        engine.call("store", {"content": "Cache keys expire after one hour"})
        assert len(_notes(engine)) == 2
        engine.settings.upkeep.duplicates = "exact"
        engine.call("store", {"content": "Cache keys expire after one hour"})
        engine.call("store", {"content": "After one hour, cache keys expire"})  # near only
        assert len(_notes(engine)) == 3


def test_editors_storing_the_same_text_at_once_store_it_once(engine: Engine) -> None:
    results: list[str] = []
    errors: list[BaseException] = []

    def editor() -> None:
        try:
            results.append(engine.call("store", {"content": "The staging database is db-stage-2"}).result.id)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=editor) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1
    (row,) = _notes(engine)
    assert row["seen_count"] == 8


def test_file_chunks_are_not_deduplicated(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "docs", {"a.md": "# A\n\nThe same paragraph.", "b.md": "# A\n\nThe same paragraph."})
    engine.call("ingest_path", {"path": str(root)})
    rows = inspection.table(engine.store(), "memories").to_arrow().to_pylist()
    assert len([r for r in rows if r["kind"] == "chunk"]) == 2
    assert all(r["dedup_key"] is None for r in rows)


def test_a_near_duplicate_is_found_with_the_real_embedding_model(real_engine: Engine) -> None:
    first = real_engine.call("store", {"content": "I really love hiking in the mountains with my dog."})
    again = real_engine.call("store", {"content": "I truly love hiking in the mountains with my dog!"})
    other = real_engine.call("store", {"content": "My sister is moving to Lisbon next spring."})
    assert again.result.duplicate_of == first.result.id and again.result.merged == "near"
    assert other.result.duplicate_of is None


def test_a_note_that_shows_a_merged_text_still_answers_to_its_first_text(real_engine: Engine) -> None:
    """A longer paraphrase without the speaker's label, once shown, must not let another speaker's line in: a near
    duplicate agrees with the memory's first text too (seen in the upkeep benchmark's LoCoMo stream)."""
    first = real_engine.call("store", {"content": "Nate: Bye Joanna!"})
    shouted = real_engine.call("store", {"content": "Oh, NATE: GOODBYE JOANNA!"})
    assert shouted.result.merged == "near" and shouted.result.id == first.result.id
    (row,) = _notes(real_engine)
    assert row["content"] == "Oh, NATE: GOODBYE JOANNA!"  # the longer text is shown; its first text is kept
    other = real_engine.call("store", {"content": "Joanna: Totally! Bye Nate!"})
    assert other.result.merged is None and other.result.id != first.result.id
    assert len(_notes(real_engine)) == 2


# ------------------------------------------------------------------------------------------------ supersession


def test_a_superseded_note_stays_as_history_and_search_says_it_matched(engine: Engine) -> None:
    old = engine.call("store", {"content": "We deploy the billing service with Ansible.", "type": "decision"})
    new = engine.call("store", {"content": "We deploy the billing service with Kubernetes now.", "type": "decision",
                                "supersedes": [old.result.id]})
    assert new.result.superseded == [old.result.id]
    assert f"it supersedes {old.result.id} (kept as history)" in new.text
    found = engine.call("search", {"query": "how do we deploy the billing service"})
    assert [h.id for h in found.result.hits] == [new.result.id]
    assert found.result.superseded_matched == 1
    assert "1 superseded memory also matched (history=true shows them)" in found.text
    history = engine.call("search", {"query": "how do we deploy the billing service", "history": True})
    assert {h.id for h in history.result.hits} == {old.result.id, new.result.id}
    assert f"superseded by {new.result.id} on " in history.text
    chain = engine.call("get_memory", {"ids": [old.result.id, new.result.id]})
    assert [m.id for m in chain.result.history[new.result.id]] == [old.result.id, new.result.id]
    assert f"version 1 of 2: [this] → {new.result.id}" in chain.text
    assert f"version 2 of 2: {old.result.id} → [this]" in chain.text
    (row,) = [r for r in _notes(engine) if r["id"] == old.result.id]
    assert row["content"] == "We deploy the billing service with Ansible."  # its text is kept
    assert row["valid_to"] is not None and row["superseded_by"] == new.result.id


def test_a_chain_of_versions_reads_oldest_first(engine: Engine) -> None:
    ids = [engine.call("store", {"content": "Retention is 30 days."}).result.id]
    for days in (60, 90):
        ids.append(engine.call("store", {"content": f"Retention is {days} days since the audit.",
                                         "supersedes": [ids[-1]]}).result.id)
    got = engine.call("get_memory", {"ids": [ids[1]]}).result
    assert [m.id for m in got.history[ids[1]]] == ids
    pack = engine.context_pack({"query": "retention days", "budget_tokens": 500})
    assert [i.id for i in pack.items if i.kind == "memory"] == [ids[2]] and pack.superseded_matched == 2
    assert engine.call("neighbors", {"id": ids[2]}).result.items == []  # supersedes links are not walked


def test_supersedes_is_checked_before_anything_is_written(engine: Engine, tmp_path: Path) -> None:
    note = engine.call("store", {"content": "A note to replace"}).result.id
    with pytest.raises(NotFound, match="'supersedes' names no memory with id 000000000000"):
        engine.call("store", {"content": "Its replacement", "supersedes": [note, "000000000000"]})
    engine.call("ingest_path", {"path": str(write_tree(tmp_path / "d", {"a.md": "# A\n\nchunk text"}))})
    chunk = next(r["id"] for r in inspection.table(engine.store(), "memories").to_arrow().to_pylist()
                 if r["kind"] == "chunk")
    with pytest.raises(InvalidArgument, match="only notes and exchanges can be superseded"):
        engine.call("store", {"content": "Its replacement", "supersedes": [chunk]})
    engine.call("store", {"content": "The first replacement", "supersedes": [note]})
    with pytest.raises(InvalidArgument, match="already superseded by"):
        engine.call("store", {"content": "A second replacement", "supersedes": [note]})
    with pytest.raises(InvalidArgument, match="at most 20"):
        engine.call("store", {"content": "x", "supersedes": [f"{i:012d}" for i in range(21)]})
    assert [r["content"] for r in _notes(engine) if r["superseded_by"] is None] == ["The first replacement"]


def test_storing_an_old_version_again_supersedes_it_with_a_new_memory(engine: Engine) -> None:
    old = engine.call("store", {"content": "Timeout is 5 s."}).result.id
    same = engine.call("store", {"content": "Timeout is 5 s.", "supersedes": [old]}).result
    assert same.id != old and same.duplicate_of is None and same.superseded == [old]


def test_recall_steps_say_how_many_superseded_memories_matched(engine: Engine) -> None:
    old = engine.call("store", {"content": "The on-call rota lives in the wiki."}).result.id
    engine.call("store", {"content": "The on-call rota lives in PagerDuty.", "supersedes": [old]})
    text = engine.call("recall", {"question": "where is the on-call rota",
                                  "plan": [{"tool": "search", "args": {"query": "on-call rota"}}]}).text
    assert "1 superseded memory also matched" in text.splitlines()[0]


# ------------------------------------------------------------------------------------------------ older stores


def test_a_schema_3_store_gets_the_upkeep_columns_and_its_notes_read_as_current(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    from engram.core.store.fts import create_fts
    from engram.core.store.schema import (
        DIGESTS_SCHEMA,
        EDGES_SCHEMA,
        FACTS_SCHEMA,
        MERGE_FIELDS,
        SCHEMA_VERSION,
        SOURCES_SCHEMA,
        UPKEEP_FIELDS,
        memories_schema,
    )

    folder = tmp_path / "data" / "workspaces" / "default"
    folder.mkdir(parents=True)
    (folder / "workspace.json").write_text(json.dumps({"schema_version": 3, "dimensions": 384,
                                                       "embed_model": "all-minilm-l6-v2"}))
    old = pa.schema([f for f in memories_schema(384) if f not in UPKEEP_FIELDS and f not in MERGE_FIELDS])
    embedder = HashingEmbedder()
    text = "The build cache lives on the NAS."
    now = datetime(2026, 10, 1, tzinfo=UTC)
    db = lancedb.connect(folder / "lance")
    memories = db.create_table("memories", data=pa.Table.from_pylist([{
        "id": "m1", "project": "general", "source": "", "kind": "note", "type": "note", "tags": [], "title": "",
        "content": text, "vector": embedder.embed([text])[0].tolist(), "created_at": now, "updated_at": now,
        "content_hash": "h", "chunk_index": 0, "start_line": 0, "end_line": 0, "search_text": "\n" + text}],
        schema=old))
    create_fts(memories)
    for name, schema in (("sources", SOURCES_SCHEMA), ("facts", FACTS_SCHEMA), ("edges", EDGES_SCHEMA),
                         ("digests", DIGESTS_SCHEMA)):
        db.create_table(name, schema=schema)

    with Engine(Paths(tmp_path / "data", tmp_path / "config", tmp_path / "logs"), Settings(),
                embedder=embedder) as engine:
        (memory,) = engine.call("get_memory", {"ids": ["m1"]}).result.items
        assert (memory.seen_count, memory.valid_to) == (1, None)
        assert engine.call("search", {"query": "build cache"}).result.hits[0].id == "m1"
        again = engine.call("store", {"content": text}).result  # no key on the old row: found by its vector
        assert (again.id, again.merged, again.seen) == ("m1", "near", 2)
    assert json.loads((folder / "workspace.json").read_text())["schema_version"] == SCHEMA_VERSION == 5
