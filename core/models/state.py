"""Whether recall's local model path can run, in one line for status and device reports."""

from __future__ import annotations

from ..errors import EngramError
from ..manifest import resolve_model
from ..paths import Paths
from ..settings import Settings
from .files import ModelFiles
from .runs_where import runs_where


def inference_state(settings: Settings, paths: Paths) -> str:
    """One line for status: whether recall's local model path is on, and if not, why (no file hashing)."""
    if not settings.recall.llm:
        return "off (recall.llm is false)"
    where = runs_where(settings)
    if not where.on_this_computer:
        return f"off: the helper model runs on {where.describe()}, not on this computer"
    if not where.in_process:
        return f"on: {where.model or 'the default model'} via {where.provider} on this computer"
    try:
        entry = resolve_model(where.model)
    except EngramError as exc:
        return f"off: {exc.message}"
    status = ModelFiles(paths.models_dir, settings.model.hub_url).status(entry)
    if not status.present:
        return f"off: {entry.id} is not on this computer (`engram models download {entry.id}`)"
    return f"on: {entry.id} on this computer ({status.pinning})"
