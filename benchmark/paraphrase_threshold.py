"""How high a near-duplicate cosine threshold must be: paraphrased turns against distinct turns (LoCoMo).

    python -m benchmark.paraphrase_threshold --data ../shared/data/locomo-public.json

Each turn is embedded with Engram's own embedder as the conversation suite's note content would be, without its
title: ``"speaker: text"`` (plus ``[shares a photo: caption]`` where the turn has one). Its rule-made paraphrase
(``benchmark.paraphrase``; the spoken text is rewritten, the speaker and caption kept) and its exact repeat
(white space and case only) are embedded the same way. Per conversation, every turn's similarity to its
paraphrase is set against its similarity to the nearest *other* turn of the same conversation whose normalised
content differs (the turns a near-duplicate merge must keep apart). Other turns with the same normalised content
("Thanks!" said twice by one speaker) are exact duplicates, counted on their own.

Printed: per threshold, the share of paraphrase pairs at or above it (merged) and the share of turns whose nearest
different-text turn is at or above it (wrongly merged); the threshold recommended (the lowest of those listed that
keeps ≥ 99.5 % of turns apart, and the exact cut that does); the closest different-text pairs.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engram.core import Settings

from .common import Run, engine_at
from .paraphrase import exact_repeat, normalise, paraphrase

THRESHOLDS = (0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98)
#: The share of turns a threshold must keep apart from every different-text turn of their conversation.
KEEP_APART = 0.995
_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One turn as stored: who said it, what, and the caption of a photo it shared."""

    dia_id: str
    speaker: str
    text: str
    caption: str

    def content(self, text: str | None = None) -> str:
        """The note content the conversation suite stores, optionally with ``text`` in place of the turn's."""
        said = self.text if text is None else text
        return f"{self.speaker}: {said}" + (f" [shares a photo: {self.caption}]" if self.caption else "")


@dataclass
class Conversation:
    """One sample's turns, their variants' vectors, and the similarities measured on them."""

    sample: str
    turns: list[Turn]
    paraphrases: list[str]
    repeats: list[str]
    keys: list[str]  # normalised content
    paraphrase_sim: np.ndarray  # (n,) turn · its paraphrase
    repeat_sim: np.ndarray  # (n,) turn · its exact repeat
    nearest_sim: np.ndarray  # (n,) turn · nearest different-text turn
    nearest_index: np.ndarray  # (n,) which turn that is
    paraphrase_finds_source: np.ndarray  # (n,) bool: the paraphrase's nearest turn has the source's text
    similarity: np.ndarray  # (n, n) turn · turn


def read_turns(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn of a LoCoMo conversation in the order it was said."""
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    return [Turn(str(t["dia_id"]), str(t["speaker"]), str(t.get("text", "")), str(t.get("blip_caption") or ""))
            for n in numbers for t in conversation[f"session_{n}"] or []]


def measure(sample: str, turns: list[Turn], embed: Any, rng: random.Random) -> Conversation:
    """Embed one conversation's turns, paraphrases and repeats, and compare them."""
    contents = [t.content() for t in turns]
    paraphrases = [t.content(paraphrase(t.text, rng)) for t in turns]
    repeats = [exact_repeat(c, rng) for c in contents]
    n = len(turns)
    vectors = np.asarray(embed(contents + paraphrases + repeats), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)  # the embedder's are already
    own, para, rep = vectors[:n], vectors[n:2 * n], vectors[2 * n:]
    keys = [normalise(c) for c in contents]
    key_ids = np.unique(np.array(keys, dtype=object), return_inverse=True)[1]
    same_text = key_ids[:, None] == key_ids[None, :]
    similarity = own @ own.T
    masked = np.where(same_text, -np.inf, similarity)
    nearest_index = masked.argmax(axis=1)
    nearest_sim = masked[np.arange(n), nearest_index]
    para_nearest = (para @ own.T).argmax(axis=1)
    return Conversation(sample, turns, paraphrases, repeats, keys, np.einsum("ij,ij->i", own, para),
                        np.einsum("ij,ij->i", own, rep), nearest_sim, nearest_index,
                        key_ids[para_nearest] == key_ids, similarity)


def share(values: np.ndarray, threshold: float) -> float:
    return float(np.mean(values >= threshold)) if values.size else 0.0


def exact_cut(nearest: np.ndarray, keep_apart: float = KEEP_APART) -> float:
    """The lowest threshold (to 4 decimals, rounded up) at which at most ``1 - keep_apart`` of turns have a
    different-text turn at or above it."""
    allowed = int(np.floor((1 - keep_apart) * nearest.size))
    ordered = np.sort(nearest)[::-1]
    blocking = ordered[allowed] if allowed < ordered.size else -1.0
    return float(np.ceil((blocking + 1e-6) * 10_000) / 10_000)


def distinct_pairs(conversations: Sequence[Conversation]) -> list[tuple[float, Conversation, int, int]]:
    """Every unordered pair of different-text turns within a conversation, most similar first (top 200 each)."""
    out: list[tuple[float, Conversation, int, int]] = []
    for c in conversations:
        n = len(c.turns)
        rows, cols = np.triu_indices(n, k=1)
        keep = np.array([c.keys[i] != c.keys[j] for i, j in zip(rows, cols)], dtype=bool)
        rows, cols = rows[keep], cols[keep]
        sims = c.similarity[rows, cols]
        top = np.argsort(-sims)[:200]
        out += [(float(sims[k]), c, int(rows[k]), int(cols[k])) for k in top]
    return sorted(out, key=lambda p: -p[0])


def identical_pairs(conversations: Sequence[Conversation]) -> tuple[int, int, float]:
    """Pairs of turns with the same normalised content: how many, how many turns have such a twin, and the
    lowest similarity of such a pair."""
    pairs = twins = 0
    low = 1.0
    for c in conversations:
        groups: dict[str, list[int]] = {}
        for i, key in enumerate(c.keys):
            groups.setdefault(key, []).append(i)
        for members in groups.values():
            if len(members) > 1:
                pairs += len(members) * (len(members) - 1) // 2
                twins += len(members)
                low = min(low, float(c.similarity[np.ix_(members, members)].min()))
    return pairs, twins, low


def _clip(text: str, width: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def report(conversations: Sequence[Conversation], seconds: float, chosen: str) -> str:
    """The table, the recommendation and the closest different-text pairs, as Markdown."""
    para = np.concatenate([c.paraphrase_sim for c in conversations])
    nearest = np.concatenate([c.nearest_sim for c in conversations])
    repeat = np.concatenate([c.repeat_sim for c in conversations])
    found = np.concatenate([c.paraphrase_finds_source for c in conversations])
    pairs = distinct_pairs(conversations)
    same_words = {(id(c), i, j) for _, c, i, j in pairs if normalise(c.turns[i].text) == normalise(c.turns[j].text)}
    n_pairs, twins, low = identical_pairs(conversations)
    lines = [f"# Near-duplicate threshold — {chosen}", "",
             f"{len(conversations)} conversations, {para.size:,} turns; embedded 3× each (turn, paraphrase, exact "
             f"repeat) in {seconds:.0f} s.", "",
             "| threshold | paraphrases merged | turns wrongly merged (nearest different-text turn ≥ t) "
             "| different-text pairs ≥ t | of which same words, other speaker |", "|---|---|---|---|---|"]
    for t in THRESHOLDS:
        above = [p for p in pairs if p[0] >= t]
        other_speaker = sum(1 for _, c, i, j in above if (id(c), i, j) in same_words)
        lines.append(f"| {t:.2f} | {share(para, t):.1%} | {share(nearest, t):.2%} ({int((nearest >= t).sum())}) "
                     f"| {len(above)} | {other_speaker} |")
    ok = [t for t in THRESHOLDS if share(nearest, t) <= 1 - KEEP_APART]
    cut = exact_cut(nearest)
    lines += ["", f"Paraphrase similarity: median {np.median(para):.3f}, p10 {np.percentile(para, 10):.3f}, "
              f"min {para.min():.3f}; the paraphrase's nearest turn is its source in {found.mean():.1%}. "
              f"Exact repeats (white space/case only): min similarity {repeat.min():.4f}.",
              f"Nearest different-text turn: median {np.median(nearest):.3f}, p99 {np.percentile(nearest, 99):.3f}, "
              f"max {nearest.max():.3f}.",
              f"Identical normalised content (exact duplicates, left out above): {n_pairs} pairs over {twins} turns, "
              f"lowest similarity {low:.4f}.", ""]
    if ok:
        lines.append(f"**Recommended: {ok[0]:.2f}** — the lowest listed threshold keeping ≥ {KEEP_APART:.1%} of turns "
                     f"apart from every different-text turn ({1 - share(nearest, ok[0]):.2%} kept apart); it merges "
                     f"{share(para, ok[0]):.1%} of paraphrases.")
    else:
        lines.append(f"**No listed threshold keeps {KEEP_APART:.1%} of turns apart.**")
    lines += [f"Exact cut for {KEEP_APART:.1%}: {cut:.4f} (merges {share(para, cut):.1%} of paraphrases).", "",
              "Closest different-text pairs (what a low threshold would wrongly merge):", "",
              "| cos | conversation | turns | A | B |", "|---|---|---|---|---|"]
    for sim, c, i, j in pairs[:10]:
        a, b = c.turns[i], c.turns[j]
        lines.append(f"| {sim:.4f} | {c.sample} | {a.dia_id} / {b.dia_id} | {_clip(a.content())} | "
                     f"{_clip(b.content())} |")
    lows = sorted(((float(s), c, i) for c in conversations for i, s in enumerate(c.paraphrase_sim)),
                  key=lambda low: low[0])[:5]
    lines += ["", "Least similar paraphrases:", "", "| cos | turn | paraphrase |", "|---|---|---|"]
    lines += [f"| {s:.4f} | {_clip(c.turns[i].content(), 80)} | {_clip(c.paraphrases[i], 80)} |" for s, c, i in lows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (a list of samples)")
    parser.add_argument("--samples", type=int, default=0, help="a seeded subset of this many samples (0: all)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help=(
        "CPU threads for the embedder (1 is ~10x faster than 2 on 2 busy cores: llama.cpp threads spin-wait)"))
    args = parser.parse_args(argv)
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    chosen = f"all {len(samples)} samples"
    if 0 < args.samples < len(samples):
        chosen = f"a seeded subset of {args.samples} of {len(samples)} samples"
        samples = random.Random(args.seed).sample(samples, args.samples)
    settings = Settings()
    settings.embed.threads = args.threads
    engine = engine_at(Run().workspace("paraphrase-threshold"), settings)
    try:
        embedder = engine.embedder()
        rng = random.Random(args.seed)
        started = time.perf_counter()
        conversations = [measure(str(s.get("sample_id", k)), read_turns(s["conversation"]), embedder.embed, rng)
                         for k, s in enumerate(samples)]
        seconds = time.perf_counter() - started
    finally:
        engine.close()
    print(report(conversations, seconds, f"{args.data.name}, {chosen}, seed {args.seed}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
