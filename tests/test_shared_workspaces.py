"""Shared workspaces in an S3-compatible bucket, against a real S3 server on loopback (moto's server mode).

Several machines are several engines with data folders of their own (and, for concurrent writes, processes of
their own); the bucket is the one thing they share.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import keyring
import pytest

from benchmark.reliability import two_machines_storing
from engram.core import Engine, Paths, Settings
from engram.core.embedding.llama_embedder import LlamaEmbedder
from engram.core.errors import InvalidArgument, WorkspaceError, WorkspaceNotFound
from engram.core.store import inspection
from engram.core.store.bucket_access import BucketCredentials, stored_credentials
from engram.core.store.bucket_errors import (
    BucketCredentialsRefused,
    BucketForbidden,
    BucketMissing,
    BucketUnreachable,
)
from engram.core.store.location import BucketLocation
from engram.core.store.workspace import UNREACHABLE_HOLD_SEC
from standins.s3 import OPEN_KEY, LoopbackS3

from .conftest import HashingEmbedder, cli_in_process, write_tree

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
ENV = {"AWS_ACCESS_KEY_ID": OPEN_KEY[0], "AWS_SECRET_ACCESS_KEY": OPEN_KEY[1]}


@pytest.fixture
def s3() -> Iterator[LoopbackS3]:
    server = LoopbackS3()
    server.create_bucket("team-memory")
    try:
        yield server
    finally:
        server.close()


def machine(tmp_path: Path, name: str, environ: dict[str, str] | None = None, **settings: object) -> Engine:
    """One machine's engine: a data folder of its own, the hashing embedder, AWS keys in its environment."""
    base = tmp_path / name
    return Engine(Paths(base / "data", base / "config", base / "logs"), Settings.model_validate(settings),
                  embedder=HashingEmbedder(), environ=ENV if environ is None else environ)


def location(s3: LoopbackS3, prefix: str = "engram/backend") -> BucketLocation:
    return BucketLocation.parse(f"s3://team-memory/{prefix}", endpoint=s3.endpoint)


def contents(engine: Engine, workspace: str = "team") -> list[str]:
    store = engine.store(workspace)
    return [r["content"] for r in inspection.rows(store, "memories", None, ["content"])]


def until_reachable(call: Callable[[], T]) -> T:
    """``call`` once the bucket answers again: a workspace found unreachable is not asked again for a few seconds."""
    deadline = time.monotonic() + UNREACHABLE_HOLD_SEC + 30
    while True:
        try:
            return call()
        except BucketUnreachable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


@pytest.mark.slow
def test_the_loopback_bucket_lets_exactly_one_of_two_concurrent_conditional_puts_of_a_key_win(
        s3: LoopbackS3, monkeypatch: pytest.MonkeyPatch) -> None:
    """The concurrent-writers test means something only if a manifest PUT with ``If-None-Match: *`` is one atomic step,
    as on AWS. moto looks for the key and then writes it; a pause between the two gives two writers every chance
    to pass the check together."""
    from moto.s3.models import S3Backend

    checked = S3Backend.get_object

    def slow_check(self: S3Backend, *args: object, **kwargs: object) -> object:
        found = checked(self, *args, **kwargs)
        time.sleep(0.2)  # between looking for the key and writing it
        return found

    monkeypatch.setattr(S3Backend, "get_object", slow_check)
    clients = [s3.client(), s3.client()]
    for attempt in range(3):
        key = f"engram/race/_versions/{attempt}.manifest"
        start = threading.Barrier(2)
        codes: list[int] = []
        writers = [threading.Thread(target=conditional_put, args=(client, key, f"writer {n}".encode(), start, codes))
                   for n, client in enumerate(clients)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=30)
        assert sorted(codes) == [200, 412], codes
        stored = s3.client().get_object(Bucket="team-memory", Key=key)["Body"].read()
        assert stored in (b"writer 0", b"writer 1")


def conditional_put(client: Any, key: str, body: bytes, start: threading.Barrier, codes: list[int]) -> None:
    """PUT ``body`` to ``key`` unless it exists, once ``start`` lets every writer go; appends the HTTP status."""
    from botocore.exceptions import ClientError

    start.wait()
    try:
        client.put_object(Bucket="team-memory", Key=key, Body=body, IfNoneMatch="*")
        codes.append(200)
    except ClientError as exc:
        codes.append(exc.response["ResponseMetadata"]["HTTPStatusCode"])


@pytest.mark.slow
def test_two_engines_in_two_processes_store_notes_at_once_and_both_see_every_note_once(
        s3: LoopbackS3, tmp_path: Path) -> None:
    """The scenario of `python -m benchmark reliability` (500 notes each there), at a test's size."""
    report = two_machines_storing(tmp_path, s3.endpoint, "s3://team-memory/engram/concurrent", notes=100)
    assert report["stored"] == {"alpha": 100, "beta": 100} and report["errors"] == []
    for tag, view in report["views"].items():  # each machine, opened again, sees every note of both exactly once
        assert (view["missing_count"], view["twice_count"], view["notes"]) == (0, 0, 200), (
            f"{tag} misses {view['missing_count']} notes and sees {view['twice_count']} twice; the first: "
            f"{view['missing'][:5]} {view['twice'][:5]}")
        assert view["search_finds_the_last_note"]


@pytest.mark.slow
def test_two_writers_of_a_shared_workspace_storing_forty_numbered_notes_find_forty(
        s3: LoopbackS3, tmp_path: Path, real_embedder: LlamaEmbedder) -> None:
    """Notes alike but for their number (MiniLM: 0.96–0.99 alike) came back as 4 when a near duplicate was judged
    by its vector alone; each number is a detail that must agree (issue 49)."""
    where = location(s3, "engram/numbered")
    writers = []
    for name in ("a", "b"):
        base = tmp_path / name
        settings = Settings()
        settings.store.shared_read_consistency_sec = 0  # the other writer's last note is seen at once
        writers.append(Engine(Paths(base / "data", base / "config", base / "logs"), settings,
                              embedder=real_embedder, environ=ENV))
    try:
        for engine in writers:
            engine.add_shared_workspace("team", where)
        written = [writers[n % 2].call("store", {"content": f"shared note {'ab'[n % 2]}{n // 2 + 1} about the zebra "
                                                               "project", "workspace": "team"}).result
                   for n in range(40)]
        assert [w.duplicate_of for w in written] == [None] * 40
        for engine in writers:
            assert sorted(contents(engine)) == sorted(f"shared note {t}{i} about the zebra project"
                                                      for t in "ab" for i in range(1, 21))
    finally:
        for engine in writers:
            engine.close()


@pytest.mark.slow
def test_machines_creating_one_new_shared_workspace_at_the_same_moment_all_join_it(
        s3: LoopbackS3, tmp_path: Path) -> None:
    """Each creates the tables and the full-text index of an empty prefix; the commits that lose those races are
    tried again, and every machine ends up in the one workspace, able to write and to find by words."""
    for round_ in range(3):
        where = location(s3, f"engram/joined-{round_}")
        engines = [machine(tmp_path / f"round-{round_}", f"m{n}") for n in range(3)]
        try:
            assert join_all_at_once(engines, where) == []
            for n, engine in enumerate(engines):
                engine.call("store", {"content": f"machine {n} keeps the deploy checklist {round_}",
                                      "workspace": "team"})
            assert all(engine.store("team").has_fts() for engine in engines)
            expected = [f"machine {n} keeps the deploy checklist {round_}" for n in range(3)]
            deadline = time.monotonic() + 30  # the others' notes show up within the read-consistency interval
            while True:
                hits = engines[0].call("search", {"query": "deploy checklist", "workspace": "team",
                                                  "channels": ["lexical"], "limit": 5}).result.hits
                if sorted(h.content for h in hits) == expected or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert sorted(h.content for h in hits) == expected
        finally:
            for engine in engines:
                engine.close()


def join_all_at_once(engines: list[Engine], where: BucketLocation) -> list[str]:
    """Every engine adds shared workspace 'team' at ``where`` at the same moment (one thread each); their failures."""
    start = threading.Barrier(len(engines))
    failures: list[str] = []

    def join(engine: Engine) -> None:
        start.wait()
        try:
            engine.add_shared_workspace("team", where)
        except Exception as exc:  # the caller's assertion shows every machine's failure
            failures.append(f"{type(exc).__name__}: {exc}")

    joiners = [threading.Thread(target=join, args=(engine,)) for engine in engines]
    for joiner in joiners:
        joiner.start()
    for joiner in joiners:
        joiner.join(timeout=120)
    return failures


@pytest.mark.slow
def test_machines_opening_an_older_shared_workspace_at_the_same_moment_all_migrate_it_once(
        s3: LoopbackS3, tmp_path: Path) -> None:
    """A schema-2 workspace in the bucket (full-text index on content alone), opened by three upgraded machines at
    once: each may try the migration's steps; the losers of its commit races try again and find it done."""
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    from engram.core.store.bucket_access import storage_options
    from engram.core.store.opening import META_TABLE
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

    where = location(s3, "engram/older")
    db = lancedb.connect(where.uri, storage_options=storage_options(where, BucketCredentials(*OPEN_KEY)))
    db.create_table(META_TABLE, data=pa.Table.from_pylist(
        [{"key": "schema_version", "value": "2"}, {"key": "dimensions", "value": "384"},
         {"key": "embed_model", "value": "all-minilm-l6-v2"}]))
    old = pa.schema([f for f in memories_schema(384) if f.name != "search_text" and f not in UPKEEP_FIELDS
                     and f not in MERGE_FIELDS])
    now = datetime(2026, 11, 2, tzinfo=UTC)
    vector = HashingEmbedder().embed(["Release checklist\nTag the release, then publish the notes."])[0]
    memories = db.create_table("memories", data=pa.Table.from_pylist([{
        "id": "m1", "project": "", "source": "", "kind": "note", "type": "note", "tags": [], "title": "Release checklist",
        "content": "Tag the release, then publish the notes.", "vector": vector.tolist(), "created_at": now,
        "updated_at": now, "content_hash": "m1", "chunk_index": 0, "start_line": 0, "end_line": 0}], schema=old))
    memories.create_index("content", config=FTS(with_position=False, stem=True, remove_stop_words=True,
                                                ascii_folding=True))
    for name, schema in (("sources", SOURCES_SCHEMA), ("facts", FACTS_SCHEMA), ("edges", EDGES_SCHEMA),
                         ("digests", DIGESTS_SCHEMA)):
        db.create_table(name, schema=schema)

    engines = [machine(tmp_path, f"m{n}") for n in range(3)]
    try:
        assert join_all_at_once(engines, where) == []
        for engine in engines:
            store = engine.store("team")
            assert [(i.columns, i.index_type) for i in inspection.indexes(store, "memories")] == [(["search_text"], "FTS")]
            hits = engine.call("search", {"query": "release checklist", "workspace": "team",
                                          "channels": ["lexical"]}).result.hits
            assert [h.id for h in hits] == ["m1"]  # "checklist" is in its title alone
        meta = {r["key"]: r["value"] for r in db.open_table(META_TABLE).to_arrow().to_pylist()}
        assert meta["schema_version"] == str(SCHEMA_VERSION)
        assert db.open_table("memories").count_rows() == 1
    finally:
        for engine in engines:
            engine.close()


@pytest.mark.slow
def test_a_folder_ingested_into_a_shared_workspace_is_found_from_another_machine(
        s3: LoopbackS3, tmp_path: Path) -> None:
    project = write_tree(tmp_path / "alice-home" / "proj", {
        "docs/deploy.md": "# Deploying\n\nWe deploy with blue-green switches behind the load balancer.\n",
        "docs/rollback.md": "# Rolling back\n\nA rollback flips the balancer back to the previous colour.\n",
        "src/app.py": "def handler(event):\n    return {'status': 'ok'}\n"})
    with machine(tmp_path, "alice", ingest={"allowed_roots": [str(tmp_path / "alice-home")]}) as alice, \
            machine(tmp_path, "bob") as bob:
        alice.add_shared_workspace("team", location(s3))
        report = alice.call("ingest_path", {"path": str(project), "project": "proj", "workspace": "team"}).result
        assert report.files_indexed == 3
        bob.add_shared_workspace("team", location(s3))
        hits = bob.call("search", {"query": "how do we roll back a deploy", "workspace": "team"}).result.hits
        assert hits and hits[0].source.endswith("docs/rollback.md")
        status = bob.call("status", {"workspace": "team"}).text
        assert "shared: s3://team-memory/engram/backend at http://127.0.0.1" in status
        assert "memories" in status and "3 sources" in status
        assert bob.call("status", {}).text.count("shared:") == 0  # the local default workspace says its folder


@pytest.mark.slow
def test_another_machines_note_shows_up_within_the_read_consistency_interval(s3: LoopbackS3, tmp_path: Path) -> None:
    with machine(tmp_path, "alice") as alice, machine(tmp_path, "bob", store={"shared_read_consistency_sec": 0}) as bob:
        alice.add_shared_workspace("team", location(s3))
        bob.add_shared_workspace("team", location(s3))
        assert bob.call("search", {"query": "espresso", "workspace": "team"}).result.hits == []
        alice.call("store", {"content": "The office espresso machine needs descaling monthly", "workspace": "team"})
        hits = bob.call("search", {"query": "espresso", "workspace": "team"}).result.hits
        assert [h.content for h in hits] == ["The office espresso machine needs descaling monthly"]


@pytest.mark.slow
def test_the_bucket_stopped_mid_run_fails_clearly_local_work_goes_on_and_a_restart_brings_everything_back(
        s3: LoopbackS3, tmp_path: Path) -> None:
    with machine(tmp_path, "alice") as alice:
        alice.add_shared_workspace("team", location(s3))
        alice.call("store", {"content": "Release trains leave every second Tuesday", "workspace": "team"})
        alice.call("store", {"content": "My local note about the dentist"})
        s3.stop()
        started = time.monotonic()
        with pytest.raises(BucketUnreachable) as searched:
            alice.call("search", {"query": "release trains", "workspace": "team"})
        assert time.monotonic() - started < 30
        assert searched.value.message.startswith("Shared workspace 'team' cannot be reached (s3://team-memory/")
        assert "no connection to its storage could be made" in searched.value.message
        assert "\n" not in searched.value.message
        started = time.monotonic()
        with pytest.raises(BucketUnreachable) as stored:
            alice.call("store", {"content": "written while the bucket was away", "workspace": "team"})
        assert stored.value.message.endswith("Nothing was written.")
        assert time.monotonic() - started < 1.0, "moments after a failure, the next call does not wait again"
        for tool, args in (("recall", {"question": "when do release trains leave?"}), ("list_sources", {}),
                           ("wake_up", {}), ("kg_query", {})):
            with pytest.raises(BucketUnreachable):  # every tool says the one thing, none a library error
                alice.call(tool, {**args, "workspace": "team"})
        # The other workspaces keep working meanwhile, reads and writes.
        alice.call("store", {"content": "Another local note, about the plumber"})
        assert len(alice.call("search", {"query": "plumber dentist note"}).result.hits) == 2
        places = {p.name: p for p in alice.workspace_places()}
        assert places["team"].reachable is False and "cannot be reached" in places["team"].problem
        assert places["default"].reachable is True
        s3.start()
        hits = until_reachable(lambda: alice.call("search", {"query": "release trains", "workspace": "team"})).result.hits
        assert [h.content for h in hits] == ["Release trains leave every second Tuesday"]
        alice.call("store", {"content": "Written once the bucket was back", "workspace": "team"})
        assert sorted(contents(alice)) == ["Release trains leave every second Tuesday",
                                           "Written once the bucket was back"]


@pytest.mark.slow
def test_a_workspace_added_while_the_bucket_is_down_is_not_registered(s3: LoopbackS3, tmp_path: Path) -> None:
    s3.stop()
    with machine(tmp_path, "alice") as alice:
        with pytest.raises(BucketUnreachable) as unreachable:
            alice.add_shared_workspace("team", location(s3))
        assert unreachable.value.message.endswith("Workspace 'team' was not added.")
        assert alice.workspace_names() == []
        assert not (tmp_path / "alice" / "data" / "workspaces" / "team").exists()


@pytest.mark.slow
def test_bad_credentials_are_refused_clearly_and_nothing_is_written(s3: LoopbackS3, tmp_path: Path) -> None:
    key_id, secret = s3.user("writer", ["s3:*"])
    s3.enforce_auth()
    for environ, fragment in (({"AWS_ACCESS_KEY_ID": key_id, "AWS_SECRET_ACCESS_KEY": "not-the-secret"},
                               "the key id is unknown or the secret does not match"),
                              ({"AWS_ACCESS_KEY_ID": "AKIAUNKNOWN0000000000", "AWS_SECRET_ACCESS_KEY": secret},
                               "the key id is unknown or the secret does not match")):
        with machine(tmp_path, "mallory", environ=environ) as engine:
            with pytest.raises(BucketCredentialsRefused) as refused:
                engine.add_shared_workspace("team", location(s3))
            assert fragment in refused.value.message and "engram workspace add team" in refused.value.message
            assert engine.workspace_names() == []
    objects = s3.client("s3", (key_id, secret)).list_objects_v2(Bucket="team-memory").get("KeyCount", 0)
    assert objects == 0
    with machine(tmp_path, "alice", environ={"AWS_ACCESS_KEY_ID": key_id, "AWS_SECRET_ACCESS_KEY": secret}) as alice:
        alice.add_shared_workspace("team", location(s3))
        alice.call("store", {"content": "Signed properly", "workspace": "team"})
        assert contents(alice) == ["Signed properly"]


@pytest.mark.slow
def test_a_read_only_key_can_search_but_a_write_is_refused_naming_the_permission(
        s3: LoopbackS3, tmp_path: Path) -> None:
    writer = s3.user("writer", ["s3:*"])
    reader = s3.user("reader", ["s3:GetObject", "s3:ListBucket"])
    s3.enforce_auth()
    with machine(tmp_path, "alice", environ={"AWS_ACCESS_KEY_ID": writer[0], "AWS_SECRET_ACCESS_KEY": writer[1]}) as a:
        a.add_shared_workspace("team", location(s3))
        a.call("store", {"content": "Only writers may add notes", "workspace": "team"})
    with machine(tmp_path, "guest", environ={"AWS_ACCESS_KEY_ID": reader[0], "AWS_SECRET_ACCESS_KEY": reader[1]}) as g:
        g.add_shared_workspace("team", location(s3))
        assert [h.content for h in g.call("search", {"query": "writers notes", "workspace": "team"}).result.hits] \
            == ["Only writers may add notes"]
        with pytest.raises(BucketForbidden) as refused:
            g.call("store", {"content": "A guest's note", "workspace": "team"})
        assert "is not allowed to write to s3://team-memory/engram/backend" in refused.value.message
        assert "s3:PutObject" in refused.value.message
    s3.open_auth()
    with machine(tmp_path, "alice") as a:
        assert contents(a) == ["Only writers may add notes"]


@pytest.mark.slow
def test_a_missing_bucket_and_missing_keys_say_what_to_fix(s3: LoopbackS3, tmp_path: Path) -> None:
    with machine(tmp_path, "alice") as alice:
        with pytest.raises(BucketMissing) as missing:
            alice.add_shared_workspace("team", BucketLocation.parse("s3://no-such-bucket/x", endpoint=s3.endpoint))
        assert "The bucket 'no-such-bucket' of shared workspace 'team' does not exist at http://127.0.0.1" \
            in missing.value.message
    with machine(tmp_path, "bob", environ={}) as bob:
        with pytest.raises(WorkspaceError) as no_key:
            bob.add_shared_workspace("team", location(s3))
        assert no_key.value.title == "Bucket credentials missing"
        assert "AWS_ACCESS_KEY_ID" in no_key.value.message and "--access-key-id" in no_key.value.message


@pytest.mark.slow
def test_a_key_given_once_is_kept_in_the_keyring_and_a_later_engine_uses_it(s3: LoopbackS3, tmp_path: Path) -> None:
    with machine(tmp_path, "alice", environ={}) as alice:
        alice.add_shared_workspace("team", location(s3), BucketCredentials(*OPEN_KEY))
        alice.call("store", {"content": "Kept with a key from the keyring", "workspace": "team"})
    assert stored_credentials("team") == BucketCredentials(*OPEN_KEY)
    assert OPEN_KEY[1] not in (tmp_path / "alice" / "data" / "workspaces" / "team" / "location.json").read_text()
    assert OPEN_KEY[1] not in repr(stored_credentials("team"))
    with machine(tmp_path, "alice", environ={}) as again:
        assert contents(again) == ["Kept with a key from the keyring"]
        again.remove_shared_workspace("team")
        assert again.workspace_names() == []
        assert keyring.get_password("engram", "workspace:team") is None
        with pytest.raises(WorkspaceNotFound):
            again.call("search", {"query": "key", "workspace": "team"})


@pytest.mark.slow
def test_names_and_locations_are_checked_before_anything_is_contacted(s3: LoopbackS3, tmp_path: Path) -> None:
    for uri, fragment in (("https://team-memory/x", "is not a bucket location"),
                          ("s3://Team_Memory/x", "is not a valid bucket name"),
                          ("s3://team-memory/../x", "is not a usable prefix")):
        with pytest.raises(InvalidArgument) as refused:
            BucketLocation.parse(uri)
        assert fragment in refused.value.message and "s3://BUCKET/PREFIX" in refused.value.message
    with pytest.raises(InvalidArgument, match="is not an endpoint URL"):
        BucketLocation.parse("s3://team-memory/x", endpoint="minio.local:9000")
    with machine(tmp_path, "alice") as alice:
        alice.call("store", {"content": "a local note"})
        with pytest.raises(InvalidArgument, match="already exists on this computer as a local workspace"):
            alice.add_shared_workspace("default", location(s3))
        alice.add_shared_workspace("team", location(s3))
        with pytest.raises(InvalidArgument, match="is already shared at s3://team-memory/engram/backend"):
            alice.add_shared_workspace("team", location(s3, "elsewhere"))


def test_a_prefix_holding_other_tables_is_refused(s3: LoopbackS3, tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    from engram.core.store.bucket_access import storage_options

    foreign = location(s3, "analytics")
    db = lancedb.connect(foreign.uri, storage_options=storage_options(foreign, BucketCredentials(*OPEN_KEY)))
    db.create_table("events", data=pa.table({"x": [1, 2]}))
    with machine(tmp_path, "alice") as alice:
        with pytest.raises(WorkspaceError, match="holds tables that are not an Engram workspace"):
            alice.add_shared_workspace("team", foreign)


@pytest.mark.slow
def test_the_command_line_adds_lists_uses_and_removes_a_shared_workspace(
        s3: LoopbackS3, tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the CLI's entry function in this process, with no OS keyring (keyring's fail backend)."""
    import os
    import shutil

    import keyring
    from keyring.backends.fail import Keyring as NoKeyring

    monkeypatch.setattr(keyring.core, "_keyring_backend", NoKeyring())

    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    shutil.copy(model_file, models / model_file.name)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "AWS_"))}
    env = {**clean, "ENGRAM_DATA_DIR": str(tmp_path / "data"), "ENGRAM_CONFIG_DIR": str(tmp_path / "config"),
           "ENGRAM_EMBED_THREADS": "2", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}

    def engram(*args: str, stdin: str | None = None, keys: bool = True) -> subprocess.CompletedProcess[str]:
        return cli_in_process({**env, **(ENV if keys else {})}, *args, stdin=stdin)

    uri = "s3://team-memory/engram/cli"
    no_keyring = engram("workspace", "add", "team", "--uri", uri, "--endpoint", s3.endpoint, "--access-key-id",
                        OPEN_KEY[0], stdin=OPEN_KEY[1] + "\n", keys=False)
    assert no_keyring.returncode == 1 and no_keyring.stdout == ""
    assert no_keyring.stderr.startswith("engram: Keyring unavailable: The OS keyring refused the access key")
    added = engram("workspace", "add", "team", "--uri", uri, "--endpoint", s3.endpoint)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith(f"shared workspace team: {uri} at {s3.endpoint}; it is empty; its access key "
                                   "comes from the environment.")
    assert engram("remember", "The staging database is rebuilt every night", "-w", "team").returncode == 0
    found = engram("search", "when is staging rebuilt", "-w", "team")
    assert found.returncode == 0 and "The staging database is rebuilt every night" in found.stdout
    listed = engram("workspace", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [f"team  shared · 1 memory         {uri} at {s3.endpoint}"]
    s3.stop()
    down = engram("search", "staging", "-w", "team")
    assert down.returncode == 1
    assert down.stderr.startswith("engram: Shared workspace unreachable: Shared workspace 'team' cannot be reached")
    assert len(down.stderr.strip().splitlines()) == 1
    assert "not reachable" in engram("workspace", "list").stdout
    bad = engram("workspace", "add", "ops", "--uri", "http://team-memory/ops")
    assert bad.returncode == 2 and "is not a bucket location" in bad.stderr
    s3.start()
    removed = engram("workspace", "remove", "team")
    assert removed.returncode == 0 and f"{uri} keeps every memory" in removed.stdout
    assert engram("workspace", "list", "--json").stdout.strip() == "[]"
