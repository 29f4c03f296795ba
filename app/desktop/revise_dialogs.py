"""Edit, Merge and Split in the window: a note's new version, two notes made one, a merged note made its notes again
(``app/revise.py`` does each, as ``engram edit``, ``merge`` and ``unmerge`` do). None deletes anything: an old text
stays as history, a merged one is kept with the note it was merged into."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMessageBox, QPlainTextEdit, QVBoxLayout, QWidget

from engram.core.tools.results import Memory


class EditDialog(QDialog):
    """The note's text to change; Save stores it as a new version that supersedes the old (kept as history)."""

    def __init__(self, parent: QWidget, memory: Memory, save: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit note")
        self.setAccessibleName("Edit note")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        intro = QLabel("Saving keeps this text as history: search shows the new version, and the note's details "
                       "list both.")
        intro.setWordWrap(True)
        self.editor = QPlainTextEdit(memory.content)
        self.editor.setAccessibleName("The note's text")
        self.editor.setTabChangesFocus(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._save)
        self.buttons.rejected.connect(self.reject)
        self.editor.textChanged.connect(self._changed)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.buttons)
        self.resize(560, 360)
        self._original = memory.content
        self._save_to = save
        self._changed()

    def _changed(self) -> None:
        text = self.editor.toPlainText()
        button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        button.setEnabled(bool(text.strip()) and text.strip() != self._original.strip())
        button.setToolTip("" if text.strip() else "A note cannot be blank: Forget removes one.")

    def _save(self) -> None:
        self._save_to(self.editor.toPlainText())
        self.accept()


def ask_to_merge(parent: QWidget, first: Memory, second: Memory, then: Callable[[], None]) -> QMessageBox:
    """Open (never ``exec``) a window-modal question whether to merge two notes; ``then`` runs only on Merge.
    Returns the box (tests press its buttons)."""
    kept, other = (first, second) if len(first.content) >= len(second.content) else (second, first)

    def gist(memory: Memory) -> str:
        text = " ".join(memory.content.split())
        return text if len(text) <= 120 else text[:119].rstrip() + "…"

    box = QMessageBox(QMessageBox.Icon.Question, "Merge notes", "Merge these two notes into one?", parent=parent)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setInformativeText(f"Kept (the longer text): “{gist(kept)}”\n\nKept as history, superseded by it: "
                           f"“{gist(other)}”\n\nNothing is deleted.")
    merge = box.addButton("Merge", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda _result: then() if box.clickedButton() is merge else None)
    box.open()
    return box


def ask_to_split(parent: QWidget, memory: Memory, then: Callable[[], None]) -> QMessageBox:
    """Open (never ``exec``) a window-modal question whether to split the texts merged into ``memory`` off again;
    ``then`` runs only on Split. Returns the box (tests press its buttons)."""
    count = len(memory.merged)
    noun = "text" if count == 1 else "texts"
    box = QMessageBox(QMessageBox.Icon.Question, "Split note", f"Make the {count} {noun} merged into this note "
                      f"{'a note' if count == 1 else 'notes'} of {'its' if count == 1 else 'their'} own again?",
                      parent=parent)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    own = "" if memory.own_text is None else " It shows its own text again."
    box.setInformativeText(f"Each comes back with its own date and tags; this note keeps its own text, tags and "
                           f"count.{own}\n\nNothing is deleted.")
    split = box.addButton("Split", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda _result: then() if box.clickedButton() is split else None)
    box.open()
    return box
