"""Where the helper model runs is decided in one place (core/models/runs_where.py), from the settings."""

from __future__ import annotations

import pytest

from engram.core.models.runs_where import runs_where
from engram.core.settings import Settings


def _settings(**helper: object) -> Settings:
    return Settings.model_validate({"helper": helper, "model": {"chat_large": "qwen2.5-coder-1.5b"}})


@pytest.mark.parametrize(("helper", "here", "in_process", "words"), [
    ({}, True, True, "this computer"),
    ({"provider": "ollama"}, True, False, "ollama at http://127.0.0.1:11434"),
    ({"provider": "vllm", "base_url": "http://localhost:9000"}, True, False, "vllm at http://localhost:9000"),
    ({"provider": "ollama", "base_url": "http://10.20.30.40:11434"}, False, False, "ollama at http://10.20.30.40:11434"),
    ({"provider": "openai", "base_url": "http://127.0.0.1:8080"}, False, False, "openai at http://127.0.0.1:8080"),
    ({"provider": "anthropic"}, False, False, "anthropic at https://api.anthropic.com"),
])
def test_where_the_helper_model_runs(helper: dict[str, str], here: bool, in_process: bool, words: str) -> None:
    where = runs_where(_settings(**helper))
    assert (where.on_this_computer, where.in_process, where.describe()) == (here, in_process, words)


def test_the_model_is_the_roles_own() -> None:
    local = _settings(local={"model": "smollm2-135m"})
    assert runs_where(local).model == "smollm2-135m"
    assert runs_where(local, "chat-large").model == "qwen2.5-coder-1.5b"
    remote = _settings(provider="openai", remote_model="gpt-x")
    assert runs_where(remote).model == runs_where(remote, "chat-large").model == "gpt-x"
