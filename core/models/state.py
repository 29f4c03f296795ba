"""Whether recall's local model path can run, in one line for status and device reports."""

from __future__ import annotations

from ..paths import Paths
from ..settings import Settings
from .files import ModelFiles
from .readiness import readiness


def inference_state(settings: Settings, paths: Paths) -> str:
    """One line for status: whether recall's local model path is on, and if not, why (no file hashing)."""
    if not settings.recall.llm:
        return "off (recall.llm is false)"
    ready = readiness(settings, paths)
    where = ready.where
    if not where.on_this_computer:
        return f"off: the helper model runs on {where.describe()}, not on this computer"
    if not ready.ready:
        return f"off: {ready.problem}"
    if not where.in_process:
        return f"on: {where.model or 'the default model'} via {where.provider} on this computer"
    assert ready.entry is not None
    status = ModelFiles(paths.models_dir, settings.model.hub_url).status(ready.entry)
    return f"on: {ready.entry.id} on this computer ({status.pinning})"
