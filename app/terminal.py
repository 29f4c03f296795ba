"""Text bound for a terminal: stored content is shown there, never obeyed.

A note, a file name or a chunk can hold bytes a terminal would act on: ``ESC ] 0 ; … BEL`` retitles
the window, ``ESC [ 2 J`` clears the screen, ``\\r`` and backspace overwrite what was printed, and the
bidi overrides reorder a line so it reads differently from what it holds. When a stream is a
terminal, these characters are shown as Python-style escapes instead:

- C0 controls other than newline and tab (U+0000–U+001F: ESC, BEL, ``\\r``, backspace, …), DEL
  (U+007F) and the C1 controls (U+0080–U+009F) become ``\\xNN`` with two lower-case hex digits,
  e.g. ESC shows as the four characters ``\\x1b``;
- the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) become ``\\uNNNN``,
  e.g. ``\\u202e``.

A backslash already in the text is left as it is, so a stored ``\\x1b`` typed as four characters
looks the same as an escaped ESC: the point is that nothing reaches the terminal as a control.
JSON on a terminal gets JSON's own escapes (``\\u001b``) instead, so it stays valid and decodes to
the same values. Output that is not a terminal (a pipe, a file) is left byte-exact.
"""

from __future__ import annotations

from typing import TextIO

_CONTROLS = [*range(0x00, 0x20), *range(0x7F, 0xA0)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TEXT = {c: f"\\x{c:02x}" for c in _CONTROLS if chr(c) not in "\n\t"} | {c: f"\\u{c:04x}" for c in _BIDI}
_JSON = {c: f"\\u{c:04x}" for c in _TEXT}


def escape_controls(text: str) -> str:
    """``text`` with every terminal control character shown as an escape (see the module docstring)."""
    return text.translate(_TEXT)


def escape_json_controls(document: str) -> str:
    """A JSON ``document`` with the same characters as JSON escapes (``\\u009b``); it decodes as before.

    Valid for JSON text only: these characters can only stand inside its strings, where ``\\uNNNN``
    means the same character.
    """
    return document.translate(_JSON)


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or detached stream, or one without ``isatty``, is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def for_stream(text: str, stream: TextIO, *, json: bool = False) -> str:
    """``text`` as it should be written to ``stream``: escaped for a terminal, unchanged otherwise.

    ``json``: ``text`` is a JSON document, escaped with ``escape_json_controls`` so it stays valid.
    """
    if not is_terminal(stream):
        return text
    return escape_json_controls(text) if json else escape_controls(text)
