"""Following the system's light or dark color scheme.

Qt 6.5+ reads the scheme from the platform (Windows, macOS; on Linux the GNOME/KDE preference through a
platform theme or the XDG desktop portal) and, where the style supports it, repaints on its own. Where it
does not (Fusion with no platform theme, or a style without a dark variant), the scheme is known but the
palette stays light: ``follow_color_scheme`` then applies a dark palette, and takes it back off when the
scheme turns light again. When the scheme is unknown, the palette is left as the platform made it.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

Scheme = Literal["light", "dark"]

# Set on the application while the dark palette is ours (so a palette someone else set is never undone),
# and once it follows the scheme (so a second call does not connect twice).
APPLIED_PROPERTY = "engramDarkPalette"
FOLLOWING_PROPERTY = "engramFollowsColorScheme"


def dark_palette() -> QPalette:
    """The palette a dark desktop would give Fusion."""
    palette = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    for r, color in ((role.Window, "#2b2b2b"), (role.WindowText, "#e6e6e6"), (role.Base, "#1e1e1e"),
                     (role.AlternateBase, "#2f2f2f"), (role.Text, "#e6e6e6"), (role.Button, "#353535"),
                     (role.ButtonText, "#e6e6e6"), (role.Highlight, "#3d6db5"), (role.HighlightedText, "#ffffff"),
                     (role.ToolTipBase, "#353535"), (role.ToolTipText, "#e6e6e6"), (role.PlaceholderText, "#9a9a9a"),
                     (role.Link, "#8ab4f8"), (role.Mid, "#444444"), (role.Dark, "#202020"), (role.Light, "#505050")):
        palette.setColor(r, QColor(color))
    for r in (role.Text, role.WindowText, role.ButtonText):
        palette.setColor(group.Disabled, r, QColor("#7a7a7a"))
    return palette


def scheme_of(source: QWidget | QPalette | QGuiApplication) -> Scheme:
    """Whether ``source`` (a widget, a palette, or the application) is painted light or dark.

    Judged by its Window color's lightness, so it answers for what is on screen whoever chose the palette:
    useful for picking a text or accent color that reads on it.
    """
    palette = source if isinstance(source, QPalette) else source.palette()
    return "light" if palette.color(QPalette.ColorRole.Window).lightness() > 128 else "dark"


def apply_color_scheme(app: QApplication, scheme: Qt.ColorScheme) -> bool:
    """Make ``app``'s palette match ``scheme``; returns whether the palette was changed.

    Dark while the palette is still light: the dark palette. Light while the dark palette applied here is
    on: back to the platform's (the style's standard palette where there is no platform theme). Unknown,
    or a palette that already matches: nothing.
    """
    ours = bool(app.property(APPLIED_PROPERTY))
    if scheme == Qt.ColorScheme.Dark and scheme_of(app.palette()) == "light":
        app.setPalette(dark_palette())
        app.setProperty(APPLIED_PROPERTY, True)
        return True
    if scheme == Qt.ColorScheme.Light and ours:
        # A palette with nothing set resets the application's to the platform's and keeps following it.
        app.setPalette(QPalette())
        app.setProperty(APPLIED_PROPERTY, False)
        return True
    return False


def follow_color_scheme(app: QApplication) -> None:
    """Apply the system's color scheme to ``app`` now and whenever it changes."""
    hints = QGuiApplication.styleHints()
    apply_color_scheme(app, hints.colorScheme())
    if app.property(FOLLOWING_PROPERTY):
        return
    app.setProperty(FOLLOWING_PROPERTY, True)

    def changed(scheme: Qt.ColorScheme) -> None:
        # After Qt's own response to the change (its palette update), so a palette the platform has
        # already made dark is not overridden.
        QTimer.singleShot(0, app, lambda: apply_color_scheme(app, scheme))

    hints.colorSchemeChanged.connect(changed)
