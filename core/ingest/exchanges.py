"""A conversation exchange is embedded together with the one said before it.

A turn often makes sense only with the turn it answers ("Cool! What did it look like?"). An exchange's vector is
the normalised sum of two: its own text, and its text preceded by the first ``CONTEXT_CHARS`` characters of the
exchange stored just before it in the same project. Measured on LoCoMo (benchmark/RESULTS.md), either vector alone
loses questions the other finds; their sum keeps both, at the cost of a second text in the same embedding call.
Notes and file chunks are embedded as they are.

The previous exchange of each (workspace, project) is remembered in the store's derived state; the first store after a start
reads it back from the workspace (its latest exchange in that project).
"""

from __future__ import annotations

import numpy as np

from ..embedding import Embedder
from ..store import WorkspaceStore
from .records import embedding_text

CONTEXT_CHARS = 300

def previous_exchange(store: WorkspaceStore, project: str) -> str | None:
    """The content of the latest exchange stored in ``project`` of ``store`` (``None`` when there is none).

    Raises:
        StoreError: the workspace cannot be read (only on the first call for a project in this process).
    """
    known = store.derived.last_exchange(project)
    if known is not None:
        return known
    # Two small columns of every exchange of the project, then one row's content (a long conversation's contents
    # are not read for it).
    rows = store.memories(["created_at", "id"], project=project, kinds=("exchange",))
    if not rows:
        return None
    newest = max(rows, key=lambda r: (r["created_at"], r["id"]))["id"]
    found = store.memories_by_ids([newest], ["content"]).get(newest)
    if found is None:  # deleted in between
        return None
    latest = found["content"]
    store.derived.remember_exchange(project, str(latest), if_unknown=True)
    return str(latest)


def remember_exchange(store: WorkspaceStore, project: str, content: str) -> None:
    """``content`` was just stored as an exchange of ``project``: the next exchange there is embedded after it."""
    store.derived.remember_exchange(project, content)


def exchange_vector(embedder: Embedder, title: str, content: str, previous: str | None) -> np.ndarray:
    """The vector of an exchange: its own text's plus, when there is a previous exchange, its text after the start
    of that one's, normalised (one embedding call).

    Raises:
        ModelError: the embedding model failed.
    """
    own = embedding_text(title, content)
    if not previous:
        vector: np.ndarray = embedder.embed([own])[0]
        return vector
    vectors = embedder.embed([own, embedding_text(title, f"{previous[:CONTEXT_CHARS]}\n{content}")])
    summed: np.ndarray = vectors[0] + vectors[1]
    norm = float(np.linalg.norm(summed))
    return summed / norm if norm else vectors[0]
