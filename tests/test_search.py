"""Hybrid retrieval: fused channels, recorded provenance, filters, graph expansion, degradation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from engram.core import Engine, Paths, Settings
from engram.core.errors import StoreError
from engram.core.retrieval.fusion import fuse, fuse_scores
from engram.core.retrieval.search import Filters, SearchParams, _moved_towards, hybrid_search
from engram.core.retrieval.speakers import named_speakers_first, without_speakers
from engram.core.store import inspection

from .conftest import HashingEmbedder, write_tree


def test_rrf_scores_are_weighted_reciprocal_ranks() -> None:
    fused = fuse({"semantic": ["a", "b"], "lexical": ["b", "c"]}, {"semantic": 1.0, "lexical": 2.0}, k=60)
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert scores["c"] == pytest.approx(2 / 62)
    assert [f.id for f in fused] == ["b", "c", "a"]
    assert fused[0].ranks == {"semantic": 2, "lexical": 1}


def test_rrf_credits_a_chunk_with_another_channels_best_chunk_of_the_same_file() -> None:
    from engram.core.retrieval.fusion import SAME_FILE_SHARE

    rankings = {"semantic": ["a1", "x", "y"], "lexical": ["b1", "a2", "y"], "graph": ["a3"]}
    files = {"a1": "/a.md", "a2": "/a.md", "a3": "/a.md", "b1": "/b.md", "x": "/x.md", "y": "/y.md"}
    w = {"semantic": 1.0, "lexical": 1.0, "graph": 0.1}
    scores = {f.id: f.score for f in fuse(rankings, w, k=60, sources=files)}
    # a1 (semantic 1st) also gets a share of lexical's best chunk of a.md (a2, 2nd); a2 the same of a1's rank 1.
    assert scores["a1"] == pytest.approx(1 / 61 + SAME_FILE_SHARE / 62)
    assert scores["a2"] == pytest.approx(1 / 62 + SAME_FILE_SHARE / 61)
    # A chunk only the graph found gets both primary channels' shares; a file one channel alone found gets none.
    assert scores["a3"] == pytest.approx(0.1 / 61 + SAME_FILE_SHARE * (1 / 61 + 1 / 62))
    assert scores["b1"] == pytest.approx(1 / 61) and scores["x"] == pytest.approx(1 / 62)
    assert scores["y"] == pytest.approx(1 / 63 + 1 / 63), "found by both: nothing more"
    plain = {f.id: f.score for f in fuse(rankings, w, k=60)}
    assert plain["a1"] == pytest.approx(1 / 61), "without sources (notes, exchanges), plain RRF"


def test_convex_fusion_weighs_each_channels_scores_scaled_to_its_own_range() -> None:
    fused = fuse_scores({"semantic": [("a", 0.9), ("b", 0.7), ("c", 0.5)], "lexical": [("b", 12.0), ("d", 4.0)],
                         "graph": [("e", 3.0), ("c", 1.0)]},
                        {"semantic": 1.0, "lexical": 1.0, "graph": 0.1})
    scores = {f.id: f.score for f in fused}
    # semantic and lexical weigh half each; the graph 0.1 on their scale (0.05); a channel's best scales to 1.
    assert scores == pytest.approx({"a": 0.5, "b": 0.5 * 0.5 + 0.5, "c": 0.0 + 0.0, "d": 0.0, "e": 0.05})
    assert [f.id for f in fused][:2] == ["b", "a"]
    assert fused[0].ranks == {"semantic": 2, "lexical": 1}
    alone = fuse_scores({"lexical": [("x", 3.0), ("y", 1.0)]}, {"semantic": 1.0, "lexical": 1.0, "graph": 0.1})
    assert [(f.id, f.score) for f in alone] == [("x", 1.0), ("y", 0.0)]  # a channel alone weighs 1
    assert [f.score for f in fuse_scores({"semantic": [("only", 0.3)]}, {})] == [1.0]


def test_a_query_naming_one_speaker_puts_that_speakers_exchanges_first() -> None:
    rows = {"1": {"kind": "exchange", "content": "Melanie: I went to the pottery class."},
            "2": {"kind": "exchange", "content": "Caroline: The support group was moving."},
            "3": {"kind": "note", "content": "Caroline: not an exchange, never moved"},
            "4": {"kind": "exchange", "content": "Caroline: I am researching adoption agencies."},
            "5": {"kind": "exchange", "content": "no speaker here"}}
    order = ["1", "2", "3", "4", "5"]
    assert named_speakers_first("What is caroline researching?", order, rows) == ["2", "4", "1", "3", "5"]
    assert named_speakers_first("What did Caroline and Melanie do?", order, rows) == order  # both: no change
    assert named_speakers_first("what about adoption?", order, rows) == order  # nobody named
    assert named_speakers_first("Carolines plans", order, rows) == order  # a whole word only


def test_a_question_about_a_conversation_is_embedded_without_its_speakers_names() -> None:
    rows = [{"kind": "exchange", "content": "Jon: Lost my job as a banker yesterday."},
            {"kind": "exchange", "content": "Gina: Hey Jon! I lost my job at Door Dash too."},
            {"kind": "note", "content": "Paris: a note, not a speaker"}]
    assert without_speakers("What do Jon and Gina both have in common?", rows) == "What do and both have in common?"
    assert without_speakers("Why did gina's store open?", rows) == "Why did store open?"  # any case, possessive
    assert without_speakers("Jonathan visited Paris", rows) == "Jonathan visited Paris"  # whole names only
    assert without_speakers("Jon, Gina?", rows) == "Jon, Gina?", "nothing but names: the query as it was"
    assert without_speakers("What did Jon say?", rows[2:]) == "What did Jon say?", "no exchange names him"


class _Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return super().embed(texts)


def test_search_among_exchanges_embeds_the_question_without_the_names_and_notes_as_asked(paths: Paths) -> None:
    embedder = _Recording()
    with Engine(paths, Settings(), embedder=embedder) as engine:
        for text in ("Jon: Lost my job as a banker yesterday.", "Gina: Hey Jon! I lost my job at Door Dash too."):
            engine.call("store", {"content": text, "kind": "exchange", "project": "chat"})
        engine.call("store", {"content": "Jon owns the deploy scripts", "project": "notes"})
        embedder.texts.clear()
        hits = engine.call("search", {"query": "What jobs did Jon and Gina lose?", "project": "chat"}).result.hits
        assert embedder.texts == ["What jobs did and lose?"]
        assert {h.content for h in hits} >= {"Jon: Lost my job as a banker yesterday."}
        embedder.texts.clear()
        engine.call("search", {"query": "Who owns the deploy scripts, Jon?", "project": "notes"})
        assert embedder.texts == ["Who owns the deploy scripts, Jon?"], "no exchanges: the query as asked"


def test_an_exchange_is_embedded_with_the_start_of_the_one_before_it(paths: Paths) -> None:
    embedder = HashingEmbedder()
    with Engine(paths, Settings(), embedder=embedder) as engine:
        first = engine.call("store", {"content": "Caroline: I went to the LGBTQ support group yesterday.",
                                      "kind": "exchange", "project": "chat"}).result.id
        engine.call("store", {"content": "An unrelated note in between", "project": "chat"})
        second = engine.call("store", {"content": "Melanie: Cool! What did it look like?", "kind": "exchange",
                                       "project": "chat", "title": "Melanie, 8 May"}).result.id
        vectors = {r["id"]: np.asarray(r["vector"]) for r in inspection.rows(engine.store(), "memories", None,
                                                                                 ["id", "vector"])}
    own, in_context = embedder.embed(["Melanie, 8 May\nMelanie: Cool! What did it look like?",
                                      "Melanie, 8 May\nCaroline: I went to the LGBTQ support group yesterday.\n"
                                      "Melanie: Cool! What did it look like?"])
    expected = (own + in_context) / np.linalg.norm(own + in_context)
    assert vectors[second] == pytest.approx(expected, abs=1e-6)
    assert vectors[first] == pytest.approx(embedder.embed(["Caroline: I went to the LGBTQ support group "
                                                           "yesterday."])[0], abs=1e-6)  # the first has none before it
    # A later process reads the previous exchange back from the workspace.
    with Engine(paths, Settings(), embedder=embedder) as engine:
        third = engine.call("store", {"content": "Caroline: Rainbow flags everywhere.", "kind": "exchange",
                                      "project": "chat"}).result.id
        vector = engine.store().memories_by_ids([third], ["vector"])[third]["vector"]
    own, in_context = embedder.embed(["Caroline: Rainbow flags everywhere.",
                                      "Melanie: Cool! What did it look like?\nCaroline: Rainbow flags everywhere."])
    assert np.asarray(vector) == pytest.approx((own + in_context) / np.linalg.norm(own + in_context), abs=1e-6)


def test_feedback_finds_what_the_best_results_are_about_beyond_the_querys_words(paths: Paths) -> None:
    texts = {"hit": "alpha beta", "related": "beta gamma", "unrelated": "delta epsilon"}
    for feedback, expected in ((False, ["hit"]), (True, ["hit", "related"])):
        settings = Settings.model_validate({"search": {"feedback": feedback, "fusion": "convex"}})
        with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
            if feedback is False:
                ids = {engine.call("store", {"content": c}).result.id: k for k, c in texts.items()}
            hits = engine.call("search", {"query": "alpha", "channels": ["semantic"], "limit": 3}).result.hits
            # Without feedback only "hit" shares a word with the query; the rest tie at zero similarity.
            found = [ids[h.id] for h in hits if h.score > 0]
            assert found == expected


def test_feedback_takes_the_vectors_the_semantic_channel_brought_and_reads_only_the_others(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        ids = [engine.call("store", {"content": c, "kind": "exchange"}).result.id
               for c in ("Jon: alpha beta", "Gina: beta gamma", "Jon: gamma delta")]
        store = engine.store()
        stored = store.memories_by_ids(ids, ["vector"])
        query = HashingEmbedder().embed(["beta"])[0]
        from_store = _moved_towards(store, query, ids, {})
        # One candidate's vector came with the semantic channel's rows; the other two are read.
        from_rows = _moved_towards(store, query, ids, {ids[0]: {"id": ids[0], "vector": stored[ids[0]]["vector"]},
                                                       ids[1]: {"id": ids[1], "kind": "exchange"}})
        assert from_store is not None and from_rows is not None
        assert from_rows == pytest.approx(from_store, abs=1e-6)
        mean = np.mean([np.asarray(stored[i]["vector"]) for i in ids], axis=0)
        expected = query + 0.5 * mean / np.linalg.norm(mean)
        assert from_store == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)
        outcome = hybrid_search(store, HashingEmbedder(), "beta", Filters(), SearchParams(limit=3, fusion="convex"))
        assert outcome.hits and all("vector" not in h.row for h in outcome.hits), "the vectors stay inside the search"


def test_auto_fusion_fuses_exchanges_by_score_and_everything_else_by_rank(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        for text in ("Caroline: I joined a pottery class", "Melanie: Pottery sounds fun, which studio?"):
            engine.call("store", {"content": text, "kind": "exchange", "workspace": "talk"})
        for text in ("Pottery kiln settings for stoneware", "Glaze recipes for pottery"):
            engine.call("store", {"content": text, "workspace": "notes"})
        talk = engine.call("search", {"query": "pottery class", "workspace": "talk"}).result.hits
        notes = engine.call("search", {"query": "pottery class", "workspace": "notes"}).result.hits
    assert talk[0].score > 0.5, "scaled scores: the best exchange of both channels scores near 1"
    assert notes[0].score < 2.2 / 61, "reciprocal ranks: at most the weights over (60 + 1)"


def test_the_title_is_searched_as_words_too(engine: Engine) -> None:
    note = engine.call("store", {"content": "We agreed to ship on Friday", "title": "Standup, 3 March"}).result.id
    engine.call("store", {"content": "Shipping checklist lives in the wiki"})
    hits = engine.call("search", {"query": "standup", "channels": ["lexical"]}).result.hits
    assert [h.id for h in hits] == [note]


def notes(engine: Engine) -> dict[str, str]:
    items = {
        "tabs": ("I prefer tabs over spaces in every editor", "general", ["style"]),
        "db": ("We chose LanceDB for storing vectors and full text", "engram", ["storage", "decision"]),
        "deploy": ("Deploy with systemd on the home server", "ops", []),
        "lance2": ("LanceDB folders are copied nightly for backup", "ops", ["storage"]),
    }
    return {k: engine.call("store", {"content": c, "project": p, "tags": t}).result.id
            for k, (c, p, t) in items.items()}


def test_each_hit_records_the_channels_that_found_it(engine: Engine) -> None:
    ids = notes(engine)
    hits = engine.call("search", {"query": "LanceDB vectors", "channels": ["semantic", "lexical"]}).result.hits
    assert hits[0].id == ids["db"]
    assert hits[0].channels == ["semantic", "lexical"]
    semantic_only = engine.call("search", {"query": "LanceDB vectors", "channels": ["semantic"]}).result.hits
    assert all(h.channels == ["semantic"] for h in semantic_only)


def test_filters_restrict_every_channel(engine: Engine) -> None:
    ids = notes(engine)
    by_project = engine.call("search", {"query": "LanceDB", "project": "ops"}).result.hits
    assert by_project[0].id == ids["lance2"]
    assert {h.project for h in by_project} == {"ops"}
    by_tag = engine.call("search", {"query": "LanceDB storage", "tags": ["decision"]}).result.hits
    assert [h.id for h in by_tag] == [ids["db"]]
    two_tags = engine.call("search", {"query": "LanceDB", "tags": ["decision", "style"]}).result.hits
    assert {h.id for h in two_tags} == {ids["db"], ids["tabs"]}
    future = datetime.now(UTC) + timedelta(days=1)
    assert engine.call("search", {"query": "LanceDB", "since": future.isoformat()}).result.hits == []
    assert len(engine.call("search", {"query": "LanceDB", "until": future.isoformat()}).result.hits) >= 2
    assert engine.call("search", {"query": "LanceDB", "kind": "chunk"}).result.hits == []


def test_source_prefix_filter_and_type_filter(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"a/one.md": "# One\n\nalpha beta gamma", "b/two.py": "def alpha():\n    pass\n"})
    engine.call("ingest_path", {"path": str(root)})
    prefix = (root / "a").resolve().as_posix()
    hits = engine.call("search", {"query": "alpha", "source_prefix": prefix}).result.hits
    assert hits and all(h.source.startswith(prefix) for h in hits)
    assert [h.type for h in engine.call("search", {"query": "alpha", "type": "python"}).result.hits] == ["python"]


def test_graph_channel_reaches_chunks_that_share_an_identifier(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "g", {
        "guide.md": "# Guide\n\nTurn on ``SECURE_SSL_REDIRECT`` to force encrypted connections.",
        "settings.py": "# Settings\nSECURE_SSL_REDIRECT = True\n",
        "other.md": "# Other\n\nNothing related here at all.",
    })
    engine.call("ingest_path", {"path": str(root)})
    hits = engine.call("search", {"query": "force encrypted connections", "channels": ["lexical", "graph"]}).result.hits
    by_name = {Path(h.source).name: h for h in hits}
    assert "lexical" in by_name["guide.md"].channels
    assert by_name["settings.py"].channels == ["graph"]
    assert "other.md" not in by_name


def test_neighbors_follow_sequence_and_shared_names(engine: Engine, tmp_path: Path) -> None:
    body = "\n\n".join(f"Paragraph {i} about ``cache_page`` and more words to fill the chunk." * 3
                       for i in range(30))
    root = write_tree(tmp_path / "n", {"long.md": "# Long\n\n" + body, "code.py": "def cache_page():\n    pass\n"})
    engine.call("ingest_path", {"path": str(root)})
    store = engine.store()
    first = min(inspection.rows(store, "memories", "chunk_index = 0 AND source LIKE '%long.md'"), key=lambda r: r["id"])
    result = engine.call("neighbors", {"id": first["id"], "limit": 50}).result
    relations = {n.relation for n in result.items}
    assert "next" in relations and "mentions" in relations
    assert any(Path(n.source).name == "code.py" and n.via == "e:cache_page" for n in result.items)
    second = next(n for n in result.items if n.relation == "next")
    back = engine.call("neighbors", {"id": second.id, "reverse": True, "limit": 50}).result
    assert any(n.id == first["id"] and n.relation == "next^-1" for n in back.items)


def test_without_an_embedding_model_search_degrades_to_a_warning(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as writer:
        writer.call("store", {"content": "tabs over spaces"})
    # The bundled model cannot be built: its folder is blocked by a file of the same name.
    paths.models_dir.write_text("not a folder")
    with Engine(paths, Settings()) as engine:
        out = engine.call("search", {"query": "tabs"})
        assert [h.channels for h in out.result.hits] == [["lexical"]]
        assert out.result.warnings[0] == "semantic channel unavailable: no embedding model is loaded"
        assert "Cannot write to the models folder" in out.result.warnings[1]
        assert out.text.startswith("! semantic channel unavailable")


def test_a_failing_channel_is_reported_and_the_others_answer(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    notes(engine)
    store = engine.store()

    def broken(*args: object, **kwargs: object) -> list:
        raise StoreError("full-text index unreadable (test)")

    monkeypatch.setattr(store, "text_search", broken)
    out = engine.call("search", {"query": "LanceDB"}).result
    assert out.warnings == ["lexical channel failed: full-text index unreadable (test)"]
    assert out.hits and all("lexical" not in h.channels for h in out.hits)


def test_a_failing_lexical_channel_among_exchanges_is_tried_once_and_said_once(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ("Jon: Lost my job as a banker yesterday.", "Gina: I lost my job at Door Dash too."):
        engine.call("store", {"content": text, "kind": "exchange", "project": "chat"})
    store = engine.store()
    tried: list[str] = []

    def broken(text: str, *args: object, **kwargs: object) -> list:
        tried.append(text)
        raise StoreError("full-text index unreadable (test)")

    monkeypatch.setattr(store, "text_search", broken)
    out = engine.call("search", {"query": "What jobs did Jon lose?"}).result
    assert out.warnings == ["lexical channel failed: full-text index unreadable (test)"]
    assert tried == ["What jobs did Jon lose?"] and out.hits, "the semantic channel still answers"
