"""Rendering numbered evidence blocks under one character budget.

A response is: optional lines on top (warnings, a line per recall step), then numbered blocks
(a meta line, an optional heading line, an excerpt), then a final line counting what is not
shown. The budget picks the most blocks that fit, in rank order, each with the widest common
excerpt width of at least ``min_width`` characters (a text shorter than the width is shown whole).
Nothing is dropped silently: the final line counts every result left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIN_EXCERPT = 300
_WORD = re.compile(r"[A-Za-z0-9_]{3,}")


@dataclass(frozen=True)
class Block:
    meta: str  # first line, without the "[n] " number
    text: str  # the full text; shown whole or as an excerpt
    heading: str = ""  # an optional second line (e.g. the heading path)


def query_terms(query: str) -> list[str]:
    """Lower-cased words of at least three characters, for placing excerpts."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))


def excerpt(text: str, width: int, terms: Sequence[str]) -> str:
    """At most ``width`` characters of ``text``: all of it, or the line-aligned window densest in ``terms``."""
    text = text.strip()
    if len(text) <= width:
        return text
    lower = text.lower()
    starts = [0] + [m.end() for m in re.finditer("\n", text) if m.end() < len(text)]
    best, best_hits = 0, -1
    if terms:
        positions = sorted(p.start() for t in terms for p in re.finditer(re.escape(t), lower))
        for s in starts:
            hits = sum(1 for p in positions if s <= p < s + width - 2)
            if hits > best_hits:
                best, best_hits = s, hits
    lead = "…" if best > 0 else ""
    room = width - len(lead) - 1
    window = text[best:best + room].rstrip()
    return lead + window + "…"


def _block_text(n: int, block: Block, shown: str) -> str:
    lines = [f"[{n}] {block.meta}"]
    if block.heading:
        lines.append(block.heading)
    lines.append(shown)
    return "\n".join(lines)


def render_blocks(blocks: Sequence[Block], max_chars: int, *, top: Sequence[str] = (), terms: Sequence[str] = (),
                  footer: Callable[[int, int], str], min_width: int = MIN_EXCERPT, start: int = 1) -> str:
    """Render ``blocks`` (best first) in at most ``max_chars`` characters.

    ``footer(shown, total)`` gives the final line. Blocks are numbered from ``start``.
    """
    head = "\n".join(top)
    total = len(blocks)

    def fixed_cost(n: int) -> int:
        parts = [head] if head else []
        parts += [_block_text(start + i, b, "") for i, b in enumerate(blocks[:n])]
        parts.append(footer(n, total))
        return len("\n\n".join(parts))

    def width_for(n: int) -> int | None:
        """The widest common width that fits n blocks, or None when under min_width (and not all whole)."""
        room = max_chars - fixed_cost(n)
        lengths = [len(b.text.strip()) for b in blocks[:n]]
        if room < 0:
            return None
        if sum(lengths) <= room:
            return max(lengths, default=0)
        lo, hi = 0, max(lengths)
        while lo < hi:  # largest w with sum(min(len, w)) <= room
            mid = (lo + hi + 1) // 2
            if sum(min(x, mid) for x in lengths) <= room:
                lo = mid
            else:
                hi = mid - 1
        return lo if lo >= min(min_width, max(lengths)) else None

    n, width = total, None
    while n > 0:
        width = width_for(n)
        if width is not None:
            break
        n -= 1
    parts = [head] if head else []
    for i, block in enumerate(blocks[:n]):
        parts.append(_block_text(start + i, block, excerpt(block.text, width or 0, terms)))
    parts.append(footer(n, total))
    out = "\n\n".join(parts)
    return out if len(out) <= max_chars else out[: max_chars - 1] + "…"
