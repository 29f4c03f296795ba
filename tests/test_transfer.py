"""Export and import: a workspace to a portable folder and back, every field equal; peers' memories read in through
the store tool; dry runs write nothing; bad input is refused with a message before anything is written."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pyarrow as pa
import pytest

from benchmark.transfer import measure_round_trip
from engram.core import Engine, Paths, Settings
from engram.core.errors import ModelError, TransferRefused
from engram.core.store.queries import TABLE_KEYS
from engram.core.store.schema import SCHEMA_VERSION
from engram.core.transfer.export import partial_folder
from engram.core.transfer.folder import MANIFEST
from engram.core.transfer.values import arrow_table, json_rows
from engram.mcp.direct import DirectCalls

from .conftest import ENGRAM, FIXTURES, HashingEmbedder, cli_in_process, write_tree

PEERS = FIXTURES / "transfer"
TABLES = ("memories", "facts", "edges", "sources")
DEPLOY = ("# Deploy\n\nWe deploy with systemd units on Caroline's home server in Boston.\n\n## Rollback\n\n"
          + "Keep the previous release around. " * 40 + "\n\n## Monitoring\n\n" + "Grafana watches the queue. " * 40)


def populate(engine: Engine, home: Path) -> None:
    """Notes, exchanges, file chunks (one file forgotten), ingested text, current and ended facts, in two projects."""
    engine.call("store", {"content": "Caroline prefers tabs over spaces (see `editorconfig`)", "project": "style",
                          "type": "preference",
                          "tags": ["editor", "habits"], "title": "Indentation"})
    engine.call("store", {"content": "User: where do we deploy?\nAssistant: Boston, on systemd.", "kind": "exchange",
                          "project": "ops"})
    engine.call("store", {"content": "User: and rollbacks?\nAssistant: keep the previous release.", "kind": "exchange",
                          "project": "ops"})
    docs = write_tree(home / "docs", {"deploy.md": DEPLOY, "notes.txt": "Melanie runs the Lisbon office.",
                                      "secret.md": "forget me"})
    engine.call("ingest_path", {"path": str(docs), "project": "ops"})
    engine.call("delete", {"source": str((docs / "secret.md").resolve())})
    engine.call("ingest_content", {"content": "Minutes: we ship on Friday. Gina takes the release.",
                                   "title": "meeting 12 nov", "project": "ops"})
    engine.call("kg_edit", {"action": "add", "subject": "Caroline", "predicate": "lives_in", "object": "Boston",
                            "project": "style", "valid_from": "2024-05-01T10:00:00Z", "source": "a chat"})
    ended = engine.call("kg_edit", {"action": "add", "subject": "ops", "predicate": "deploys_with", "object": "ansible",
                                    "project": "ops"})
    engine.call("kg_edit", {"action": "end", "fact_id": ended.result.fact.id})  # type: ignore[attr-defined]


def tables(engine: Engine, workspace: str = "") -> dict[str, list[dict[str, Any]]]:
    """Every row of every exported table, every column (vectors as lists), sorted by key."""
    store = engine.store(workspace)
    return {name: sorted(store.table_data(name).to_pylist(), key=lambda r: r[TABLE_KEYS[name]])  # type: ignore[arg-type]
            for name in TABLES}


@pytest.fixture
def other(tmp_path: Path) -> Iterator[Engine]:
    """An engine on a second, fresh data folder (the machine an export is carried to)."""
    paths = Paths(data_dir=tmp_path / "other" / "data", config_dir=tmp_path / "other" / "config",
                  log_dir=tmp_path / "other" / "logs")
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as eng:
        yield eng


# ------------------------------------------------------------------ round trip


def test_export_then_import_into_a_fresh_data_folder_gives_back_every_field_of_every_row(
        engine: Engine, other: Engine, home: Path) -> None:
    populate(engine, home)
    before = tables(engine)
    assert {r["kind"] for r in before["memories"]} == {"note", "exchange", "chunk", "content"}
    assert {r["kind"] for r in before["sources"]} >= {"file", "excluded"} and any(r["ended"] for r in before["facts"])
    assert len(before["edges"]) > 10

    exported = engine.export_workspace(home / "backup")
    assert exported.counts.model_dump() == {name: len(rows) for name, rows in before.items()}
    imported = other.import_path(home / "backup")
    assert (imported.format, imported.added, imported.reembedded) == ("engram", exported.counts, 0)
    after = tables(other)
    for name in TABLES:
        assert after[name] == before[name], name  # every column: ids, times to the microsecond, vectors, tags …
    # The imported workspace answers as the first one does.
    hits = other.call("search", {"query": "where do we deploy", "limit": 3}).result.hits  # type: ignore[attr-defined]
    assert hits and hits[0].project == "ops"


def test_the_folder_holds_every_column_but_the_vector_and_the_vectors_in_the_same_order(
        engine: Engine, home: Path) -> None:
    populate(engine, home)
    engine.export_workspace(home / "backup")
    folder = home / "backup"
    manifest = json.loads((folder / MANIFEST).read_text())
    assert (manifest["format"], manifest["workspace"], manifest["project"], manifest["schema_version"]) == \
        (1, "default", None, SCHEMA_VERSION)
    assert manifest["embedding"]["model"] == "all-minilm-l6-v2" and manifest["embedding"]["dimensions"] == 384
    assert len(manifest["embedding"]["sha256"]) == 64 and manifest["not_exported"] == {
        "digests": "derived from the memories; Engram rebuilds them"}
    assert datetime.fromisoformat(manifest["exported_at"]).tzinfo is not None
    lines = [json.loads(line) for line in (folder / "memories.jsonl").read_text().splitlines()]
    schema = engine.store().memories_schema
    assert all(list(row) == [n for n in schema.names if n != "vector"] for row in lines)
    assert lines[0]["created_at"].endswith("Z") and datetime.fromisoformat(lines[0]["created_at"]).tzinfo == UTC
    vectors = np.fromfile(folder / "vectors.f32", dtype="<f4").reshape(len(lines), 384)
    stored = engine.store().memories_by_ids([r["id"] for r in lines], ["vector"])
    assert all(np.array_equal(vectors[i], np.asarray(stored[r["id"]]["vector"], np.float32))
               for i, r in enumerate(lines))
    markdown = sorted(p.relative_to(folder / "markdown").as_posix() for p in (folder / "markdown").rglob("*.md"))
    assert markdown == ["ops/chunk.md", "ops/content.md", "ops/exchange.md", "ops/facts.md", "style/facts.md",
                        "style/note.md"]
    note = (folder / "markdown" / "style" / "note.md").read_text()
    assert "## Indentation" in note and "Caroline prefers tabs over spaces" in note and "#editor #habits" in note
    assert "- Caroline — lives_in — Boston (from 2024-05-01 10:00 UTC;" in (folder / "markdown/style/facts.md").read_text()


def test_importing_the_same_export_again_adds_nothing_and_counts_what_was_there(engine: Engine, home: Path) -> None:
    populate(engine, home)
    exported = engine.export_workspace(home / "backup")
    first = engine.import_path(home / "backup", workspace="copy")
    again = engine.import_path(home / "backup", workspace="copy")
    assert first.added == exported.counts and first.already_there.model_dump() == dict.fromkeys(TABLES, 0)
    assert again.added.model_dump() == dict.fromkeys(TABLES, 0) and again.already_there == exported.counts
    assert tables(engine, "copy") == tables(engine)
    assert "already there, left as they are" in again.summary()


def test_a_file_the_workspace_indexed_itself_keeps_its_own_chunks(engine: Engine, home: Path) -> None:
    populate(engine, home)
    engine.export_workspace(home / "backup")
    deploy = str((home / "docs" / "deploy.md").resolve())
    (home / "docs" / "deploy.md").write_text("# Deploy\n\nWe moved to Kubernetes in Lisbon.\n")
    engine.call("ingest_path", {"path": str(home / "docs"), "project": "ops"})
    now = tables(engine)
    imported = engine.import_path(home / "backup")
    assert tables(engine) == now  # the export's old chunks of deploy.md (and their edges) stay out
    assert imported.added.model_dump() == dict.fromkeys(TABLES, 0)
    assert [r["content"] for r in now["memories"] if r["source"] == deploy] == [
        "# Deploy\n\nWe moved to Kubernetes in Lisbon."]


def test_an_export_of_one_project_holds_its_memories_facts_sources_and_edges_only(
        engine: Engine, other: Engine, home: Path) -> None:
    populate(engine, home)
    exported = engine.export_workspace(home / "style", project="style")
    assert exported.counts.model_dump() == {"memories": 1, "facts": 1, "edges": 1, "sources": 0}
    other.import_path(home / "style")
    rows = tables(other)
    everything = tables(engine)
    assert rows["memories"] == [r for r in everything["memories"] if r["project"] == "style"]
    assert rows["edges"] == [e for e in everything["edges"] if e["src"] == rows["memories"][0]["id"]]
    assert [f["subject"] for f in rows["facts"]] == ["Caroline"] and rows["sources"] == []


def test_vectors_of_another_model_are_made_again_by_this_workspaces_model(engine: Engine, home: Path,
                                                                          tmp_path: Path) -> None:
    class OtherModel(HashingEmbedder):
        model_id = "other-model"

    engine.call("store", {"content": "Caroline prefers tabs over spaces"})
    engine.export_workspace(home / "backup")
    embedder = OtherModel()
    paths = Paths(data_dir=tmp_path / "o" / "data", config_dir=tmp_path / "o" / "c", log_dir=tmp_path / "o" / "l")
    with Engine(paths, Settings(), embedder=embedder) as other:
        other.embedder()  # loaded, so the engine names it
        imported = other.import_path(home / "backup")
        row = other.store().table_data("memories").to_pylist()[0]
    assert imported.reembedded == 1 and "embedded again" in imported.summary()
    assert np.allclose(row["vector"], embedder.embed(["Caroline prefers tabs over spaces"])[0])


def test_columns_are_carried_by_their_types_so_a_later_column_needs_no_code(engine: Engine) -> None:
    schema = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("at", pa.timestamp("us", tz="UTC")),
                        pa.field("when", pa.list_(pa.timestamp("us", tz="UTC"))), pa.field("blob", pa.binary()),
                        pa.field("day", pa.date32()), pa.field("score", pa.float32()),
                        pa.field("meta", pa.struct([pa.field("n", pa.int64()), pa.field("t", pa.timestamp("us", tz="UTC"))]))])
    at = datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    table = pa.Table.from_pylist([{"id": "a", "at": at, "when": [at, at], "blob": b"\x00\xff", "day": at.date(),
                                   "score": 0.3, "meta": {"n": 2**40, "t": at}},
                                  {"id": "b", "at": None, "when": [], "blob": None, "day": None, "score": None,
                                   "meta": None}], schema=schema)
    rows = [json.loads(json.dumps(r)) for r in json_rows(table)]
    assert rows[0]["at"] == "2025-01-02T03:04:05.000006Z" and rows[0]["blob"] == "AP8="
    assert arrow_table(rows, schema, file="x.jsonl").equals(table)


# ------------------------------------------------------------------ interrupted exports


def test_an_interrupted_export_leaves_no_folder_that_looks_whole(engine: Engine, home: Path) -> None:
    populate(engine, home)
    target = home / "backup"

    def stop_after_memories(name: str) -> None:
        if name == "memories.jsonl":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        engine.export_workspace(target, progress=stop_after_memories)
    assert not target.exists() and not partial_folder(target).exists()
    # A process killed mid-export leaves its .partial folder (no manifest yet): the next export replaces it.
    partial_folder(target).mkdir()
    (partial_folder(target) / "memories.jsonl").write_text('{"id": "half')
    written: list[str] = []
    engine.export_workspace(target, progress=written.append)
    assert written[-1] == MANIFEST and not partial_folder(target).exists()
    assert (target / MANIFEST).is_file()


def test_an_export_refuses_a_folder_that_exists_and_a_partial_folder_that_is_not_its_own(
        engine: Engine, home: Path) -> None:
    (home / "taken").mkdir()
    with pytest.raises(TransferRefused, match="exists already; an export writes a new folder"):
        engine.export_workspace(home / "taken")
    partial_folder(home / "fresh").mkdir()
    (partial_folder(home / "fresh") / "thesis.docx").write_text("mine")
    with pytest.raises(TransferRefused, match="holds files an export does not write"):
        engine.export_workspace(home / "fresh")
    assert (partial_folder(home / "fresh") / "thesis.docx").read_text() == "mine"


# ------------------------------------------------------------------ dry runs


def test_a_dry_run_counts_and_writes_nothing(engine: Engine, home: Path) -> None:
    populate(engine, home)
    exported = engine.export_workspace(home / "backup")
    dry = engine.import_path(home / "backup", workspace="copy", dry_run=True)
    assert dry.dry_run and dry.added == exported.counts and "copy" not in engine.workspace_names()
    assert dry.summary().endswith("Nothing was written (--dry-run).")
    same = engine.import_path(home / "backup", dry_run=True)  # into the workspace it came from
    assert same.added.model_dump() == dict.fromkeys(TABLES, 0) and same.already_there == exported.counts
    for peer in ("claude-code/shop", "basic-memory/garden", "mem0/export.json"):
        counted = engine.import_path(PEERS / peer, workspace="peers", dry_run=True)
        assert counted.added.memories > 0
    assert "peers" not in engine.workspace_names() and tables(engine) == tables(engine)


# ------------------------------------------------------------------ peers' formats


def stored_notes(engine: Engine, workspace: str = "") -> list[tuple[str, str, str, list[str], str]]:
    rows = engine.store(workspace).memories(["project", "title", "type", "tags", "content", "created_at", "id"])
    return [(r["project"], r["title"], r["type"], r["tags"], r["content"])
            for r in sorted(rows, key=lambda r: (r["created_at"], r["id"]))]


def test_claude_code_md_sections_and_top_level_bullets_become_notes_of_the_folders_project(engine: Engine) -> None:
    imported = engine.import_path(PEERS / "claude-code" / "shop" / "CLAUDE.md")
    assert (imported.format, imported.added.memories, imported.notes) == ("claude-code", 6, ["into project shop"])
    tags = ["from:claude-code", "kind:note"]
    assert stored_notes(engine) == [
        ("shop", "Shop", "note", tags, "Instructions for working on the shop's web store. See @docs/architecture.md "
                                       "for the layout."),
        ("shop", "Shop", "note", tags, "Run the tests with `make test` before every commit."),
        ("shop", "Shop", "note", tags, "Use pnpm, never npm: the lockfile is pnpm's.\nWorkspaces live under "
                                       "packages/, each with its own lockfile entry."),
        ("shop", "Shop", "note", tags, "Money is stored as integer cents; never use floats for prices."),
        ("shop", "Code style", "note", tags, "- TypeScript strict mode everywhere.\n- Named exports only; no default "
                                             "exports.\n\n### Formatting\n\nPrettier runs on save; do not reformat "
                                             "files you did not change."),
        ("shop", "Deploying", "note", tags, "Deploys go through the `release` workflow:\n\n```bash\n# never deploy by "
                                            "hand\ngh workflow run release --ref main\n```"),
    ]


def test_claude_code_auto_memory_reads_the_index_and_topic_files_with_secrets_redacted(engine: Engine) -> None:
    folder = PEERS / "claude-code" / "projects" / "-home-ann-code-shop" / "memory"
    imported = engine.import_path(folder, project="shop")
    assert (imported.added.memories, imported.redacted) == (4, 1) and "1 secrets redacted" in imported.summary()
    notes = stored_notes(engine)
    assert [n[1:3] for n in notes] == [("Memory index", "note")] * 3 + [("Flaky checkout test", "project")]
    assert notes[2][4] == "Staging database: postgres://[REDACTED:url-password]@staging.db.internal:5432/shop"
    assert {n[0] for n in notes} == {"shop"}
    assert engine.import_path(folder, workspace="w", dry_run=True).notes == ["into project home-ann-code-shop"]


def test_basic_memory_observations_become_typed_notes_and_relations_become_facts(engine: Engine) -> None:
    imported = engine.import_path(PEERS / "basic-memory" / "garden")
    assert (imported.format, imported.added.memories, imported.added.facts) == ("basic-memory", 6, 4)
    assert imported.notes[1] == "1 [[link]] inside notes' text not made facts (a relation on its own line is one)"
    garden = ["garden", "soil", "from:basic-memory", "kind:note"]
    tomato = ["garden", "vegetables", "from:basic-memory", "kind:note"]
    assert stored_notes(engine) == [
        ("garden", "Compost Mix", "ratio", garden, "Three parts green waste to one part brown, turned every fortnight"),
        ("garden", "Compost Mix", "tip", ["free", *garden], "Coffee grounds from the cafe downstairs speed it up #free"),
        ("garden", "Tomato Growing", "note", tomato, "Notes from three summers of growing tomatoes on the balcony. "
                                                     "See also [[Balcony Layout]] for where the pots stand.\n\n"
                                                     "- [ ] buy more twine"),
        ("garden", "Tomato Growing", "technique", ["pruning", *tomato],
         "Pinch out side shoots weekly on cordon varieties #pruning"),
        ("garden", "Tomato Growing", "preference", tomato,
         "Cherry tomatoes ripen more reliably than beefsteak in our shade (balcony faces east)"),
        ("garden", "Tomato Growing", "problem", ["watering", *tomato],
         "Blossom end rot appeared when watering was irregular #watering"),
    ]
    facts = sorted((f["subject"], f["predicate"], f["object"], f["project"], f["source"])
                   for f in engine.store().facts())
    assert facts == [("Compost Mix", "part_of", "Tomato Growing", "garden", "basic-memory:compost-mix"),
                     ("Tomato Growing", "grows_in", "Balcony Layout", "garden", "basic-memory:tomato-growing"),
                     ("Tomato Growing", "links_to", "Seed Suppliers", "garden", "basic-memory:tomato-growing"),
                     ("Tomato Growing", "requires", "Compost Mix", "garden", "basic-memory:tomato-growing")]
    again = engine.import_path(PEERS / "basic-memory" / "garden")
    assert (again.added.facts, again.already_there.facts) == (0, 4) and len(engine.store().facts()) == 4


@pytest.mark.parametrize(("file", "expected"), [
    ("export.json", [
        ("export", "", "professional", ["professional_details", "user:dana", "from:mem0", "kind:note"],
         "Works at Northwind as a senior data engineer"),
        ("export", "", "preference", ["user_preferences", "work", "user:dana", "agent:calendar-helper", "from:mem0",
                                      "kind:note"], "Prefers meetings before 11am and written agendas"),
        ("export", "", "note", ["health", "user:dana", "from:mem0", "kind:note"], "Allergic to peanuts")]),
    ("list.json", [
        ("list", "", "note", ["user:lee", "from:mem0", "kind:note"], "Likes hiking in the Alps"),
        ("list", "", "note", ["user:lee", "from:mem0", "kind:note"], "Is learning Portuguese for a move to Lisbon")]),
])
def test_mem0_exports_become_notes_typed_and_tagged_from_their_metadata(engine: Engine, file: str,
                                                                        expected: list[Any]) -> None:
    imported = engine.import_path(PEERS / "mem0" / file)
    assert imported.format == "mem0" and imported.added.memories == len(expected)
    assert "created_at and updated_at are not kept" in imported.notes[1]
    assert stored_notes(engine) == expected


def test_a_peer_note_longer_than_store_takes_is_stored_in_parts(engine: Engine, home: Path) -> None:
    # ~30,000 characters, the two parts in different words (alike parts would be one memory: a near duplicate)
    long = "\n".join(f"line {i}:" + (f" alpha{i}" if i < 150 else f" omega{i}") * 9 for i in range(300))
    (home / "big").mkdir()
    (home / "big" / "CLAUDE.md").write_text(f"## Long\n\n{long}\n")
    imported = engine.import_path(home / "big")
    notes = stored_notes(engine)
    assert imported.added.memories == 2 == len(notes)
    assert [n[1] for n in notes] == ["Long (part 1 of 2)", "Long (part 2 of 2)"]
    assert "\n".join(n[4].rstrip("\n") for n in notes) == long


# ------------------------------------------------------------------ bad input


@pytest.fixture
def export_folder(engine: Engine, home: Path) -> Path:
    populate(engine, home)
    engine.export_workspace(home / "backup")
    return home / "backup"


def refused(engine: Engine, path: Path, **kwargs: Any) -> str:
    """The message of the refusal of importing ``path`` into workspace ``target``, which stays without a row."""
    with pytest.raises(TransferRefused) as caught:
        engine.import_path(path, workspace="target", **kwargs)
    assert "target" not in engine.workspace_names() or engine.store("target").count_memories() == 0
    return caught.value.message


def test_a_missing_path_is_refused_naming_what_is_read(engine: Engine, home: Path) -> None:
    message = refused(engine, home / "nowhere")
    assert message.startswith(f"No file or folder at {home / 'nowhere'}. engram import reads an Engram export folder")
    assert "a mem0 export (.json)" in message and message.endswith("Nothing was imported.")


def test_unreadable_json_and_wrong_shapes_are_refused(engine: Engine, home: Path) -> None:
    (home / "bad.json").write_text("{not json")
    assert "bad.json is not JSON" in refused(engine, home / "bad.json")
    (home / "shape.json").write_text('{"memories": []}')
    assert 'shape.json is JSON but not mem0\'s export: {"results"' in refused(engine, home / "shape.json")
    (home / "item.json").write_text('{"results": [{"memory": "fine"}, {"text": "no memory"}]}')
    assert "item.json: item 2 has no 'memory' text" in refused(engine, home / "item.json")
    (home / "notes.txt").write_text("hello")
    assert "notes.txt is none of the files engram import reads" in refused(engine, home / "notes.txt")


def test_a_manifest_of_a_newer_format_or_not_engrams_is_refused(engine: Engine, export_folder: Path) -> None:
    manifest = json.loads((export_folder / MANIFEST).read_text())
    (export_folder / MANIFEST).write_text(json.dumps({**manifest, "format": 2, "engram_version": "9.0"}))
    assert "exported by a newer Engram (9.0, export format 2); this Engram" in refused(engine, export_folder)
    (export_folder / MANIFEST).write_text('{"name": "some other tool"}')
    assert "is not the manifest of an Engram export" in refused(engine, export_folder)
    (export_folder / MANIFEST).write_text(json.dumps({**manifest, "schema_version": 99}))
    engine.import_path(export_folder, workspace="target", dry_run=True)  # a newer store schema alone is no refusal


def test_a_damaged_or_incomplete_export_is_refused_before_anything_is_written(engine: Engine,
                                                                               export_folder: Path) -> None:
    memories = export_folder / "memories.jsonl"
    lines = memories.read_text().splitlines()
    memories.write_text("\n".join(lines[:-1]) + "\n")
    assert "memories.jsonl holds" in refused(engine, export_folder) and "the manifest says" in refused(
        engine, export_folder)
    memories.write_text("\n".join([*lines[:-1], "{broken"]) + "\n")
    assert f"memories.jsonl: line {len(lines)} is not JSON" in refused(engine, export_folder)
    row = json.loads(lines[0])
    memories.write_text("\n".join([json.dumps({**row, "created_at": "yesterday"}), *lines[1:]]) + "\n")
    assert "memories.jsonl: row 1: 'created_at' is not timestamp[us, tz=UTC]" in refused(engine, export_folder)
    memories.write_text("\n".join([json.dumps({**row, "mood": "happy"}), *lines[1:]]) + "\n")
    assert "has columns this Engram's store does not have (mood)" in refused(engine, export_folder)
    memories.write_text("\n".join(lines) + "\n")
    vectors = (export_folder / "vectors.f32").read_bytes()
    (export_folder / "vectors.f32").write_bytes(vectors[:-4])
    assert "vectors.f32 holds" in refused(engine, export_folder)
    (export_folder / "vectors.f32").write_bytes(vectors)
    (export_folder / "facts.jsonl").unlink()
    assert "facts.jsonl is missing" in refused(engine, export_folder)


def test_vectors_of_another_model_without_an_embedding_model_are_refused(export_folder: Path, tmp_path: Path) -> None:
    manifest = json.loads((export_folder / MANIFEST).read_text())
    manifest["embedding"]["model"] = "someone-elses-model"
    (export_folder / MANIFEST).write_text(json.dumps(manifest))

    def no_model() -> Any:
        raise ModelError("the model file is missing")

    paths = Paths(data_dir=tmp_path / "o" / "data", config_dir=tmp_path / "o" / "c", log_dir=tmp_path / "o" / "l")
    with Engine(paths, Settings(), embedder_loader=no_model) as other:
        message = refused(other, export_folder)
    assert message.startswith("The export holds someone-elses-model (384 dimensions), this workspace uses "
                              "all-minilm-l6-v2 (384 dimensions), and the ")
    assert "cannot be embedded again: the embedding model is unavailable (the model file is missing)" in message


def test_project_is_refused_for_an_engram_export(engine: Engine, export_folder: Path) -> None:
    assert "an Engram export keeps each memory's own project" in refused(engine, export_folder, project="x")


# ------------------------------------------------------------------ the CLI and the service's endpoint


def test_engram_export_and_import_on_the_command_line(env: dict[str, str], tmp_path: Path) -> None:
    assert cli_in_process(env, "remember", "Prefer tabs over spaces", "--project", "style").returncode == 0
    out = cli_in_process(env, "export", str(tmp_path / "backup"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"exported default to {tmp_path / 'backup'}: 1 memory")
    again = cli_in_process(env, "export", str(tmp_path / "backup"))
    assert again.returncode == 2 and again.stderr.startswith("engram: Cannot export: ")
    doc = json.loads(cli_in_process(env, "import", str(tmp_path / "backup"), "-w", "copy", "--json").stdout)
    assert doc["command"] == "import" and doc["result"]["added"]["memories"] == 1
    assert doc["text"].startswith(f"imported {tmp_path / 'backup'} (Engram export) into copy: 1 memory")
    dry = cli_in_process(env, "import", str(PEERS / "mem0" / "export.json"), "--dry-run")
    assert dry.returncode == 0 and "would import" in dry.stdout and "Nothing was written (--dry-run)." in dry.stdout
    missing = cli_in_process(env, "import", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.startswith("engram: Cannot import: No file or folder at")


def _direct(engine: Engine, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines the service's CLI endpoint answers ``body`` with."""
    sent: list[dict[str, Any]] = []
    request = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]

    async def receive() -> dict[str, Any]:
        return request.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(DirectCalls(engine), {"type": "http", "method": "POST"}, receive, send)
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def test_a_running_service_exports_and_imports_for_the_command_line(engine: Engine, home: Path) -> None:
    engine.call("store", {"content": "Prefer tabs over spaces"})
    (export,) = _direct(engine, {"transfer": "export", "arguments": {"folder": str(home / "backup")}})
    assert export["transfer"]["result"]["counts"]["memories"] == 1 and export["transfer"]["text"].startswith("exported")
    (imported,) = _direct(engine, {"transfer": "import", "arguments": {"path": str(home / "backup"),
                                                                      "workspace": "copy"}})
    assert imported["transfer"]["result"]["added"]["memories"] == 1
    (bad,) = _direct(engine, {"transfer": "import", "arguments": {"path": str(home / "nowhere")}})
    assert (bad["error"]["type"], bad["error"]["refused"]) == ("TransferRefused", True)
    (unknown,) = _direct(engine, {"transfer": "sync", "arguments": {}})
    assert unknown["error"]["message"] == "Unknown transfer 'sync': it is export or import."


@pytest.mark.slow  # a real service process
def test_the_command_line_imports_through_the_running_service(env: dict[str, str], service: subprocess.Popen[bytes],
                                                              tmp_path: Path) -> None:
    run = [*ENGRAM, "import", str(PEERS / "mem0" / "list.json"), "--project", "lee"]
    out = subprocess.run(run, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"imported {PEERS / 'mem0' / 'list.json'} (mem0 export) into default: 2 memories")
    exported = subprocess.run([*ENGRAM, "export", str(tmp_path / "backup"), "--json"], env=env, capture_output=True,
                              text=True, timeout=300)
    assert json.loads(exported.stdout)["result"]["counts"]["memories"] == 2
    log = (Path(env["ENGRAM_LOG_DIR"]) / "service.log").read_text()
    assert "direct call of import" in log and "direct call of export" in log


def test_the_round_trip_measure_finds_every_field_equal(tmp_path: Path) -> None:
    measured = measure_round_trip(150, folder=tmp_path)
    assert (measured["memories"], measured["facts"], measured["equal"]) == (150, 1, True)
    assert measured["export_s"] > 0 and measured["import_s"] > 0
