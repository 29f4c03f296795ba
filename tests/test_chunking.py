"""Chunking follows the author's structure and never loses or cuts a line."""

from __future__ import annotations

from engram.core.ingest.chunking import chunk_text, summarize, text_format

RST = """\
=====================
Security in Django
=====================

Django has security features.

Cross site scripting
====================

XSS attacks let a user inject scripts.

Details
-------

Escaping happens in templates.

SQL injection
=============

Query parameterisation prevents it.
"""

MARKDOWN = """\
# Guide

Intro text.

## Install

```bash
# not a heading
pip install engram
```

## Use

Run it.
"""

PYTHON = '''\
"""Module docstring explains the module."""

import os


class Store:
    """A store."""

    def open(self):
        return 1

    @property
    def name(self):
        return "x"


def helper():
    return 2
'''


def test_formats_come_from_the_extension() -> None:
    assert [text_format(s) for s in (".md", ".RST", ".py", ".tsx", ".txt", ".csv")] == [
        "markdown", "rst", "python", "javascript", "text", "text"]


def test_rest_titles_split_sections_with_their_heading_path() -> None:
    chunks = chunk_text(RST, "rst", chunk_chars=100, overlap_chars=0)
    assert [c.title for c in chunks] == [
        "Security in Django",
        "Security in Django > Cross site scripting",
        "Security in Django > Cross site scripting > Details",
        "Security in Django > SQL injection",
    ]
    assert chunks[1].content.startswith("Cross site scripting\n====")
    assert (chunks[1].start_line, chunks[1].end_line) == (7, 10)


def test_small_sections_are_packed_together_up_to_the_target() -> None:
    chunks = chunk_text(RST, "rst", chunk_chars=1000, overlap_chars=0)
    assert len(chunks) == 1
    assert chunks[0].title == "Security in Django"
    assert chunks[0].content == RST.strip()


def test_markdown_headings_inside_code_fences_are_not_headings() -> None:
    chunks = chunk_text(MARKDOWN, "markdown", chunk_chars=60, overlap_chars=0)
    assert [c.title for c in chunks] == ["Guide", "Guide > Install", "Guide > Use"]
    assert "# not a heading" in chunks[1].content


def test_python_definitions_start_chunks_with_their_decorators() -> None:
    chunks = chunk_text(PYTHON, "python", chunk_chars=60, overlap_chars=0)
    titles = [c.title for c in chunks]
    assert "class Store > def open" in titles
    named = next(c for c in chunks if c.title == "class Store > def name")
    assert named.content.lstrip().startswith("@property")
    assert chunks[-1].title == "def helper"


def test_javascript_functions_and_classes_are_boundaries() -> None:
    js = "import x from 'y';\n\nexport function alpha() {\n  return 1;\n}\n\nclass Beta {\n  run() {}\n}\n" \
         "const gamma = async (a) => a;\n"
    titles = [c.title for c in chunk_text(js, "javascript", chunk_chars=45, overlap_chars=0)]
    assert titles == ["", "alpha", "Beta", "gamma"]


def test_long_sections_split_at_blank_lines_with_overlap_and_whole_lines() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 30 for i in range(12)]
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, "text", chunk_chars=400, overlap_chars=200)
    assert len(chunks) > 3
    lines = text.splitlines()
    for c in chunks:
        assert len(c.content) <= 400 + 200
        assert c.content.splitlines() == lines[c.start_line - 1:c.end_line]
    covered = set()
    for c in chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= covered
    assert any(b.start_line <= a.end_line for a, b in zip(chunks, chunks[1:])), "expected some overlap"


def test_a_single_line_longer_than_the_target_is_kept_whole() -> None:
    text = "x" * 5000
    chunks = chunk_text(text, "text", chunk_chars=1000, overlap_chars=100)
    assert [c.content for c in chunks] == [text]


def test_blank_text_gives_no_chunks() -> None:
    assert chunk_text("\n \n\t\n", "markdown", chunk_chars=500, overlap_chars=50) == []


def test_summaries_take_the_title_and_first_prose() -> None:
    assert summarize(RST, "rst") == "Security in Django: Django has security features."
    assert summarize(PYTHON, "python") == "Module docstring explains the module."
    assert len(summarize("word " * 500, "text", limit=100)) == 100


def test_a_plain_text_titled_by_a_short_first_line_carries_it_on_every_chunk() -> None:
    text = "Aspirin and heart attacks\n\n" + "The trial followed adults for five years. " * 60
    chunks = chunk_text(text, "text", chunk_chars=600, overlap_chars=0)
    assert len(chunks) > 1 and {c.title for c in chunks} == {"Aspirin and heart attacks"}
    assert chunk_text("One line only, no blank after\nmore text\n", "text", chunk_chars=600,
                      overlap_chars=0)[0].title == ""
