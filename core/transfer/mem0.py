"""mem0's exported memories: the JSON ``get_all`` returns, ``{"results": [{"id", "memory", "metadata",
"categories", "user_id", "agent_id", "created_at", "updated_at", …}, …]}`` (the platform's paginated answer also has
``count``, ``next``, ``previous``), or a bare list of such objects.

Each object is one note: ``memory`` its text; ``metadata.type`` (or ``metadata.category``) its type; its
``categories`` and ``user:``/``agent:``/``app:``/``run:`` ids its tags. The project defaults to the file's name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .folder import refused
from .peers import PeerImport, PeerNote

TAG = "from:mem0"
_IDS = ("user_id", "agent_id", "app_id", "run_id")
_SHAPE = ('mem0\'s export: {"results": [{"memory": "...", ...}, ...]} (what get_all returns) or a list of such '
          "objects")


def _items(raw: Any, name: str) -> list[Any]:
    if isinstance(raw, dict) and isinstance(raw.get("results"), list):
        return list(raw["results"])
    if isinstance(raw, list):
        return raw
    raise refused(f"{name} is JSON but not {_SHAPE}.")


def _note(item: Any, number: int, name: str) -> PeerNote:
    if not isinstance(item, dict) or not isinstance(item.get("memory"), str) or not item["memory"].strip():
        raise refused(f"{name}: item {number} has no 'memory' text; {_SHAPE} is read.")
    metadata: dict[str, Any] = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
    kind = next((v for v in (metadata.get("type"), metadata.get("category")) if isinstance(v, str) and v.strip()), "")
    categories: list[Any] = item["categories"] if isinstance(item.get("categories"), list) else []
    tags = [str(c) for c in categories if isinstance(c, str | int) and str(c).strip()]
    tags += [f"{key.removesuffix('_id')}:{item[key]}" for key in _IDS if isinstance(item.get(key), str | int)
             and str(item[key]).strip()]
    return PeerNote(content=item["memory"], type=kind.strip() or "note", tags=tuple(dict.fromkeys([*tags, TAG])))


def read_mem0(path: Path, project: str | None) -> PeerImport:
    """The notes of a mem0 export file.

    Raises:
        TransferRefused: it is not JSON of one of the shapes above, or an item has no memory text.
        OSError, UnicodeDecodeError: it cannot be read as text (the caller says so).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        if isinstance(exc, UnicodeDecodeError):
            raise
        raise refused(f"{path.name} is not JSON ({exc}); {_SHAPE} is read.") from None
    items = _items(raw, path.name)
    notes = tuple(_note(item, n, path.name) for n, item in enumerate(items, 1))
    dated = any(isinstance(i, dict) and i.get("created_at") for i in items)
    remarks = ("mem0's created_at and updated_at are not kept: each memory is dated when it is stored here",) \
        if dated else ()
    return PeerImport("mem0", project or path.stem or "general", notes, (), remarks)
