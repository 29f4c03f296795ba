"""The Settings page's complete list: every key, read-only, with its value, where it comes from and what it does.

Nothing is hidden: a key without a row of its own above is still shown here, with the command that changes it.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from engram.core.settings import describe_key, setting_keys
from engram.core.settings_file import LoadedSettings, env_name

from .setting_rows import note_colour, palette_changed, wrapped
from .settings_control import as_text as _text


class EverySetting(QGroupBox):
    """Every key of the settings, read-only, as ``key = value`` with its description: nothing is hidden."""

    def __init__(self) -> None:
        super().__init__("Every setting (change the ones not above with engram config set KEY VALUE)")
        layout = QVBoxLayout(self)
        self.lines: dict[str, QLabel] = {}
        self._shown: dict[str, tuple[Any, str]] = {}
        for key in setting_keys():
            line = self.lines[key] = wrapped()
            line.setTextFormat(Qt.TextFormat.RichText)
            line.setToolTip(key)
            layout.addWidget(line)

    def filter(self, words: list[str]) -> int:
        """Show only the keys whose name or description hold every one of ``words`` (all, for none); the list
        hides itself when none does. Returns how many are shown."""
        shown = 0
        for key, line in self.lines.items():
            haystack = f"{key} {describe_key(key)['description']}".lower()
            match = all(w in haystack for w in words)
            line.setVisible(match)
            shown += match
        self.setVisible(shown > 0)
        return shown

    def show_values(self, loaded: LoadedSettings) -> None:
        for key in self.lines:
            self.show_value(key, loaded.value(key), loaded.origins.get(key, "default"))

    def show_value(self, key: str, value: Any, origin: str) -> None:
        self._shown[key] = (value, origin)
        where = {"env": f" (from {env_name(key)})", "file": " (set)"}.get(origin, "")
        self.lines[key].setText(
            f"<b>{html.escape(key)}</b> = {html.escape(_text(value))}{where}<br>"
            f"<span style='color: {note_colour(self)}'>{html.escape(describe_key(key)['description'])}</span>")

    def changeEvent(self, event: QEvent) -> None:
        if palette_changed(event):
            for key, (value, origin) in list(self._shown.items()):
                self.show_value(key, value, origin)
        super().changeEvent(event)
