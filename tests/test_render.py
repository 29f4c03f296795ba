"""The budget renderer: the most blocks that fit, one common excerpt width ≥ 300, nothing hidden silently."""

from __future__ import annotations

import pytest

from engram.core.tools.render import Block, excerpt, render_blocks


def footer(shown: int, total: int) -> str:
    return f"— {shown} of {total} shown"


def blocks(n: int, length: int = 1000) -> list[Block]:
    return [Block(f"id{i:02d} · meta", (f"word{i} " * length)[:length], f"Heading {i}") for i in range(n)]


@pytest.mark.parametrize("budget", [1200, 2000, 4000, 8000, 12000])
def test_output_never_exceeds_the_budget_and_counts_what_is_hidden(budget: int) -> None:
    items = blocks(20)
    out = render_blocks(items, budget, footer=footer)
    assert len(out) <= budget
    shown = out.count("\n[")  + (1 if out.startswith("[") else 0)
    assert out.endswith(f"— {shown} of 20 shown")
    assert shown >= 1


def test_every_shown_excerpt_gets_one_common_width_of_at_least_300() -> None:
    out = render_blocks(blocks(10), 3000, footer=footer)
    bodies = [part.split("\n")[2] for part in out.split("\n\n")[:-1]]
    widths = {len(b) for b in bodies}
    assert len(widths) == 1 and widths.pop() >= 300


def test_short_texts_are_shown_whole_and_leave_room_for_more_blocks() -> None:
    items = [Block("m", "short text"), *blocks(3, 2000)]
    out = render_blocks(items, 4000, footer=footer)
    assert "\nshort text\n" in out
    assert out.endswith("— 4 of 4 shown")


def test_everything_fits_whole_when_the_budget_allows() -> None:
    items = blocks(2, 100)
    out = render_blocks(items, 12000, footer=footer)
    assert out == "\n\n".join(f"[{i + 1}] id{i:02d} · meta\nHeading {i}\n{items[i].text.strip()}" for i in range(2)) \
        + "\n\n— 2 of 2 shown"


def test_lines_on_top_count_against_the_budget() -> None:
    top = ["! semantic channel unavailable: no embedding model is loaded"]
    out = render_blocks(blocks(10), 1500, top=top, footer=footer)
    assert out.startswith(top[0]) and len(out) <= 1500


def test_excerpts_move_to_where_the_query_words_are() -> None:
    text = "\n".join(["intro line about nothing"] * 40 + ["the CSRF token is checked here"] + ["tail"] * 40)
    cut = excerpt(text, 120, ["csrf", "token"])
    assert "CSRF token" in cut and cut.startswith("…") and cut.endswith("…") and len(cut) <= 120
    assert excerpt("tiny", 300, ["x"]) == "tiny"
