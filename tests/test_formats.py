"""Tool output formats, pinned by golden files (regenerate with ENGRAM_UPDATE_GOLDEN=1 after a deliberate change)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram.core.tools import formats, upkeep_formats
from engram.core.tools.results import (
    CountedName,
    Deleted,
    DeviceContext,
    Fact,
    FactChange,
    FactList,
    FileChunks,
    ForgetItem,
    Forgotten,
    GraphScope,
    IngestResult,
    Memory,
    MemoryList,
    MergedItem,
    NearPair,
    Neighbor,
    NeighborList,
    PossibleUpdatePair,
    ProjectCount,
    Review,
    SearchHit,
    SearchResult,
    SkippedFile,
    SourceInfo,
    SourceList,
    Stored,
    Tidied,
    WakeUp,
    WorkspaceStatus,
)

GOLDEN = Path(__file__).parent / "golden"
T1 = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
T2 = datetime(2026, 11, 20, 17, 5, tzinfo=UTC)
SRC = "/home/ada/django/docs/topics/security.txt"
PARAGRAPH = ("Django's SecurityMiddleware can redirect every HTTP request to HTTPS when SECURE_SSL_REDIRECT is "
             "True. Browsers are told to refuse plain HTTP for a while through the Strict-Transport-Security "
             "header, whose lifetime comes from SECURE_HSTS_SECONDS; include subdomains with "
             "SECURE_HSTS_INCLUDE_SUBDOMAINS and ask for preloading with SECURE_HSTS_PRELOAD. ")


def memory(i: int, **kw: object) -> dict:
    base = dict(id=f"a1b2c3d4e5{i:02d}", project="django", source=SRC, kind="chunk", type="text", tags=[],
                title="Security in Django > SSL/HTTPS", content=PARAGRAPH * (1 + i % 3), created_at=T1,
                updated_at=T2, chunk_index=i, start_line=100 + 20 * i, end_line=119 + 20 * i)
    base.update(kw)
    return base


def check(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ENGRAM_UPDATE_GOLDEN"):
        path.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == path.read_text(encoding="utf-8")


def test_search_format() -> None:
    hits = [SearchHit(**memory(i), score=0.03 - i / 1000, channels=["semantic", "lexical", "graph"][: 1 + i % 3])
            for i in range(6)]
    hits[2] = SearchHit(**memory(2, kind="note", type="decision", source="", start_line=0, end_line=0,
                                 tags=["security", "ops"], title="", content="Always set SECURE_SSL_REDIRECT in prod."),
                        score=0.02, channels=["lexical"])
    result = SearchResult(query="force https redirect", hits=hits,
                          warnings=["graph channel failed: edges table unreadable"])
    check("search", formats.format_search(result, 2500))


def test_search_format_with_no_results() -> None:
    check("search_empty", formats.format_search(SearchResult(query="x", hits=[]), 4000))


def test_get_memory_format() -> None:
    result = MemoryList(items=[Memory(**memory(0)), Memory(**memory(1))], missing=["ffffffffffff"])
    check("get_memory", formats.format_memories(result, 4000))


def test_history_formats() -> None:
    """A superseded note with its chain, a note seen three times, and a search that left superseded ones out."""
    old = Memory(**memory(0, kind="note", type="decision", source="", start_line=0, end_line=0,
                          content="Deploy with Ansible."), valid_to=T2, superseded_by="b2c3d4e5f6a7")
    new = Memory(**{**memory(1, kind="note", type="decision", source="", start_line=0, end_line=0,
                             content="Deploy with Kubernetes."), "id": "b2c3d4e5f6a7"}, seen_count=3, last_seen=T2)
    chain = MemoryList(items=[old, new], history={old.id: [old, new], new.id: [old, new]})
    found = SearchResult(query="how do we deploy", hits=[SearchHit(**new.model_dump(), score=0.03,
                                                                   channels=["semantic"])], superseded_matched=2)
    text = "\n---\n".join([formats.format_memories(chain, 4000), formats.format_search(found, 4000),
                            formats.format_search(SearchResult(query="x", hits=[], superseded_matched=1), 4000)])
    check("history", text)


def test_merged_and_possibly_outdated_formats() -> None:
    """A memory with texts merged into it (one shown in place of its own) and sightings whose texts were not kept;
    then a search where a newer note may update an older one: the newer first, the older marked."""
    merged = Memory(**{**memory(1, kind="note", type="note", source="", start_line=0, end_line=0, title="",
                                content="So basically the staging password rotates every 30 days, as agreed"),
                       "id": "c3d4e5f6a7b8"}, seen_count=4, last_seen=T2, merged_unkept=1,
                    own_text="The staging password rotates every 30 days",
                    merged=[MergedItem(id="d4e5f6a7b8c9", content="the staging password rotates every 30 days.",
                                       written=T1, merged=T1, how="near", similarity=0.9612),
                            MergedItem(id="e5f6a7b8c9d0", content="So basically the staging password rotates every "
                                       "30 days, as agreed", written=T2, merged=T2, how="near", similarity=0.9301,
                                       seen=2, shown=True)])
    newer = SearchHit(**{**memory(2, kind="note", type="note", source="", start_line=0, end_line=0, title="",
                                  content="The staging password rotates every 90 days"), "id": "f6a7b8c9d0e1"},
                      score=0.03, channels=[])
    older = SearchHit(**{**merged.model_dump(), "merged": []}, score=0.03, channels=["semantic", "lexical"],
                      possibly_outdated_by="f6a7b8c9d0e1", outdated_changes="30 days → 90 days")
    text = "\n---\n".join([formats.format_memories(MemoryList(items=[merged]), 4000),
                            formats.format_search(SearchResult(query="staging password", hits=[newer, older]), 4000)])
    check("merged", text)


def test_neighbors_format() -> None:
    items = [Neighbor(**memory(1), relation="next", hop=1, score=1.0),
             Neighbor(**memory(4, source="/home/ada/django/django/middleware/security.py", type="python",
                             title="class SecurityMiddleware", content="class SecurityMiddleware(MiddlewareMixin):"),
                      relation="mentions", via="e:secure_ssl_redirect", hop=1, score=0.4)]
    check("neighbors", formats.format_neighbors(NeighborList(origin="a1b2c3d4e500", items=items), 4000))


def test_file_chunks_format() -> None:
    result = FileChunks(source=SRC, total_chunks=12, items=[Memory(**memory(i)) for i in range(3)])
    check("file_chunks", formats.format_file_chunks(result, 1800))


def source(i: int) -> SourceInfo:
    return SourceInfo(source=SRC.replace("security", f"topic{i}"), project="django", kind="file", root="/home/ada/django",
                      size=12345 * (i + 1), mtime=1.0, content_hash="ab" * 32, chunk_count=7 + i,
                      summary="Security in Django: an overview of Django's security features.", ingested_at=T2,
                      outline=["Security in Django", "Security in Django > SSL/HTTPS"])


def test_file_summary_format() -> None:
    check("file_summary", formats.format_file_summary(source(0), 4000))


def test_list_sources_format() -> None:
    check("list_sources", formats.format_sources(SourceList(items=[source(i) for i in range(3)], total=40, offset=10),
                                                 4000))


def test_kg_query_format() -> None:
    facts = [Fact(id="f-0a1b2c3d4e", project="engram", subject="engram", predicate="stores vectors in",
                  object="LanceDB", valid_from=T1),
             Fact(id="f-9f8e7d6c5b", project="engram", subject="engram", predicate="embeds with",
                  object="sentence-transformers", valid_from=T1, ended=T2, source="note 1a2b3c4d5e6f")]
    check("kg_query", formats.format_facts(FactList(items=facts), 4000))


def test_orientation_formats() -> None:
    status = WorkspaceStatus(workspace="default", folder="/home/ada/.local/share/engram/workspaces/default",
                             memories=1204, sources=88, facts=3, edges=9000,
                             by_kind=[CountedName(name="chunk", count=1200), CountedName(name="note", count=4)],
                             projects=[ProjectCount(project="django", memories=1200, sources=88),
                                       ProjectCount(project="general", memories=4, sources=0)],
                             indexes=["content_idx (FTS)"], embed_model="all-minilm-l6-v2", embed_ready=True,
                             workspaces=["default", "work"])
    scope = GraphScope(project=None, memories=1204,
                       edges_by_relation=[CountedName(name="mentions", count=7000), CountedName(name="next", count=1100)],
                       top_entities=[CountedName(name="secure_ssl_redirect", count=12)],
                       predicates=[CountedName(name="uses", count=2)])
    device = DeviceContext(os="Linux 6.1", machine="x86_64", python="3.11.7", cpu_count=2, memory_total_mb=24000,
                           llama_cpp="0.3.36", gpu_offload=False, system_info="CPU : AVX2 = 1", embed_model="all-minilm-l6-v2",
                           embed_threads=2, data_dir="/home/ada/.local/share/engram",
                           gpus=["[0] NVIDIA GeForce RTX 3060 (12,288 MB, discrete, nvidia-smi)"],
                           gpu_choice="NVIDIA GeForce RTX 3060 (0 layers)", build="vulkan",
                           build_reason="NVIDIA GeForce RTX 3060 on Linux x86-64",
                           backend_devices=["CPU (cpu, 24,000 MB)"],
                           note="NVIDIA GeForce RTX 3060 found, but this llama.cpp build runs on the CPU only; "
                                "`engram bootstrap` installs the vulkan build")
    wake = WakeUp(workspace="default", project=None, memories=1204, sources=88,
                  projects=[ProjectCount(project="django", memories=1200, sources=88)],
                  recent=[Memory(**memory(0, kind="note", type="decision", source="", content="Use LanceDB. " * 20))],
                  facts=[Fact(id="f-0a1b2c3d4e", project="engram", subject="engram", predicate="uses", object="LanceDB",
                              valid_from=T1)])
    text = "\n---\n".join([formats.format_status(status, 4000), formats.format_graph_scope(scope, 4000),
                           formats.format_device(device, 4000), formats.format_wake_up(wake, 4000)])
    check("orientation", text)


def test_write_formats() -> None:
    fact = Fact(id="f-0a1b2c3d4e", project="engram", subject="engram", predicate="uses", object="LanceDB", valid_from=T1)
    ingest = IngestResult(workspace="default", project="django", root="/home/ada/django", files_listed=1102,
                          files_indexed=1000, files_unchanged=90, files_removed=2, chunks_written=9000, seconds=412.5,
                          skipped=[SkippedFile(path="/a.png", reason="binary file type"),
                                   SkippedFile(path="/b", reason="larger than ingest.max_file_bytes (3 > 2 bytes)"),
                                   SkippedFile(path="/c", reason="larger than ingest.max_file_bytes (4 > 2 bytes)")])
    text = "\n".join([
        formats.format_stored(Stored(id="1a2b3c4d5e6f", workspace="default", project="general", kind="note",
                                     entities=["secure_ssl_redirect"]), 4000),
        formats.format_stored(Stored(id="1a2b3c4d5e6f", workspace="default", project="general", kind="note",
                                     duplicate_of="1a2b3c4d5e6f", merged="exact", seen=2), 4000),
        formats.format_stored(Stored(id="1a2b3c4d5e6f", workspace="default", project="general", kind="exchange",
                                     duplicate_of="1a2b3c4d5e6f", merged="near", seen=5), 4000),
        formats.format_stored(Stored(id="b2c3d4e5f6a7", workspace="default", project="general", kind="note",
                                     superseded=["1a2b3c4d5e6f"]), 4000),
        formats.format_stored(Stored(id="b2c3d4e5f6a7", workspace="default", project="general", kind="note",
                                     may_update="1a2b3c4d5e6f", changes="30 days → 90 days"), 4000),
        upkeep_formats.format_tidied(Tidied(action="supersede", workspace="default", id="b2c3d4e5f6a7",
                                     others=["1a2b3c4d5e6f"]), 4000),
        upkeep_formats.format_tidied(Tidied(action="keep_both", workspace="default", id="b2c3d4e5f6a7",
                                     others=["1a2b3c4d5e6f"]), 4000),
        upkeep_formats.format_tidied(Tidied(action="merge", workspace="default", id="b2c3d4e5f6a7",
                                     others=["1a2b3c4d5e6f"], seen=3), 4000),
        upkeep_formats.format_tidied(Tidied(action="unmerge", workspace="default", id="b2c3d4e5f6a7",
                                     others=["1a2b3c4d5e6f", "c3d4e5f6a7b8"], seen=1, restored_own=True), 4000),
        formats.format_deleted(Deleted(workspace="default", ids=["1a2b3c4d5e6f"]), 4000),
        formats.format_deleted(Deleted(workspace="default", source=SRC, chunks=12), 4000),
        formats.format_deleted(Deleted(workspace="default", source=SRC, chunks=12, kept_out=True), 4000),
        formats.format_fact_change(FactChange(action="add", fact=fact), 4000),
        formats.format_ingest(ingest, 4000),
    ])
    check("writes", text)


def test_forget_formats() -> None:
    listed = [ForgetItem(id=f"{i:012x}", kind="note", project="web", title=f"Note number {i} about the staging server",
                         created_at=T1) for i in range(3)]
    preview = Forgotten(workspace="default", dry_run=True, count=15, memories=5, by_kind={"chunk": 10, "note": 5},
                        by_project={"web": 14, "ops": 1}, listed=listed, files=["docs/old.md"], file_chunks=[10],
                        kept_out=1)
    text = "\n".join([
        upkeep_formats.format_forgotten(preview, 4000),
        upkeep_formats.format_forgotten(preview.model_copy(update={"dry_run": False}), 4000),
        upkeep_formats.format_forgotten(Forgotten(workspace="default", dry_run=True), 4000),
        upkeep_formats.format_forgotten(Forgotten(workspace="default", dry_run=False), 4000),
        upkeep_formats.format_forgotten(Forgotten(workspace="default", dry_run=True, count=1, memories=1,
                                           by_kind={"exchange": 1}, by_project={"general": 1}, listed=[
                                               listed[0].model_copy(update={"kind": "exchange"})]), 4000),
    ])
    check("forget", text)


@pytest.mark.parametrize("budget", [1200, 1201, 3333, 12000])
def test_block_formats_respect_every_budget(budget: int) -> None:
    hits = [SearchHit(**memory(i), score=0.01, channels=["semantic"]) for i in range(30)]
    text = formats.format_search(SearchResult(query="https", hits=hits), budget)
    assert len(text) <= budget and "of 30 results shown" in text.splitlines()[-1]


def test_review_format() -> None:
    """Repeats, near pairs stored apart and superseded notes, then the same review with nothing to tidy."""
    def note(i: int, content: str, **kw: object) -> Memory:
        return Memory(**memory(i, kind="note", type="decision", source="", start_line=0, end_line=0, title="",
                               content=content), **kw)

    review = Review(
        workspace="default", project="ops", threshold=0.95,
        seen_again=[note(1, "Deploys go out on Tuesdays after the review.", seen_count=4, last_seen=T2)],
        seen_again_total=3,
        near_pairs=[NearPair(similarity=0.9712, first=note(2, "We roll back with git revert, then redeploy."),
                             second=note(3, "Roll back with git revert and redeploy."))],
        near_pairs_total=1, compared=5000, current=6200,
        possible_updates=[PossibleUpdatePair(similarity=0.9781, newer=note(5, "Backups run nightly at 04:00."),
                                             older=note(6, "Backups run nightly at 02:00."), changes=["02:00 → 04:00"])],
        possible_updates_total=2,
        merged_before=[Memory(**{**note(7, "Deploy windows are Tuesdays.").model_dump(), "updated_at": T1,
                                 "seen_count": 3, "merged_unkept": 2}),
                       Memory(**{**note(8, "Rollbacks need the lead's approval, always, as agreed.").model_dump(),
                                 "created_at": T1, "updated_at": T2, "merged_unkept": 1})],
        merged_before_total=2,
        superseded=[note(4, "Deploy with Ansible.", valid_to=T2, superseded_by="b2c3d4e5f6a7")], superseded_total=1)
    empty = Review(workspace="default", threshold=0.95, compared=12, current=12)
    check("review", upkeep_formats.format_review(review, 4000) + "\n---\n" + upkeep_formats.format_review(empty, 4000))
