"""Where the helper model and the chat model run, decided once from the settings.

Every reader asks this module: the engine when it builds a provider or the chat model, recall before it lets a
model read memory, ``engram status`` and the desktop when they say whether local AI can be on (through
``readiness``, which adds whether the model's file is here). The local-inference rule
(``providers.is_local_inference``) is applied here and nowhere else:

- ``local``: llama.cpp in this process, with ``helper.local.model`` (``model.chat_large`` for the
  ``chat-large`` role);
- ``ollama`` / ``vllm``: an HTTP server, on this computer only when its URL's host is a loopback address;
- ``openai`` / ``anthropic``: a cloud API, never on this computer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import Settings
from .providers import DEFAULT_URLS, is_local_inference


@dataclass(frozen=True)
class Where:
    """Where the helper model of one role runs."""

    #: ``local``, ``ollama``, ``vllm``, ``openai`` or ``anthropic`` (``helper.provider``).
    provider: str
    #: The server's URL (its default when ``helper.base_url`` is empty); ``""`` for ``local``.
    url: str
    #: The model: a manifest id or file for ``local``, the server's model name otherwise (``""``: its default).
    model: str

    @property
    def in_process(self) -> bool:
        """Whether llama.cpp runs the model in this process (``helper.provider = local``)."""
        return self.provider == "local"

    @property
    def on_this_computer(self) -> bool:
        """Whether the model runs on this computer (in process, or a server on a loopback address)."""
        return is_local_inference(self.provider, self.url)

    def describe(self) -> str:
        """In words, e.g. ``this computer`` or ``openai at https://api.openai.com``."""
        if self.in_process:
            return "this computer"
        return f"{self.provider} at {self.url}"


def runs_where(settings: Settings, role: str = "helper") -> Where:
    """Where the model for ``role`` runs: the helper's roles per ``helper.*`` (``chat-large``:
    ``model.chat_large``), ``chat`` per ``chat.*``."""
    if role == "chat":
        chat = settings.chat
        if chat.provider == "local":
            return Where("local", "", chat.local_model)
        return Where(chat.provider, chat.base_url or DEFAULT_URLS[chat.provider], chat.remote_model)
    helper = settings.helper
    if helper.provider == "local":
        model = settings.model.chat_large if role == "chat-large" else helper.local.model
        return Where("local", "", model)
    return Where(helper.provider, helper.base_url or DEFAULT_URLS[helper.provider], helper.remote_model)
