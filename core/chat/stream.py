"""Streaming a reply to the person without its tool-call markup.

Text is passed on as the model writes it until a tool call begins; from there on nothing of that reply is
shown (the call is shown as a tool line instead). A piece that could be the start of a call marker is held
back until the next piece tells. A Llama 3 reply that opens with ``{`` is a call as a whole.
"""

from __future__ import annotations

from collections.abc import Callable

MARKERS: dict[str, tuple[str, ...]] = {
    "hermes": ("<tool_call>",),
    "qwen-xml": ("<tool_call>",),
    "mistral": ("[TOOL_CALLS]",),
    "llama3": ("<|python_tag|>",),
    "none": (),
}


class CallFilter:
    """Feed it a reply's pieces; it forwards the text before any tool call to ``show``."""

    def __init__(self, tool_format: str, show: Callable[[str], None]) -> None:
        self.markers = MARKERS.get(tool_format, ())
        self.json_call = tool_format == "llama3"
        self.show = show
        self.held = ""
        self.started = False  # any visible character seen
        self.muted = False

    def feed(self, piece: str) -> None:
        if self.muted or not piece:
            return
        text = self.held + piece
        self.held = ""
        if not self.started and text.strip():
            self.started = True
            if self.json_call and text.lstrip().startswith("{"):
                self.muted = True
                return
        elif not self.started:
            self.held = text  # leading white space: wait for what follows
            return
        cut = min((i for i in (text.find(m) for m in self.markers) if i >= 0), default=-1)
        if cut >= 0:
            self.muted = True
            if text[:cut]:
                self.show(text[:cut])
            return
        keep = max((k for m in self.markers for k in range(1, len(m)) if text.endswith(m[:k])), default=0)
        if keep:
            self.held = text[-keep:]
            text = text[:-keep]
        if text:
            self.show(text)
