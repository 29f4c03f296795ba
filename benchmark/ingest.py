"""Suite `ingest`: where a fresh ingest's time goes, against the embedding model's own rate, and an edit re-ingested.

    python -m benchmark ingest

1. A fresh ingest of the lookups corpus (Django 5.2.8: its documentation and Python sources) with the bundled
   model, loaded beforehand. The time is split into embedding (the model's calls), store writes (the writer's
   tasks) and the rest (listing, reading, chunking, building rows).
2. The raw embedding rate in the same process: every chunk's text as ingest gave it to the model, embedded again,
   one text per call, nothing else running; end-to-end chunks/s over this rate says what the pipeline costs beyond
   the model.
3. The same model run other ways on 300 of those texts: one thread; two single-thread copies side by side; the
   checkpoint's own f32 weights (converted like the bundled f16 file), each with its lowest cosine to the bundled
   model's vectors.
4. A day's edit: one sentence changed in the middle of 20 of the largest files, then the same ingest again. It
   reports the chunks of the changed files, the texts actually embedded (a chunk whose text the workspace already
   holds keeps its vector) and the seconds, beside the time re-embedding every chunk of those files would take at
   the raw rate (what ingest did before it kept vectors).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from engram.core.ingest.records import embedding_text
from engram.core.store import inspection

from .common import Run, engine_at
from .corpus import load
from .suites import LookupsOptions

EDITED_FILES = 20


class TimedEmbedder:
    """The loaded model, timed and counted (the embedder seam)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.seconds = 0.0
        self.texts = 0

    def embed(self, texts: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)

    def close(self) -> None:
        pass


def _timed_writer(engine: Any) -> dict[str, float]:
    spent = {"seconds": 0.0}
    run = engine.internals().writer.run

    def timed(fn: Any, *args: object) -> Any:
        started = time.perf_counter()
        try:
            return run(fn, *args)
        finally:
            spent["seconds"] += time.perf_counter() - started

    engine.internals().writer.run = timed
    return spent


def _edit(folder: Path, sources: list[str]) -> list[str]:
    """Change one sentence in the middle of each file; returns the sources changed."""
    changed = []
    for source in sources:
        path = Path(source)
        text = path.read_text(encoding="utf-8")
        middle = text.find("\n", len(text) // 2)
        if middle < 0:
            continue
        path.write_text(text[:middle] + "\n# Edited for the ingest benchmark: one more sentence here.\n"
                        + text[middle + 1:], encoding="utf-8")
        changed.append(source)
    return changed


def runtime_variants(run: Run, owner: Any, texts: list[str]) -> dict[str, Any]:
    """Raw embedding rates of the bundled model run other ways, on a sample of the corpus's chunk texts: one
    thread, two single-thread copies side by side, and the checkpoint's own f32 weights; cosine to the default."""
    import threading

    import numpy as np

    from engram.core.embedding.bundled import ensure_bundled_model, source_folder
    from engram.core.embedding.gguf_convert import convert_bert_to_gguf
    from engram.core.embedding.llama_embedder import LlamaEmbedder
    from engram.core.manifest import model_entry

    entry = model_entry("all-minilm-l6-v2")
    f16 = ensure_bundled_model(entry, owner.paths.models_dir)
    f32 = run.workspace("ingest-f32") / "all-MiniLM-L6-v2-f32.gguf"
    if not f32.is_file():
        f32.parent.mkdir(parents=True, exist_ok=True)
        convert_bert_to_gguf(source_folder(entry), f32, entry.name, f32=True)
    sample = texts[: 30 if run.quick else 300]

    def model(path: Path, threads: int) -> LlamaEmbedder:
        return LlamaEmbedder(path, model_id=entry.id, dimensions=384, max_tokens=entry.max_tokens or 256,
                             threads=threads)

    def timed(models: list[LlamaEmbedder]) -> tuple[float, np.ndarray]:
        for m in models:
            m.embed(sample[:2])  # warm
        parts: list[np.ndarray] = [np.empty((0, 384), np.float32)] * len(models)
        share = -(-len(sample) // len(models))

        def work(i: int) -> None:
            parts[i] = models[i].embed(sample[i * share:(i + 1) * share])

        started = time.perf_counter()
        workers = [threading.Thread(target=work, args=(i,)) for i in range(len(models))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        seconds = time.perf_counter() - started
        for m in models:
            m.close()
        return len(sample) / seconds, np.concatenate(parts)

    out: dict[str, Any] = {"texts": len(sample)}
    reference: np.ndarray | None = None
    for label, paths, threads in (("f16 (bundled), 2 threads", [f16], 2), ("f16, 1 thread", [f16], 1),
                                  ("f16, two 1-thread copies side by side", [f16, f16], 1),
                                  ("f32 (the checkpoint's precision), 2 threads", [f32], 2)):
        rate, vectors = timed([model(p, threads) for p in paths])
        reference = vectors if reference is None else reference
        out[label] = {"texts_per_s": round(rate, 2),
                      "min_cosine_to_bundled": round(float(np.min(np.sum(vectors * reference, axis=1))), 5)}
        print(f"runtime variant {label}: {out[label]}", flush=True)
    return out


def run_suite(run: Run, options: LookupsOptions) -> dict[str, Any]:
    corpus = load(run, options.lookups)
    base = run.workspace("ingest-suite")
    shutil.rmtree(base, ignore_errors=True)
    tree = base.parent / "ingest-suite-corpus"  # a copy: the edit must not touch the cached corpus
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(corpus.folder, tree)
    with engine_at(run.workspace("ingest-model")) as owner:
        model = TimedEmbedder(owner.embedder())
        with engine_at(base, embedder=model) as engine:
            writes = _timed_writer(engine)
            args = {"path": str(tree), "project": corpus.name, "include": corpus.include}
            started = time.perf_counter()
            report = engine.call("ingest_path", args).result
            total = time.perf_counter() - started
            fresh = {"files": report.files_indexed, "chunks": report.chunks_written, "seconds": round(total, 1),
                     "chunks_per_s": round(report.chunks_written / total, 2),
                     "embedding_s": round(model.seconds, 3), "texts_embedded": model.texts,
                     "writes_s": round(writes["seconds"], 3),
                     "other_s": round(total - model.seconds - writes["seconds"], 3)}
            print(f"ingest: {fresh}", flush=True)
            store = engine.store()
            rows = inspection.rows(store, "memories", None, ["title", "content", "source"])
            texts = [embedding_text(r["title"], r["content"]) for r in rows]
            started = time.perf_counter()
            owner.embedder().embed(texts)
            raw_s = time.perf_counter() - started
            raw = {"texts": len(texts), "seconds": round(raw_s, 1), "texts_per_s": round(len(texts) / raw_s, 2)}
            print(f"raw embedding: {raw}", flush=True)
            variants = runtime_variants(run, owner, texts)

            per_source: dict[str, int] = {}
            for r in rows:
                per_source[r["source"]] = per_source.get(r["source"], 0) + 1
            largest = sorted(per_source, key=lambda s: (-per_source[s], s))[:2 if run.quick else EDITED_FILES]
            changed = _edit(tree, largest)
            before = model.texts
            started = time.perf_counter()
            again = engine.call("ingest_path", args).result
            edit_s = time.perf_counter() - started
            new_chunks = sum(1 for r in inspection.rows(store, "memories", None, ["source"]) if r["source"] in set(changed))
            edit = {"files_changed": len(changed), "files_indexed": again.files_indexed,
                    "chunks_of_changed_files": new_chunks, "texts_embedded": model.texts - before,
                    "seconds": round(edit_s, 2),
                    "all_chunks_at_raw_rate_s": round(new_chunks / raw["texts_per_s"], 1)}
            print(f"edit: {edit}", flush=True)
    shutil.rmtree(tree, ignore_errors=True)
    return {"corpus": corpus.spec["corpus"], "sdist_sha256": corpus.sha256, "fresh": fresh, "raw_embedding": raw,
            "end_to_end_over_raw": round(fresh["chunks_per_s"] / raw["texts_per_s"], 3), "edit": edit,
            "runtime_variants": variants}


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    fresh, raw, edit, variants = result["fresh"], result["raw_embedding"], result["edit"], result["runtime_variants"]
    lines = [f"# Ingest{' (quick)' if envelope['quick'] else ''}", "",
             f"Fresh ingest of {result['corpus']['name']} ({fresh['files']:,} files, {fresh['chunks']:,} chunks): "
             f"{fresh['seconds']} s = **{fresh['chunks_per_s']} chunks/s**; embedding {fresh['embedding_s']} s "
             f"({fresh['texts_embedded']:,} texts), store writes {fresh['writes_s']} s, the rest {fresh['other_s']} s.",
             "", f"Raw embedding rate of the same {raw['texts']:,} texts in the same process: "
             f"**{raw['texts_per_s']} texts/s**; end-to-end / raw = **{result['end_to_end_over_raw']}**.", "",
             f"One sentence changed in {edit['files_changed']} of the largest files, ingested again: "
             f"{edit['files_indexed']} files, {edit['chunks_of_changed_files']:,} chunks, "
             f"**{edit['texts_embedded']} texts embedded** in **{edit['seconds']} s** (re-embedding every chunk of "
             f"those files would take {edit['all_chunks_at_raw_rate_s']} s at the raw rate).", "",
             f"The model run other ways, on {variants['texts']} of the same texts (raw rate; lowest cosine to the "
             "bundled model's vectors):", "", "| runtime | texts/s | min cosine |", "|---|---|---|"]
    lines += [f"| {label} | {v['texts_per_s']} | {v['min_cosine_to_bundled']} |" for label, v in variants.items()
              if label != "texts"]
    lines += [""]
    return "\n".join(lines)
