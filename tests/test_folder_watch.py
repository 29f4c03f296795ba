"""Ingested folders kept current: real file changes, seen by the real watch, re-ingested or forgotten."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.capture.folder_watch import Batch, Watched, batches, include_patterns
from standins.embedder import HashingEmbedder
from tests.conftest import wait_for, write_tree

QUIET = {"watch": {"quiet_sec": 0.3}}


def _sources(engine: Engine) -> set[str]:
    return {Path(s.source).name for s in engine.call("list_sources", {}).result.items}


def _found(engine: Engine, words: str) -> bool:
    hits = engine.call("search", {"query": words, "channels": ["lexical"]}).result.hits
    return any(words.split()[0] in h.content for h in hits)


def test_an_edited_new_or_deleted_file_is_reingested_or_forgotten(paths: Paths, tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "notes", {"a.md": "# Alpha\nThe alpha plan.\n", "b.md": "# Beta\nBeta notes.\n"})
    with Engine(paths, Settings.model_validate(QUIET), embedder=HashingEmbedder()) as engine:
        engine.call("ingest_path", {"path": str(folder)})
        engine.start_watching()
        watch = engine.folder_watch
        assert watch is not None
        wait_for(lambda: [f.root for f in watch.watching] == [folder], 10, "the folder to be watched")
        time.sleep(0.5)  # the watch is set up once the folder is listed
        (folder / "a.md").write_text("# Alpha\nThe alpha plan moved to zanzibar.\n")
        (folder / "c.md").write_text("# Gamma\nA quokka appears.\n")
        (folder / "b.md").unlink()
        wait_for(lambda: _found(engine, "zanzibar") and _found(engine, "quokka"), 20, "the changes ingested")
        wait_for(lambda: _sources(engine) == {"a.md", "c.md"}, 20, "the deleted file forgotten")
        assert not _found(engine, "alpha plan.") or _found(engine, "zanzibar")
        assert all(len(b.changed) <= 2 for b in watch.applied), "only the changed files were handed on"
        (folder / "b.md").write_text("# Beta\nBeta came back with a wombat.\n")
        # (written at once after the ingest that kept the folder current: the watch was not set up again for it)
        wait_for(lambda: _found(engine, "wombat"), 20, "a file deleted from the folder, then written again")
        assert not engine.store().excluded_sources(), "gone from the folder is not forgotten by the person"


@pytest.mark.slow
def test_paused_changes_wait_for_resume_and_skipped_folders_are_not_watched(paths: Paths, tmp_path: Path) -> None:
    kept = write_tree(tmp_path / "kept", {"a.md": "# A\nfirst words\n"})
    skipped = write_tree(tmp_path / "skipped", {"s.md": "# S\nskipped words\n"})
    settings = Settings.model_validate({"watch": {"quiet_sec": 0.3, "skip_folders": [str(skipped)]}})
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        for folder in (kept, skipped):
            engine.call("ingest_path", {"path": str(folder)})
        engine.start_watching()
        watch = engine.folder_watch
        assert watch is not None
        wait_for(lambda: [f.root for f in watch.watching] == [kept], 10, "only the kept folder watched")
        time.sleep(0.5)
        watch.pause(True)
        (kept / "a.md").write_text("# A\nwombat words\n")
        time.sleep(2.0)
        assert not _found(engine, "wombat"), "paused: nothing ingested"
        watch.pause(False)
        wait_for(lambda: _found(engine, "wombat"), 20, "the held change applied on resume")


def test_changes_group_by_their_deepest_folder_and_name_only_themselves(tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (outer / "x[1].md").write_text("x")
    (inner / "y.md").write_text("y")
    folders = [Watched("default", outer, "outer"), Watched("default", inner, "inner")]
    found = {b.folder.project: b for b in batches(
        [("modified", str(outer / "x[1].md")), ("added", str(inner / "y.md")), ("deleted", str(outer / "gone.md")),
         ("added", str(tmp_path / "elsewhere.md"))], folders)}
    assert found["outer"].changed == (str(outer / "x[1].md"),) and found["outer"].deleted == (str(outer / "gone.md"),)
    assert found["inner"].changed == (str(inner / "y.md"),)
    assert include_patterns(found["outer"]) == ["/x\\[1\\].md"]
    many = Batch(folders[0], tuple(str(outer / f"f{i}.md") for i in range(40)), ())
    assert include_patterns(many) is None, "a large batch re-syncs the whole folder"


def test_a_watch_with_no_folder_yet_stops_at_once(paths: Paths) -> None:
    """Between its looks at the folders (30 s apart) the watch sleeps; closing the engine — a service's stop —
    wakes it instead of waiting it out (a restarted service waited 10 s for the old one to let go)."""
    engine = Engine(paths, Settings(), embedder=HashingEmbedder())
    engine.start_watching()
    watch = engine.folder_watch
    assert watch is not None
    wait_for(lambda: watch._thread is not None and watch._thread.is_alive(), 5, "the watch thread")
    time.sleep(0.3)  # asleep between looks: no folder was ever ingested
    started = time.monotonic()
    engine.close()
    assert time.monotonic() - started < 3.0
    assert watch._thread is not None and not watch._thread.is_alive()
