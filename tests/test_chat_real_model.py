"""The chat loop end to end on a real small model (Qwen2.5-Coder-0.5B Instruct, hermes tool calls).

Opt-in (``large_model``): the GGUF is fetched by ``python -m benchmark fetch-models`` (491 MB, pinned by
hash) into ~/.cache/engram/bench-models, and a turn takes tens of seconds on 2 threads. Run with
``ENGRAM_BENCH_MODELS=~/.cache/engram/bench-models .venv/bin/python -m pytest -m large_model
tests/test_chat_real_model.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engram.core import Engine, Paths, Settings
from engram.core.chat.events import ChatText, ToolFinished

MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
FOLDER = Path(os.environ.get("ENGRAM_BENCH_MODELS", str(Path("~/.cache/engram/bench-models").expanduser())))

pytestmark = [pytest.mark.large_model,
              pytest.mark.skipif(not (FOLDER / MODEL).is_file(), reason=f"{MODEL} is not in {FOLDER} "
                                                                       "(python -m benchmark fetch-models)")]


def test_a_real_model_researches_in_its_own_format_and_answers_from_what_it_read(paths: Paths,
                                                                                 fake_embedder: Any) -> None:
    settings = Settings()
    settings.chat.local_model = str(FOLDER / MODEL)
    settings.chat.max_tokens = 256
    settings.helper.local.threads = 2
    with Engine(paths, settings, embedder=fake_embedder) as engine:
        deploy = engine.call("store", {"content": "We deploy on Tuesdays after the review.", "title": "Deploy day",
                                       "project": "ops"}).result.id
        engine.call("store", {"content": "Rollbacks need the on-call lead's approval.", "title": "Rollback approval",
                              "project": "ops"})
        model = engine.chat_model()
        assert model.tool_format == "hermes", model.format_note
        events: list[Any] = []
        turn = engine.chat("On which day do we deploy?", on_event=events.append)
        # Research ran in the model's own format: the seeded search, rendered by its template as its call.
        first = engine.conversations().load(turn.conversation).messages
        prompt = model.loaded.prompt([m.as_template() for m in first[:3]])
        assert '<tool_call>\n{"name": "search", "arguments": {"query": "On which day do we deploy?"}}\n</tool_call>' \
            in prompt
        assert deploy in turn.evidence and any(isinstance(e, ToolFinished) for e in events)
        assert turn.answer and "tuesday" in turn.answer.lower(), turn.answer
        assert deploy in turn.cited, f"the answer cites the memory it read: {turn.answer!r}"
        assert any(isinstance(e, ChatText) for e in events), "the reply was streamed"
        print(f"\nanswer: {turn.answer!r}\ncited: {turn.cited}, ended: {turn.ended}, rounds: {turn.rounds}, "
              f"tokens: {turn.tokens}, {turn.seconds:.1f} s")
