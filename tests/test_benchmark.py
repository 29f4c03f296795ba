"""The benchmark cannot rot: every suite runs here in --quick mode, in this process, on one tiny corpus shared by
the module (tests/benchmark_support.py: nothing is downloaded), and writes its files in the result envelope."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark.__main__ import main

from .benchmark_support import tiny_corpus

ROOT = Path(__file__).resolve().parents[1]
MINI = Path(__file__).parent / "fixtures" / "scifact-format-mini.zip"  # invented rows in SciFact's format
LOCOMO_MINI = Path(__file__).parent / "fixtures" / "locomo-format-mini.json"  # an invented conversation, LoCoMo's format
ENVELOPE_KEYS = {"envelope", "suite", "quick", "seed", "options", "commit", "dirty", "engram_version", "settings",
                 "models", "machine", "started", "seconds", "result"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One benchmark cache for the module, as a person's `benchmark/.cache` is shared by the suites: the corpus is
    unpacked once, and a workspace a suite indexed is reused by the next."""
    return tmp_path_factory.mktemp("benchmark-cache")


@pytest.fixture(scope="module")
def lookups(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_corpus(cache, tmp_path_factory.mktemp("tiny-corpus"))


@pytest.fixture(autouse=True)
def no_engram_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in [k for k in os.environ if k.startswith("ENGRAM_")]:
        monkeypatch.delenv(key)


def run_suite(tmp_path: Path, cache: Path, *args: str) -> tuple[Path, dict[str, Any]]:
    """Run ``python -m benchmark <args> --quick`` in this process; (its folder, its envelope)."""
    results = tmp_path / "results"
    assert main([*args, "--quick", "--results", str(results), "--cache", str(cache)]) == 0
    (folder,) = list(results.iterdir())
    envelope = json.loads((folder / "result.json").read_text())
    assert set(envelope) == ENVELOPE_KEYS and envelope["envelope"] == 1
    assert envelope["suite"] == args[0] and envelope["quick"] is True and envelope["seed"] == 7
    assert len(envelope["commit"]) == 40 and isinstance(envelope["dirty"], bool)
    assert envelope["seconds"] > 0 and envelope["started"].endswith("+00:00")
    assert {"os", "cpu", "cpu_count", "llama_cpp_python"} <= set(envelope["machine"])
    assert (folder / "summary.md").read_text().startswith("# ")
    return folder, envelope


def embedding_recorded(envelope: dict[str, Any]) -> None:
    """The effective settings and the embedding model's pinned SHA256 are in the envelope."""
    settings = envelope["settings"]["effective"]
    assert settings["search"]["fusion"] in ("auto", "rrf", "convex") and settings["embed"]["model"]
    model = envelope["models"][f"embedding: {settings['embed']['model']}"]
    assert len(model["sha256"]) == 64


def test_recall_suite_quick(tmp_path: Path, cache: Path, lookups: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "recall", "--lookups", str(lookups))
    embedding_recorded(envelope)
    assert envelope["options"] == {"lookups": str(lookups), "repeat": 3}
    result = envelope["result"]
    assert result["sdist_sha256"] and result["tokenizer"].startswith("all-MiniLM-L6-v2")
    totals = result["totals"]
    assert totals["separate"]["round_trips"] == 4 and totals["plan"]["round_trips"] == 2
    assert set(totals) >= {"separate", "separate semantic+lexical", "separate dense-only", "separate BM25-only"}
    assert 0 < totals["plan"]["tokens"] < totals["separate"]["tokens"]
    assert result["gold_total"] == 7, "T03 is left out by --quick; T02's missing file counts but is never found"
    assert 0 < totals["separate"]["gold_visible"] <= 6 and totals["separate BM25-only"]["gold_visible"] <= 6
    assert result["hybrid_below_a_channel"] == [m for m in ("separate dense-only", "separate BM25-only")
                                                if totals[m]["gold_visible"] > totals["separate"]["gold_visible"]]
    assert (folder / "tokens.png").stat().st_size > 1000 and (folder / "gold.png").exists()
    summary = (folder / "summary.md").read_text()
    assert "| recall, plan, default budget |" in summary and "Gold files visible per lookup and channel" in summary
    four = result["four_step_plans"]
    assert four["plans"] == 2 and four["sequential_ms"] > 0 and four["concurrent_ms"] > 0
    assert "4-step plans (2 plans" in summary


def test_quality_suite_quick(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "quality", "--data", str(MINI))
    embedding_recorded(envelope)
    result = envelope["result"]
    assert set(result["configs"]) >= {"lexical (BM25-only baseline)", "semantic (dense-only baseline)",
                                      "hybrid (default: auto, RRF for abstracts)", "hybrid, convex",
                                      "hybrid+graph (the default search)"}
    assert all(0 <= c["ndcg@10"] <= 1 for c in result["configs"].values())
    assert result["published"]["MiniLM dense, BEIR leaderboard"] == 0.674
    assert (folder / "ndcg.png").exists()


def test_capture_suite_quick_captures_a_conversation_through_the_hook_path(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "capture", "--data", str(LOCOMO_MINI))
    summary = envelope["result"]["summary"]
    assert summary["turns"] == summary["captured"] == 48, "every turn captured once"
    assert summary["rows"] == 48, "a reply repeated word for word in another session is another turn (an event)"
    assert summary["questions"] == 6 and summary["hook_process"]["n"] == 5
    assert abs(summary["all@10_difference"]) <= 1 / 6 and summary["turns_per_second"] > 0
    assert "Claude Code transcript + Stop hook" in (folder / "summary.md").read_text()


def test_upkeep_suite_quick_counts_repeats_once_and_round_trips(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "upkeep", "--data", str(LOCOMO_MINI))
    result = envelope["result"]
    writes = result["writes"]
    assert writes["writes"] == 300 and writes["exact_repeats"] + writes["paraphrases"] == 300 - writes["distinct"]
    off, near = writes["modes"]["off"], writes["modes"]["near"]
    assert off["rows"] == 300 and off["repeats_missed"] == 300 - writes["distinct"], "off stores every write"
    assert near["rows"] <= writes["distinct"] and near["counted_exact"] > 0 and near["counted_near"] > 0
    assert near["missed_by_kind"]["exact"] == 0, "an exact repeat is always counted"
    assert result["recall"]["off"]["questions"] == result["recall"]["near"]["questions"] == 6
    assert result["round_trip"]["equal"] is True and result["round_trip"]["memories"] == 500
    assert "| near (default) |" in (folder / "summary.md").read_text()
    assert [p["split"] for p in result["pairs"]] == ["tune", "test"]
    for measured in result["pairs"]:
        totals = measured["totals"]
        assert totals["distinct"]["merged"] == 0, "a fact that differs in one detail is never merged"
        assert totals["repeat"]["merged"] >= 0.8 * totals["repeat"]["pairs"]
    assert "| distinct |" in (folder / "summary.md").read_text()


def test_the_upkeep_pairs_of_any_labelled_file_are_measured_alone(tmp_path: Path, cache: Path) -> None:
    held_out = tmp_path / "held-out.json"
    held_out.write_text(json.dumps({"name": "held-out", "split": "test", "pairs": [
        {"id": "d1", "label": "distinct", "family": "number", "first": "The lease ends after 12 months",
         "second": "The lease ends after 18 months"},
        {"id": "r1", "label": "repeat", "family": "filler", "first": "The lease ends after 12 months",
         "second": "So basically the lease ends after 12 months"},
        {"id": "u1", "label": "update", "family": "name", "first": "Priya runs the Monday planning",
         "second": "Daniel runs the Monday planning now", "question": "Who runs the Monday planning?"}]}))
    folder, envelope = run_suite(tmp_path, cache, "upkeep", "--only-pairs", "--pairs", str(held_out))
    (measured,) = envelope["result"]["pairs"]
    assert {k: measured["totals"]["distinct"][k] for k in ("pairs", "merged", "flagged")} == {
        "pairs": 1, "merged": 0, "flagged": 1}
    assert measured["totals"]["repeat"]["merged"] == 1
    assert measured["totals"]["update"]["newer_above"] == 1 and measured["totals"]["update"]["older_marked"] == 1
    assert "Pairs of `held-out.json` (test set)" in (folder / "summary.md").read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pairs": [{"id": "x", "label": "maybe", "first": "a", "second": "b"}]}))
    with pytest.raises(SystemExit, match="needs id, label"):
        run_suite(tmp_path, cache, "upkeep", "--only-pairs", "--pairs", str(bad))


def test_the_upkeep_write_stream_repeats_only_what_was_written() -> None:
    import random

    from benchmark.upkeep import write_stream

    turns = [(f"p{i % 3}", f"Speaker: distinct turn number {i} about topic {i * 7}") for i in range(100)]
    stream = write_stream(turns, 1000, 0.9, random.Random(1))
    assert len(stream) == 1000 and sum(1 for w in stream if w["how"] == "first") == 100
    seen: set[int] = set()
    for w in stream:
        assert w["how"] == "first" or w["origin"] in seen
        seen.add(w["origin"])
    with pytest.raises(ValueError, match="need 200 distinct turns"):
        write_stream(turns, 2000, 0.9, random.Random(1))


def test_a_repeat_counted_on_a_copy_of_its_own_memory_is_not_a_wrong_merge() -> None:
    from benchmark.upkeep import _outcomes

    stream = [{"origin": 0, "how": "first"}, {"origin": 1, "how": "first"}, {"origin": 0, "how": "paraphrase"},
              {"origin": 0, "how": "exact"}, {"origin": 1, "how": "exact"}, {"origin": 2, "how": "first"},
              {"origin": 1, "how": "paraphrase"}]
    ids = ["a", "b", "c", "c", "b", "b", "a"]  # origin 0's paraphrase stored anew as c, then repeated on c
    merged = [None, None, None, "exact", "exact", "near", "near"]
    counts = _outcomes(stream, ids, merged)
    assert counts["repeats_missed"] == 1 and counts["counted_exact"] == 2
    assert counts["wrongly_merged"] == 2, "origin 2's first write and origin 1's repeat were counted on others"


def test_watch_suite_quick_times_edits_until_searchable(tmp_path: Path, cache: Path) -> None:
    _, envelope = run_suite(tmp_path, cache, "watch")
    rounds = envelope["result"]["rounds"]
    assert [r["files_changed"] for r in rounds] == [1, 10, 50]
    assert all(r["lag_s"] >= envelope["result"]["quiet_sec"] for r in rounds), "the lag holds the quiet interval"


def test_conversation_suite_quick_reads_a_locomo_format_file(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "conversation", "--data", str(LOCOMO_MINI))
    summary = envelope["result"]["summary"]
    assert summary["turns"] == 48 and summary["questions"] == 6, "category 5 (no evidence) is left out"
    assert summary["unknown_evidence_ids"] == 1, "an evidence id the conversation does not hold is counted"
    hybrid = summary["mixes"]["hybrid (default)"]
    assert set(hybrid["by_category"]) == {"multi-hop", "temporal", "open-domain", "single-hop"}
    assert 0 < hybrid["overall"]["any@20"] <= 1 and hybrid["overall"]["all@5"] <= hybrid["overall"]["all@20"]
    assert hybrid["overall"]["all@20"] <= 5 / 6, "the question with an unknown id is never found whole"
    assert summary["store"]["n"] == 48 and hybrid["search"]["n"] == 6
    assert summary["mixes"]["hybrid, RRF, no feedback"]["search"]["n"] == 6
    assert (folder / "all-at-10.png").exists() and "all@10 per category" in (folder / "summary.md").read_text()
    overall = hybrid["overall"]
    assert overall["session all@10"] >= overall["all@10"], "a question found whole by turns is found by sessions"
    assert overall["session any@10"] >= overall["any@10"] and 0 <= overall["ndcg@10"] <= 1
    assert list(summary["splits"]) == ["test"], "a conversation the split does not name is a test one"
    assert summary["splits"]["test"]["mixes"]["hybrid (default)"]["overall"] == overall


def test_retrieval_suite_quick_measures_tuning_and_test_parts_apart(tmp_path: Path, cache: Path,
                                                                     lookups: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "retrieval", "--lookups", str(lookups), "--data", str(LOCOMO_MINI))
    result = envelope["result"]
    (corpus,) = result["corpora"]
    assert [r["split"] for r in corpus["lookups"]] == ["tune", "test"]
    tune, test = corpus["splits"]["tune"], corpus["splits"]["test"]
    assert (tune["lookups"], tune["parts"], tune["gold"]) == (1, 2, 4) and (test["lookups"], test["gold"]) == (1, 3)
    for part in (tune, test):
        assert part["hybrid"]["gold_visible"] >= 1 and 0 < part["hybrid"]["ndcg@10"] <= 1
        assert part["hybrid_holds"] == all(part["hybrid"][k] >= max(part[m][k] for m in ("dense-only", "BM25-only"))
                                           for k in ("gold_visible", "ndcg@10"))
    assert test["BM25-only"]["gold_visible"] <= 2, "a gold file the corpus does not hold is never found"
    conversations = result["conversations"]["summary"]
    assert set(conversations["mixes"]) == {"hybrid (default)", "semantic only", "lexical only"}
    text = (folder / "summary.md").read_text()
    assert "### Test parts (reported; never tuned on)" in text and "session recall_all@10 per category (test)" in text
    assert "| tiny | tinydocs-1.0 |" in text


def test_a_lookups_file_whose_sdist_is_not_the_pinned_one_is_refused(tmp_path: Path, cache: Path,
                                                                     lookups: Path) -> None:
    pinned = tmp_path / "pinned-lookups.json"
    spec = json.loads(lookups.read_text())
    spec["corpus"]["sha256"] = "0" * 64
    pinned.write_text(json.dumps(spec))
    with pytest.raises(SystemExit, match="has SHA256 [0-9a-f]{64}, not the 0{64} the lookups were written against"):
        main(["retrieval", "--lookups", str(pinned), "--quick", "--results", str(tmp_path / "r"), "--cache",
              str(cache)])


def test_speed_suite_quick(tmp_path: Path, cache: Path, lookups: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "speed", "--lookups", str(lookups))
    result = envelope["result"]
    assert result["ingest"]["chunks_per_s"] > 0 and result["ingest"]["unchanged_files"] == result["ingest"]["files"]
    assert sorted(int(s) for s in result["scale"]) == [300, 1200]
    for size in result["scale"].values():
        for key in ("no_vector_index", "vector_index"):
            assert size[key]["search"]["hybrid+graph"]["p50_ms"] > 0 and size[key]["recall"]["n"] > 0
    assert (folder / "latency.png").exists() and (folder / "memory.png").exists()


def test_mcp_suite_quick(tmp_path: Path, cache: Path) -> None:
    _, envelope = run_suite(tmp_path, cache, "mcp")
    result = envelope["result"]
    assert result["tool_list"]["tools"] == 20 and result["startup"]["warm"]["first_tool_call"]["median_ms"] > 0


def test_models_suite_quick(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "models")
    (model,) = envelope["models"].values()
    assert model["file"].endswith(".gguf") and len(model["sha256"]) == 64
    result = envelope["result"]
    assert result["load_s"]["median"] > 0 and result["with_deadline_checks"]["gen_tok_s"] > 0
    assert result["deadline_check_ns"] > 0
    verify = result["verify_ms"]  # measured and reported (the < 10 ms target is read in RESULTS.md, not asserted)
    assert verify["warm_calls"] == 20 and verify["warm_median"] > 0 and verify["cold"] > 0
    reuse = result["prefix_reuse"]  # token counts, not timings: the shared instructions are evaluated once
    assert reuse["shared_evaluated_tokens"] < reuse["unshared_evaluated_tokens"]
    summary = (folder / "summary.md").read_text()
    assert "verification:" in summary and "cached prefix" in summary


def test_budget_suite_quick(tmp_path: Path, cache: Path, lookups: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "budget", "--lookups", str(lookups))
    result = envelope["result"]
    assert result["searches"] > 0 and result["budget_on"]["p50_ms"] > 0 and result["budget_off"]["p50_ms"] > 0
    assert result["ledger_ops"]["reserve"]["n"] == 50 and "added by the ledger" in (folder / "summary.md").read_text()
    variants = envelope["settings"]["variants"]
    assert {"recall.run_budget.enabled": True} in variants or \
        envelope["settings"]["effective"]["recall"]["run_budget"]["enabled"], "the budget arm's settings are recorded"


def test_writes_suite_quick(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "writes")
    result = envelope["result"]
    maintained, unmaintained = result["arms"]["maintained"], result["arms"]["unmaintained"]
    assert [p["stores"] for p in maintained["points"]] == [10, 30, 60]
    assert maintained["points"][-1]["maintenance_runs"] > 0 and unmaintained["points"][-1]["maintenance_runs"] == 0
    # Without maintenance every store stays a fragment; with it the table is compacted as it grows.
    assert unmaintained["points"][-1]["disk"]["memory_fragments"] == 60
    assert maintained["points"][-1]["disk"]["memory_fragments"] < 33, "compacted after every 32 writes"
    assert "freshly compacted" in (folder / "summary.md").read_text() and (folder / "writes.png").is_file()


def test_reliability_suite_quick(tmp_path: Path, cache: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "reliability")
    killed, load = envelope["result"]["kills_during_ingest"], envelope["result"]["editors_at_once"]
    assert killed["kills"] == 3 and killed["notes_lost"] == [] and killed["written_twice"] == 0
    assert load["calls"] == 20 and load["errors"] == [] and load["stores_lost"] == []
    assert "ingests killed with SIGKILL" in (folder / "summary.md").read_text()


def test_chat_suite_quick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat suite's code path on a tiny corpus (a lookups file whose sdist already lies in the cache, so nothing
    is downloaded), with a scripted model at the chat model's seam: every turn repeats the seeded search, makes a
    failing read, searches its question in other words and answers citing the first memory that search returned."""
    import tarfile

    from engram.core import Engine

    from .chat_support import call, first_id

    tree = tmp_path / "src" / "tinydocs-1.0" / "docs"
    tree.mkdir(parents=True)
    (tree / "security.txt").write_text("Security\n\nSet SECURE_SSL_REDIRECT to redirect every request to HTTPS, and "
                                       "SECURE_HSTS_SECONDS so browsers remember to use HTTPS.\n")
    (tree / "errors.txt").write_text("Error reporting\n\nWith DEBUG off, Django emails the ADMINS a full traceback "
                                     "whenever a view raises an exception (a server error).\n")
    cache = tmp_path / "cache"
    (cache / "corpus").mkdir(parents=True)
    with tarfile.open(cache / "corpus" / "tinydocs-1.0.tar.gz", "w:gz") as tar:
        tar.add(tree.parent, arcname="tinydocs-1.0")
    lookups = tmp_path / "tiny-lookups.json"
    lookups.write_text(json.dumps({
        "corpus": {"name": "tinydocs-1.0", "requirement": "tinydocs==1.0", "include": ["docs/**/*.txt"]},
        "lookups": [
            {"id": "T01", "question": "How do I force HTTPS and have browsers remember it?",
             "parts": [{"query": "force HTTPS", "gold": ["docs/security.txt"]}], "gold": ["docs/security.txt"]},
            {"id": "T02", "question": "How do I get a traceback emailed when the site has a server error?",
             "parts": [{"query": "email traceback", "gold": ["docs/errors.txt", "docs/missing.txt"]}],
             "gold": ["docs/errors.txt", "docs/missing.txt"]},  # one gold file is not in the corpus: found 1 of 2
            {"id": "T03", "question": "Left out by --quick", "parts": [], "gold": []}]}))
    model_file = tmp_path / "tiny-chat.gguf"
    model_file.write_bytes(b"GGUF not a real model")

    def asked(messages: list[dict[str, Any]]) -> str:
        return messages[1]["content"].split("\n\n(Asked on ")[0]  # the question, without when it was asked

    def script() -> list[Any]:
        return [lambda messages, tools: call("search", query=asked(messages)),  # the seeded search again
                call("get_memory", ids=["000000000000"]),  # no such memory: a tool error
                lambda messages, tools: call("search", query=asked(messages) + " (docs)"),
                lambda messages, tools: f"Here is how [{first_id(messages)}]."]

    from .test_chat_sections import Reading

    # Turns follow the script; a long pasted question is read in sections first (Reading answers its readers).
    monkeypatch.setattr(Engine, "chat_model", lambda self, on_event=None, **_: Reading(script(), context=8192))
    results = tmp_path / "results"
    assert main(["chat", "--model", str(model_file), "--quick", "--lookups", str(lookups),
                 "--cache", str(cache), "--results", str(results)]) == 0
    (folder,) = list(results.iterdir())
    envelope = json.loads((folder / "result.json").read_text())
    result = envelope["result"]
    assert envelope["suite"] == "chat" and envelope["quick"] and result["questions"] == 2 and result["threads"] == 2
    assert envelope["models"]["chat: tiny-chat.gguf"]["size_bytes"] == model_file.stat().st_size
    (model,) = result["models"]
    assert model["file"] == "tiny-chat.gguf" and model["size_bytes"] == model_file.stat().st_size
    assert model["tool_format"] == "hermes" and model["settings"]["helper.local.threads"] == 2
    assert model["settings"]["chat.local_model"] == str(model_file.resolve())
    first, second = model["turns"]
    for turn in (first, second):
        assert turn["seeded"] and turn["calls"] == {"search": 2, "get_memory": 1} and turn["calls_total"] == 3
        assert turn["repeated"] == 1 and turn["errors"] == 1 and turn["rounds"] == 4 and turn["tokens"] > 0
        assert turn["ended"] == "answered" and not turn["fallback"] and turn["first_text_s"] is not None
        assert turn["cites"] and turn["cited_in_evidence"] == 1 and turn["cited_unread"] == 0
        assert (folder / turn["conversation_file"]).is_file()
    assert (first["gold"], first["gold_found"], first["gold_found_share"], first["gold_found_by_seed"]) == (1, 1, 1.0, 1)
    assert (second["gold"], second["gold_found"], second["gold_found_share"]) == (2, 1, 0.5)
    summary = model["summary"]
    assert summary["gold"] == 3 and summary["gold_found"] == 2 and summary["gold_found_share"] == 0.667
    assert summary["answers"] == 2 and summary["answers_citing"] == 2 and summary["fallbacks"] == 0
    assert summary["ended"] == {"answered": 2} and summary["calls"] == {"mean": 3.0, "median": 3.0}
    assert summary["calls_by_tool"] == {"search": 4, "get_memory": 2} and summary["seconds"]["mean"] > 0
    assert first["gold_cited"] == second["gold_cited"] == 1  # the first hit of a search of its own question
    assert summary["answers_citing_gold"] == 2 and summary["gold_cited"] == 2
    text = (folder / "summary.md").read_text()
    assert "| tiny-chat.gguf |" in text and "2/3 (67%)" in text and "## tiny-chat.gguf" in text and "| T02 |" in text
    # The conversations were copied out and deleted from the cached workspace.
    assert not list((cache / "quick-index-tinydocs-1.0").rglob("chats/*.json"))
    long = model["long_question"]
    assert long["chars"] > 12_000 and long["sections"] >= 2 and long["ended"] == "answered", long
    assert model["first_request"] is None, "timed on a model run here only"
    assert "## A new turn's first request, and a long pasted question" in text


def test_ingest_suite_quick(tmp_path: Path, cache: Path, lookups: Path) -> None:
    _, envelope = run_suite(tmp_path, cache, "ingest", "--lookups", str(lookups))
    result = envelope["result"]
    fresh, edit = result["fresh"], result["edit"]
    assert fresh["texts_embedded"] <= fresh["chunks"] and fresh["embedding_s"] > 0 and fresh["writes_s"] > 0
    assert result["raw_embedding"]["texts"] == fresh["chunks"] and result["end_to_end_over_raw"] > 0
    assert edit["files_changed"] == edit["files_indexed"] == 2
    assert 1 <= edit["texts_embedded"] < edit["chunks_of_changed_files"], "unchanged chunks keep their vectors"
    variants = result["runtime_variants"]
    assert variants["texts"] == min(30, fresh["chunks"]) and variants["f16 (bundled), 2 threads"]["min_cosine_to_bundled"] == 1.0
    assert variants["f32 (the checkpoint's precision), 2 threads"]["min_cosine_to_bundled"] > 0.999


def test_shared_suite_quick(tmp_path: Path, cache: Path, lookups: Path) -> None:
    folder, envelope = run_suite(tmp_path, cache, "shared", "--lookups", str(lookups))
    result = envelope["result"]
    arms = {a["arm"]: a for a in result["arms"]}
    assert set(arms) == {"local", "bucket", "bucket +20 ms"}
    assert arms["local"]["ingest"]["chunks"] == arms["bucket"]["ingest"]["chunks"] > 0
    assert arms["bucket"]["search"]["requests_per_search"] > 0 and "requests_per_search" not in arms["local"]["search"]
    # The delayed arm's searches go through its proxy too (timings are reported, never asserted: CI is noisy).
    assert arms["bucket +20 ms"]["search"]["requests_per_search"] > 0
    assert "| bucket +20 ms |" in (folder / "summary.md").read_text()


def test_a_suite_given_bad_options_is_refused_with_what_is_accepted(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["recall", "--lookups", str(tmp_path / "nope.json"), "--results", str(tmp_path / "r")])
    assert refused.value.code == 2 and f"--lookups: no file at {tmp_path / 'nope.json'}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["chat", "--lookups", str(ROOT / "benchmark" / "django-lookups.json")])
    assert "--model" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["mcp", "--runs", "0"])
    assert "--runs must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "r").exists(), "a refused run writes nothing"


def test_the_benchmark_help_lists_every_registered_suite() -> None:
    from benchmark.suites import SUITES

    proc = subprocess.run([sys.executable, "-m", "benchmark", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0
    for name in [*SUITES, "all", "report", "fetch-models"]:
        assert name in proc.stdout
