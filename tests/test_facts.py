"""Duplicate handling never loses a fact (issue 49): details that carry meaning must agree for a near duplicate, a
merge keeps every text and can be undone, a changed detail is a possible update shown as one, and conversation
turns are events. The examples a new user met are stored through the real embedding model, as they were."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.errors import InvalidArgument
from engram.core.store import inspection
from engram.core.upkeep.near_index import NearIndex
from standins.embedder import HashingEmbedder

#: What a new user stored: the second text of each pair merged into the first under the vector rule alone.
EXAMPLES = [
    ("The staging database password rotates every 30 days", "The staging database password rotates every 90 days",
     "30 days → 90 days"),
    ("Deploy server is 10.0.0.5", "Deploy server is 10.0.0.6", "10.0.0.5 → 10.0.0.6"),
    ("We pin llama-cpp-python to 0.3.36", "We pin llama-cpp-python to 0.3.37", "0.3.36 → 0.3.37"),
    ("Backups run nightly at 02:00", "Backups run nightly at 04:00", "02:00 → 04:00"),
    ("Alice owns the billing service", "Bob owns the billing service", "Alice → Bob"),
    ("Tests must pass on Python 3.11", "Tests must pass on Python 3.12", "3.11 → 3.12"),
]


def _rows(engine: Engine, workspace: str = "default") -> list[dict[str, object]]:
    return [r for r in inspection.table(engine.store(workspace), "memories").to_arrow().to_pylist()
            if r["kind"] in ("note", "exchange")]


@pytest.mark.parametrize(("older", "newer", "changes"), EXAMPLES, ids=[c for _, _, c in EXAMPLES])
def test_a_note_that_differs_in_one_detail_is_stored_and_the_reply_says_what_it_may_update(
        real_engine: Engine, older: str, newer: str, changes: str) -> None:
    first = real_engine.tools.store(older).result
    out = real_engine.tools.store(newer)
    stored = out.result
    assert stored.duplicate_of is None and stored.id != first.id, "the newer fact is stored, not dropped"
    assert (stored.may_update, stored.changes) == (first.id, changes)
    assert out.text.startswith(f"stored note {stored.id} in default/general; it may update {first.id} ({changes}): ")
    assert f"`engram supersede {stored.id} {first.id}`" in out.text
    assert sorted(r["content"] for r in _rows(real_engine)) == sorted([older, newer])


def test_a_repeat_with_every_detail_the_same_is_still_counted_on_the_stored_note(real_engine: Engine) -> None:
    first = real_engine.tools.store("The staging database password rotates every 30 days").result
    again = real_engine.tools.store("So, the staging database password rotates every thirty days.").result
    assert (again.id, again.merged, again.seen) == (first.id, "near", 2)


def test_search_shows_the_newer_of_a_possible_update_first_and_marks_the_older(real_engine: Engine) -> None:
    older = real_engine.tools.store("Backups run nightly at 02:00").result.id
    newer = real_engine.tools.store("Backups run nightly at 04:00").result.id
    out = real_engine.tools.search("02:00 backups", channels=["lexical"], limit=1)
    hits = out.result.hits
    assert [h.id for h in hits] == [newer, older], "the newer is brought in before the older the search found"
    assert (hits[1].possibly_outdated_by, hits[1].outdated_changes) == (newer, "02:00 → 04:00")
    assert f"possibly outdated by {newer} (02:00 → 04:00)" in out.text
    recalled = real_engine.tools.recall("when do backups run?").result
    assert recalled.search is not None
    ids = [h.id for h in recalled.search.hits]
    assert ids.index(newer) < ids.index(older)
    pack = real_engine.context_pack({"query": "when do backups run", "budget_tokens": 10_000, "altitude": "entity"})
    rows = [item.row for item in pack.items]
    assert [r["id"] for r in rows][:2] == [newer, older]
    assert (rows[1]["possibly_outdated_by"], rows[1]["outdated_changes"]) == (newer, "02:00 → 04:00")
    real_engine.tools.tidy("keep_both", newer, others=[older])  # both are true: no mark any more
    again = real_engine.tools.search("02:00 backups", channels=["lexical"], limit=1).result.hits
    assert [(h.id, h.possibly_outdated_by) for h in again] == [(older, None)]


def test_a_merged_text_is_kept_shown_by_get_memory_and_unmerge_gives_each_memory_back(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        tools = engine.tools
        first = tools.store("the cache keys of the web service expire after one hour unless a deploy clears them",
                            tags=["cache"]).result
        longer = tools.store("the cache keys of the web service expire after one hour unless a deploy clears them, "
                             "as agreed", tags=["agreed"]).result
        assert (longer.id, longer.merged) == (first.id, "near")
        (kept,) = tools.get_memory([first.id]).result.items
        assert kept.content.endswith("as agreed") and kept.own_text is not None and kept.seen_count == 2
        assert [(m.how, m.shown, m.tags) for m in kept.merged] == [("near", True, ["agreed", "kind:note"])]
        assert {"cache", "agreed"} <= set(kept.tags)
        shown = tools.get_memory([first.id]).text
        assert "merged into it: 1 text" in shown and f"`engram unmerge {first.id}`" in shown
        assert "its own text: the cache keys" in shown
        split = tools.tidy("unmerge", first.id)
        assert split.result.restored_own and len(split.result.others) == 1
        (back,) = split.result.others
        (own, other) = (tools.get_memory([first.id]).result.items[0], tools.get_memory([back]).result.items[0])
        assert own.content.endswith("clears them") and own.merged == [] and own.seen_count == 1
        assert "agreed" not in own.tags and "cache" in own.tags
        assert other.content.endswith("as agreed") and "agreed" in other.tags and "cache" not in other.tags
        assert other.created_at >= own.created_at
        hits = tools.search("as agreed", channels=["lexical"]).result.hits
        assert [h.id for h in hits] == [back], "the split memory is found by its own words, the other is not"
        with pytest.raises(InvalidArgument, match="no merged texts"):
            tools.tidy("unmerge", first.id)


def test_engram_merge_keeps_the_other_as_history_and_unmerge_makes_it_current_again(engine: Engine) -> None:
    tools = engine.tools
    a = tools.store("Standups are at 09:30 in the big room", project="ops").result.id
    b = tools.store("Standup: 09:30, big room, cameras on", project="ops").result.id
    merged = tools.tidy("merge", a, others=[b], workspace="").result
    assert merged.seen == 2
    (kept,) = tools.get_memory([a]).result.items
    assert [(m.id, m.how) for m in kept.merged] == [(b, "merge")]
    assert tools.get_memory([b]).result.items[0].superseded_by == a
    tools.tidy("unmerge", a)
    assert tools.get_memory([b]).result.items[0].superseded_by is None
    assert tools.get_memory([a]).result.items[0].seen_count == 1
    assert {h.id for h in tools.search("standup big room").result.hits} == {a, b}


def test_an_exact_repeat_adds_its_tags_to_the_notes_own_and_unmerge_keeps_them(engine: Engine) -> None:
    tools = engine.tools
    note = "the cache keys of the web service expire after one hour unless a deploy clears them"
    first = tools.store(note).result.id
    tools.store(note + ", as agreed", tags=["near"])
    tools.store(note.upper(), tags=["exact"])
    tools.tidy("unmerge", first)
    (own,) = tools.get_memory([first]).result.items
    assert "exact" in own.tags and "near" not in own.tags


@pytest.mark.parametrize("indexed", [True, False], ids=["held in memory", "asked of the table"])
def test_a_merged_text_written_again_word_for_word_counts_on_its_own_entry(
        paths: Paths, monkeypatch: pytest.MonkeyPatch, indexed: bool) -> None:
    if not indexed:
        monkeypatch.setattr(NearIndex, "usable", staticmethod(lambda store: False))
    embedder = HashingEmbedder()
    with Engine(paths, Settings(), embedder=embedder) as engine:
        tools = engine.tools
        note = "the cache keys of the web service expire after one hour unless a deploy clears them"
        first = tools.store(note).result.id
        assert tools.store(note + ", as agreed").result.merged == "near"  # longer: shown in place of the note's own
        embedded = embedder.texts_embedded
        again = [tools.store(text).result for text in (note.upper(), note + ",  AS AGREED")]
        assert [(r.id, r.merged) for r in again] == [(first, "exact")] * 2
        if indexed:
            assert embedder.texts_embedded == embedded, "an exact repeat of a kept text is counted without embedding it"
        (kept,) = tools.get_memory([first]).result.items
        assert kept.seen_count == 4 and [m.seen for m in kept.merged] == [2]
        (back,) = tools.tidy("unmerge", first).result.others
        seen = {i: tools.get_memory([i]).result.items[0].seen_count for i in (first, back)}
        assert seen == {first: 2, back: 2}, "each text keeps its own sightings when split off"


def test_a_damaged_record_of_merged_texts_is_never_written_over(engine: Engine) -> None:
    tools = engine.tools
    note = "the cache keys of the web service expire after one hour unless a deploy clears them"
    first = tools.store(note).result.id
    store = engine.store()
    engine.internals().writer.run(store.update_memory, first, {"merged_texts": "{not json"})
    again = tools.store(note + ", as agreed").result
    assert again.duplicate_of is None, "stored apart rather than merged into a record that cannot be read"
    assert inspection.rows(store, "memories", f"id = '{first}'", ["merged_texts"])[0]["merged_texts"] == "{not json"
    with pytest.raises(InvalidArgument, match="damaged"):
        tools.tidy("unmerge", first)


def test_conversation_turns_are_events_never_merged_by_similarity(engine: Engine) -> None:
    tools = engine.tools
    said = "Thanks, see you Friday!"
    monday = tools.store(said, kind="exchange", title="Caroline, 1:56 pm on 8 May, 2023", project="chat").result
    tuesday = tools.store(said, kind="exchange", title="Melanie, 2:10 pm on 9 May, 2023", project="chat").result
    replay = tools.store(said, kind="exchange", title="Caroline, 1:56 pm on 8 May, 2023", project="chat").result
    near = tools.store("Thanks! See you on Friday!", kind="exchange", title="Caroline, 1:56 pm on 8 May, 2023",
                       project="chat").result
    assert tuesday.id != monday.id and tuesday.duplicate_of is None, "the same words on another day: another turn"
    assert (replay.id, replay.merged) == (monday.id, "exact"), "the same turn stored again is kept once"
    assert near.duplicate_of is None and near.may_update is None, "turns are never merged or updated by similarity"
    assert len(_rows(engine)) == 3


def test_a_schema_4_store_lists_what_the_old_rule_merged_for_a_person_to_check(tmp_path: Path) -> None:
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
        memories_schema,
        search_text,
    )

    folder = tmp_path / "data" / "workspaces" / "default"
    folder.mkdir(parents=True)
    (folder / "workspace.json").write_text(json.dumps({"schema_version": 4, "dimensions": 384,
                                                       "embed_model": "all-minilm-l6-v2"}))
    embedder = HashingEmbedder()
    old = pa.schema([f for f in memories_schema(384) if f not in MERGE_FIELDS])
    made, changed = datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 10, 5, tzinfo=UTC)
    rows = [("m1", "Backups run nightly at 02:00.", 3, made), ("m2", "Deploys need one approval, as agreed.", 2, changed),
            ("m3", "The wiki lives on the NAS.", 1, made)]
    db = lancedb.connect(folder / "lance")
    memories = db.create_table("memories", data=pa.Table.from_pylist([{
        "id": i, "project": "ops", "source": "", "kind": "note", "type": "note", "tags": [], "title": "", "content": c,
        "vector": embedder.embed([c])[0].tolist(), "created_at": made, "updated_at": u, "content_hash": i,
        "chunk_index": 0, "start_line": 0, "end_line": 0, "search_text": search_text("", c), "dedup_key": None,
        "seen_count": n, "last_seen": u, "valid_to": None, "superseded_by": None} for i, c, n, u in rows], schema=old))
    create_fts(memories)
    for name, schema in (("sources", SOURCES_SCHEMA), ("facts", FACTS_SCHEMA), ("edges", EDGES_SCHEMA),
                         ("digests", DIGESTS_SCHEMA)):
        db.create_table(name, schema=schema)
    with Engine(Paths(tmp_path / "data", tmp_path / "config", tmp_path / "logs"), Settings(),
                embedder=embedder) as engine:
        out = engine.tools.review(project="ops")
        assert [(m.id, m.merged_unkept) for m in out.result.merged_before] == [("m1", 2), ("m2", 1)]
        assert "Merged by similarity before Engram kept merged texts: check these (2;" in out.text
        assert "its text was replaced by a longer one on 2026-10-05" in out.text
        assert "written 2 more times before Engram kept merged texts" in engine.tools.get_memory(["m1"]).text
        with pytest.raises(InvalidArgument, match="texts counted on it were not kept"):
            engine.tools.tidy("unmerge", "m1")
    assert json.loads((folder / "workspace.json").read_text())["schema_version"] == SCHEMA_VERSION == 5


def test_tidy_refuses_what_it_cannot_do_and_changes_nothing(engine: Engine) -> None:
    tools = engine.tools
    a = tools.store("Alice owns the billing service", project="web").result.id
    b = tools.store("Bob owns the billing service", project="web").result.id
    other = tools.store("Carol owns the search service", project="ops").result.id
    with pytest.raises(InvalidArgument, match="needs 'others'"):
        tools.tidy("supersede", b)
    with pytest.raises(InvalidArgument, match="cannot supersede itself"):
        tools.tidy("supersede", b, others=[b])
    with pytest.raises(InvalidArgument, match="exactly one id"):
        tools.tidy("keep_both", b, others=[a, other])
    with pytest.raises(InvalidArgument, match="only memories of one project and kind are merged"):
        tools.tidy("merge", a, others=[other])
    assert all(m.superseded_by is None for m in tools.get_memory([a, b, other]).result.items)
    tools.tidy("merge", a, others=[b])
    with pytest.raises(InvalidArgument, match="is not merged into"):
        tools.tidy("unmerge", a, others=["ffffffffffff"])
    assert tools.get_memory([b]).result.items[0].superseded_by == a, "nothing was split"
