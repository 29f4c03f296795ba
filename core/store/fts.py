"""The memories' full-text index: BM25 over ``search_text`` (a row's title and content)."""

from __future__ import annotations

from typing import Any

#: The column the full-text index covers.
FTS_COLUMN = "search_text"


def create_fts(table: Any) -> None:
    """The full-text index on ``search_text`` (title and content; BM25, stemmed, stop words out, accents folded)."""
    from lancedb.index import FTS

    table.create_index(FTS_COLUMN, config=FTS(with_position=False, stem=True, remove_stop_words=True,
                                              ascii_folding=True), replace=True)
