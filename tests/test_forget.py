"""Bulk forgetting: filters combined, a preview that changes nothing, files forgotten whole and kept out."""

from __future__ import annotations

import argparse
import io
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram.app import cli_forget, revise
from engram.app.cli_calls import LocalCalls, typed
from engram.core import Engine
from engram.core.errors import InvalidArgument
from engram.core.store import inspection
from engram.mcp.service_client import DirectOutput
from tests.conftest import cli_in_process, write_tree

NOTES = {
    "web": ["The staging server runs on port 8080 behind nginx",
            "Deploy previews expire after fourteen days",
            "Our CSS uses a utility first approach with no preprocessor"],
    "billing": ["Invoices are generated on the first of every month",
                "The staging server for billing lives in Frankfurt"],
}


def _store_all(engine: Engine) -> dict[str, str]:
    ids = {}
    for project, texts in NOTES.items():
        for text in texts:
            ids[text] = engine.call("store", {"content": text, "project": project}).result.id
    return ids


def _ids(engine: Engine) -> set[str]:
    return {r["id"] for r in inspection.table(engine.store(), "memories").to_arrow().to_pylist()}


def test_a_preview_changes_nothing_and_confirm_forgets_exactly_what_it_listed(engine: Engine) -> None:
    ids = _store_all(engine)
    before = _ids(engine)
    preview = engine.call("forget", {"project": "web"})
    assert preview.result.dry_run and preview.result.count == 3 and preview.result.by_kind == {"note": 3}
    assert {i.id for i in preview.result.listed} == {ids[t] for t in NOTES["web"]}
    assert preview.text.startswith("Would forget 3 memories in default: 3 notes; by project: web 3.")
    assert preview.text.endswith("Call forget again with the same filters and confirm=true to forget them.")
    assert _ids(engine) == before, "a preview writes nothing"
    done = engine.call("forget", {"project": "web", "confirm": True})
    assert not done.result.dry_run and done.result.count == 3
    assert done.text == "Forgot 3 memories in default: 3 notes; by project: web 3."
    assert _ids(engine) == before - {ids[t] for t in NOTES["web"]}
    again = engine.call("forget", {"project": "web", "confirm": True})
    assert again.result.count == 0 and "nothing was forgotten" in again.text


def test_filters_combine_with_and_a_query_takes_what_search_finds_by_words_or_meaning(engine: Engine) -> None:
    ids = _store_all(engine)
    both = engine.call("forget", {"query": "staging server", "limit": 5}).result
    assert {ids[NOTES["web"][0]], ids[NOTES["billing"][1]]} <= {i.id for i in both.listed}
    only_billing = engine.call("forget", {"query": "staging server", "project": "billing", "confirm": True}).result
    assert ids[NOTES["billing"][1]] in {i.id for i in only_billing.listed}
    assert only_billing.by_project == {"billing": only_billing.count}
    left = _ids(engine)
    assert ids[NOTES["billing"][1]] not in left and ids[NOTES["web"][0]] in left
    assert all(ids[t] in left for t in NOTES["web"]), "the other project was not touched"
    assert engine.call("forget", {"query": "zebra migrations"}).result.count == 0, \
        "a memory is not taken for being the nearest of what is left"


def test_a_creation_date_range_takes_only_what_was_created_in_it(engine: Engine) -> None:
    old = engine.call("store", {"content": "Written before the cut", "project": "p"}).result.id
    time.sleep(0.05)
    cut = datetime.now(UTC)
    new = engine.call("store", {"content": "Written after the cut, something else entirely", "project": "p"}).result.id
    preview = engine.call("forget", {"since": cut.isoformat()}).result
    assert [i.id for i in preview.listed] == [new]
    assert [i.id for i in engine.call("forget", {"until": cut.isoformat()}).result.listed] == [old]


def test_bad_filters_are_refused_and_nothing_is_forgotten(engine: Engine) -> None:
    _store_all(engine)
    before = _ids(engine)
    with pytest.raises(InvalidArgument, match="at least one of 'query', 'project'"):
        engine.call("forget", {"confirm": True})
    with pytest.raises(InvalidArgument, match="'until' .* is before 'since'"):
        engine.call("forget", {"since": "2026-05-01T00:00:00Z", "until": "2026-04-01T00:00:00Z", "confirm": True})
    with pytest.raises(InvalidArgument, match="limit"):
        engine.call("forget", {"query": "x", "limit": 501})
    assert _ids(engine) == before


def test_a_source_glob_forgets_files_whole_and_a_reingest_leaves_them_out(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "proj", {"docs/old/a.md": "# A\n\nalpha text about gardens\n",
                                          "docs/old/b.md": "# B\n\nbeta text about boats\n",
                                          "docs/keep.md": "# Keep\n\nkept text about trains\n"})
    engine.call("ingest_path", {"path": str(root)})
    note = engine.call("store", {"content": "A note that is not a file", "project": "proj"}).result.id
    preview = engine.call("forget", {"source": "docs/old/*"})
    assert sorted(preview.result.files) == ["docs/old/a.md", "docs/old/b.md"]
    assert preview.result.memories == 0 and set(preview.result.by_kind) == {"chunk"}
    assert "Files and texts going whole (kept out of later ingests of their folder): docs/old/" in preview.text
    done = engine.call("forget", {"source": "docs/old/*", "confirm": True}).result
    assert done.kept_out == 2
    sources = [s.source for s in engine.call("list_sources", {}).result.items]
    assert sources == [str(root / "docs/keep.md")]
    again = engine.call("ingest_path", {"path": str(root)}).result
    assert [s.source for s in engine.call("list_sources", {}).result.items] == [str(root / "docs/keep.md")]
    assert sum(1 for s in again.skipped if s.reason.startswith("forgotten earlier")) == 2
    assert note in _ids(engine)


def test_a_chunk_matched_by_query_takes_its_whole_file(engine: Engine, tmp_path: Path) -> None:
    body = "\n\n".join(f"## Part {i}\n\n" + f"paragraph {i} about ordinary matters. " * 40 for i in range(6))
    root = write_tree(tmp_path / "big", {"guide.md": "# Guide\n\n" + body + "\n\n## Zeppelins\n\nzeppelin hangar\n"})
    engine.call("ingest_path", {"path": str(root)})
    chunks = [r for r in inspection.table(engine.store(), "memories").to_arrow().to_pylist() if r["kind"] == "chunk"]
    assert len(chunks) > 1
    preview = engine.call("forget", {"query": "zeppelin hangar", "kind": "chunk", "limit": 1}).result
    assert preview.files == ["guide.md"] and preview.file_chunks == [len(chunks)]
    assert preview.count == len(chunks), "every chunk of the file is counted, not only the one matched"


def test_superseded_memories_matched_go_too(engine: Engine) -> None:
    old = engine.call("store", {"content": "We deploy with Fabric scripts", "project": "ops"}).result.id
    new = engine.call("store", {"content": "We deploy with Ansible playbooks now", "project": "ops",
                                "supersedes": [old]}).result.id
    listed = {i.id for i in engine.call("forget", {"project": "ops"}).result.listed}
    assert listed == {old, new}


# ------------------------------------------------------------------------------------------------ engram forget


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_forget.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["forget", *argv])


def test_engram_forget_lists_then_asks_and_only_a_yes_forgets(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _store_all(engine)
    calls = LocalCalls(engine)
    asked: list[str] = []

    def answer(reply: str) -> Callable[[str], str]:
        def ask(question: str) -> str:
            asked.append(question)
            return reply
        return ask

    assert cli_forget._forget(calls, _cli("--project", "web"), answer("n"), _Terminal()) == 1
    out = capsys.readouterr().out
    assert out.startswith("Would forget 3 memories in default") and "Nothing was forgotten." in out
    assert "confirm=true" not in out, "the agent's instruction is not shown to a person"
    assert asked == ["Forget these 3 memories? [y/N] "] and len(_ids(engine)) == 5
    assert cli_forget._forget(calls, _cli("--project", "web"), answer("y"), _Terminal()) == 0
    assert capsys.readouterr().out.endswith("Forgot 3 memories in default: 3 notes; by project: web 3.\n")
    assert _ids(engine) == {ids[t] for t in NOTES["billing"]}


def test_engram_forget_without_a_terminal_needs_yes(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    _store_all(engine)
    calls = LocalCalls(engine)

    def never(question: str) -> str:
        raise AssertionError("asked without a terminal")

    assert cli_forget._forget(calls, _cli("--project", "billing"), never, io.StringIO()) == 1
    assert "Run it again with --yes" in capsys.readouterr().err and len(_ids(engine)) == 5
    assert cli_forget._forget(calls, _cli("--project", "billing", "--dry-run"), never, io.StringIO()) == 0
    assert len(_ids(engine)) == 5
    assert cli_forget._forget(calls, _cli("staging", "--project", "billing", "--yes"), never, io.StringIO()) == 0
    assert len(_ids(engine)) == 4


def test_engram_forget_through_the_cli_refuses_no_filters_and_takes_dates(env: dict[str, str]) -> None:
    assert cli_in_process(env, "remember", "A note to forget by date").returncode == 0
    refused = cli_in_process(env, "forget", "--yes")
    assert refused.returncode == 2 and "at least one of 'query', 'project'" in refused.stderr
    bad = cli_in_process(env, "forget", "--since", "last tuesday")
    assert bad.returncode == 2 and "since" in bad.stderr
    done = cli_in_process(env, "forget", "--since", "2000-01-01", "--yes")
    assert done.returncode == 0 and done.stdout.startswith("Forgot 1 memory in default: 1 note"), done.stdout
    note = cli_in_process(env, "remember", "Lunch is at noon").stdout.split()[2]
    edited = cli_in_process(env, "edit", note, "--content", "Lunch is at half past twelve")
    assert edited.returncode == 0 and f"it supersedes {note} (kept as history)" in edited.stdout, edited.stdout
    newer = cli_in_process(env, "search", "lunch", "--json")
    assert "half past twelve" in newer.stdout and "at noon" not in newer.stdout
    missing = cli_in_process(env, "merge", note, "000000000000")
    assert missing.returncode == 1 and "No memory with id 000000000000" in missing.stderr


# ------------------------------------------------------------------------------------------------ edit and merge


def test_engram_edit_stores_a_new_version_and_the_old_stays_as_history(engine: Engine) -> None:
    tools = engine.tools
    old = engine.call("store", {"content": "Backups run nightly at 02:00", "project": "ops", "tags": ["backup"]})
    seen: list[str] = []

    def editor(text: str) -> str:
        seen.append(text)
        return text.replace("02:00", "03:30")

    said = revise.edit(tools, old.result.id, None, "", editor).text
    assert seen == ["Backups run nightly at 02:00"] and said.startswith("stored note")
    chain = engine.call("get_memory", {"ids": [old.result.id]}).result
    (was,) = chain.items
    assert was.superseded_by is not None and was.valid_to is not None
    (new,) = engine.call("get_memory", {"ids": [was.superseded_by]}).result.items
    assert (new.content, new.project) == ("Backups run nightly at 03:30", "ops") and "backup" in new.tags
    assert revise.edit(tools, new.id, "Backups run nightly at 03:30", "", editor).text.startswith("No change")
    with pytest.raises(InvalidArgument, match="already superseded"):
        revise.edit(tools, old.result.id, "again", "", editor)
    with pytest.raises(InvalidArgument, match="blank"):
        revise.edit(tools, new.id, "  ", "", editor)


def test_engram_merge_keeps_the_longer_text_and_supersedes_the_other(engine: Engine) -> None:
    tools = engine.tools
    short = engine.call("store", {"content": "Releases on Tuesdays", "project": "web"}).result.id
    long = engine.call("store", {"content": "Releases go out every second Tuesday after the freeze", "project": "web",
                                 "tags": ["release"]}).result.id
    other = engine.call("store", {"content": "Something of another project", "project": "ops"}).result.id
    with pytest.raises(InvalidArgument, match="only memories of one project and kind"):
        revise.merge(tools, short, other, "")
    said = revise.merge(tools, short, long, "")
    assert long in said.text and said.id == long
    items = {m.id: m for m in engine.call("get_memory", {"ids": [short, long]}).result.items}
    assert items[short].superseded_by == long and items[long].valid_to is None and items[long].seen_count == 2
    assert engine.call("forget", {"project": "web"}).result.memories == 2


class _OverTheWire:
    """Calls as the service answers them (``DirectOutput``: the result as JSON), made by this process's engine: the
    command line's typed methods must read the same models back from it."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sent: list[dict[str, object]] = []

    def call(self, tool: str, arguments: dict[str, object], progress: object = None) -> DirectOutput:
        json.dumps(arguments)  # what goes to the service is JSON, dates and all
        self.sent.append(arguments)
        out = self.engine.call(tool, dict(arguments))
        return DirectOutput(out.tool, out.workspace, out.result.model_dump(mode="json"), out.text)


def test_the_command_lines_typed_calls_read_a_services_json_back_as_the_tools_models(engine: Engine) -> None:
    wire = _OverTheWire(engine)
    tools = typed(wire)  # type: ignore[arg-type]  # a Calls by shape
    note = tools.store("Deploys happen on Thursdays", project="ops", tags=["deploy"]).result
    (memory,) = tools.get_memory([note.id]).result.items
    assert memory == engine.tools.get_memory([note.id]).result.items[0]
    assert isinstance(memory.created_at, datetime) and "deploy" in memory.tags
    said = revise.edit(tools, note.id, "Deploys happen on Fridays", "", lambda text: text)
    assert f"it supersedes {note.id}" in said.text and said.id != note.id
    preview = tools.forget(project="ops", since=datetime(2000, 1, 1, tzinfo=UTC)).result  # both versions
    assert preview.dry_run and preview.count == 2 and wire.sent[-1]["since"] == "2000-01-01T00:00:00Z"
    assert typed(LocalCalls(engine)) is engine.tools, "in process, no JSON round trip"
