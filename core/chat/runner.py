"""A chat turn end to end: the conversation loaded or started, the model, the tools in one workspace, saved.

``chat_turn`` is what ``Engine.chat`` runs: it loads the named conversation from the workspace (or starts
one: a new name starts a new conversation under that name), runs one turn of the loop and saves the
conversation, also when the turn failed part-way (the question and what research did stay).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import InvalidArgument
from ..settings import Settings
from .conversation import ConversationStore
from .events import ChatEvent, ChatTurn
from .loop import Budgets, run_turn
from .model import ChatModel
from .sections import MAX_SOURCE_CHARS
from .toolbox import ChatToolbox, Runner

#: The longest question without section analysis (chat.analysis_workers 0); with it, ``sections.MAX_SOURCE_CHARS``.
MAX_QUESTION_CHARS = 8000
#: Characters of one tool result the model reads (a result is cut with a note that says how to read on).
TOOL_RESULT_CHARS = 4000


def chat_turn(question: str, *, chats: Path, settings: Settings, runner: Runner, model: Callable[[], ChatModel],
              conversation: str | None = None, on_event: Callable[[ChatEvent], None] | None = None,
              stop: Callable[[], bool] | None = None) -> ChatTurn:
    """Answer ``question`` in conversation ``conversation`` (new when None or unknown) kept in ``chats``.

    Raises:
        InvalidArgument: an empty or too long question, or a bad conversation name.
        ModelError: the chat model cannot be had (missing and not downloadable, unverified, not loadable).
        StoreError: the conversation cannot be read or saved.
    """
    question = question.strip()
    if not question:
        raise InvalidArgument("Ask a question: the text is empty.")
    longest = MAX_SOURCE_CHARS if settings.chat.analysis_workers else MAX_QUESTION_CHARS
    if len(question) > longest:
        raise InvalidArgument(f"The question is {len(question):,} characters; chat takes up to {longest:,}"
                              + ("" if settings.chat.analysis_workers else
                                 " (section analysis is off: chat.analysis_workers is 0)") + ".")
    store = ConversationStore(chats)
    talk = (store.load(conversation) if conversation and store.exists(conversation)
            else store.new(question, conversation))
    chat_model = model()
    toolbox = ChatToolbox(runner, talk, max_chars=min(TOOL_RESULT_CHARS, settings.search.max_chars))
    try:
        return run_turn(talk, question, model=chat_model, toolbox=toolbox, budgets=Budgets.from_settings(settings.chat),
                        on_event=on_event, stop=stop)
    finally:
        store.save(talk)
