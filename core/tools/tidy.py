"""The ``tidy`` tool: answers to what ``review`` and a ``store`` reply found. Every change goes through the writer.

``supersede`` (a possible update confirmed: the newer replaces the older, which stays as history), ``keep_both``
(both are true: the pair is not offered again), ``merge`` (others made one with a kept memory, each kept as its
history and as a text merged into it) and ``unmerge`` (a memory's merged texts become memories again). The work is
``core/upkeep/tidying.py``'s; this is its arguments, its events and its answer.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..errors import InvalidArgument
from ..events import MemoriesWritten
from ..upkeep import tidying
from .results import Tidied
from .scope import Scope

Id = Annotated[str, Field(min_length=1, max_length=64)]


def tidy(
    scope: Scope,
    action: Annotated[Literal["supersede", "keep_both", "merge", "unmerge"], Field(description=(
        "supersede: id replaces the memories in others (they stay as history); keep_both: id and the one in others "
        "are both true (a possible update that is not one); merge: the memories in others become history of id, "
        "their texts kept with it; unmerge: the texts merged into id become memories again (others: only these)."))],
    id: Annotated[Id, Field(description="The memory acted on: the newer one, the one kept, or the merged one.")],
    others: Annotated[list[Id], Field(max_length=20, description=(
        "The other memories (supersede, merge: 1–20; keep_both: exactly 1; unmerge: the merged texts' ids to split "
        "off, default all)."))] = [],  # noqa: B006
) -> Tidied:
    """Act on what review or a store reply found: supersede, keep_both, merge, or unmerge."""
    now = datetime.now(UTC)
    store, workspace = scope.store, scope.workspace
    if action != "unmerge" and not others:
        raise InvalidArgument(f"Action '{action}' needs 'others': the ids of the other memories. Nothing was changed.")
    if action == "supersede":
        gone = scope.writer.run(tidying.supersede, store, workspace, id, others, now)
        scope.emit(MemoriesWritten(workspace, "tidy", 0))
        return Tidied(action=action, workspace=workspace, id=id, others=gone)
    if action == "keep_both":
        if len(others) != 1:
            raise InvalidArgument("Action 'keep_both' takes exactly one id in 'others': the memory that is not "
                                  "updated by 'id'. Nothing was changed.")
        scope.writer.run(tidying.keep_both, store, workspace, id, others[0])
        return Tidied(action=action, workspace=workspace, id=id, others=list(others))
    if action == "merge":
        try:
            seen = scope.writer.run(tidying.merge, store, workspace, id, others, now)
        except ValueError:
            raise InvalidArgument(f"Memory {id} keeps a damaged record of the texts merged into it, so nothing more "
                                  "is merged into it; nothing was changed (the details are in Engram's log).") from None
        scope.emit(MemoriesWritten(workspace, "tidy", 0))
        return Tidied(action=action, workspace=workspace, id=id, others=list(dict.fromkeys(others)), seen=seen)
    try:
        split = tidying.plan_unmerge(store, workspace, id, others, _embed(scope), now)
    except ValueError:
        raise InvalidArgument(f"Memory {id} keeps a damaged record of the texts merged into it; it cannot be split "
                              "(the details are in Engram's log). Nothing was changed.") from None
    scope.writer.run(tidying.unmerge, store, workspace, split)
    made = [str(r["id"]) for r in split.new_rows]
    scope.emit(MemoriesWritten(workspace, "tidy", len(made) + len(split.restored)))
    return Tidied(action=action, workspace=workspace, id=id, others=[*made, *split.restored],
                  seen=int(split.values["seen_count"]), restored_own="content" in split.values)


def _embed(scope: Scope) -> tidying.EmbedFn:
    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(scope.embedder().embed(texts), dtype=np.float32)

    return embed
