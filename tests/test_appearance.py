"""The icons at every size and on light and dark panels, and following the system's color scheme."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from engram.app.desktop.appearance import (
    APPLIED_PROPERTY,
    apply_color_scheme,
    dark_palette,
    follow_color_scheme,
    scheme_of,
)
from engram.app.desktop.resources import APP_ICON_SIZES, TRAY_ICON_SIZES, TRAY_STATES, app_icon, tray_icon

PANELS = {"light": QColor("#f2f2f2"), "dark": QColor("#232323")}


def luminance(color: QColor) -> float:
    """WCAG relative luminance."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def icon_image(state: str, size: int) -> QImage:
    image = tray_icon(state).pixmap(QSize(size, size), 1.0).toImage()
    assert (image.width(), image.height()) == (size, size)
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def on_panel(image: QImage, panel: QColor) -> QImage:
    out = QImage(image.size(), QImage.Format.Format_ARGB32)
    out.fill(panel)
    p = QPainter(out)
    p.drawImage(0, 0, image)
    p.end()
    return out


def pixels(image: QImage) -> Iterator[tuple[int, int]]:
    for y in range(image.height()):
        for x in range(image.width()):
            yield x, y


def test_icons_hold_every_drawn_size(qapp: QApplication) -> None:
    for state in TRAY_STATES:
        icon = tray_icon(state)
        assert sorted(s.width() for s in icon.availableSizes()) == list(TRAY_ICON_SIZES)
        # A 16 px icon on a 2x screen is drawn from the 32 px file, not scaled up from the 16 px one.
        sharp = icon.pixmap(QSize(16, 16), 2.0)
        assert sharp.width() == 32
        assert sharp.toImage().convertToFormat(QImage.Format.Format_ARGB32) == icon_image(state, 32)
    assert sorted(s.width() for s in app_icon().availableSizes()) == list(APP_ICON_SIZES)
    with pytest.raises(ValueError, match="unknown tray state"):
        tray_icon("sleeping")


@pytest.mark.parametrize("panel", PANELS)
@pytest.mark.parametrize("size", [16, 32])
@pytest.mark.parametrize("state", TRAY_STATES)
def test_tray_icon_reads_on_light_and_dark_panels(qapp: QApplication, state: str, size: int, panel: str) -> None:
    image = icon_image(state, size)
    shown = on_panel(image, PANELS[panel])
    opaque = [(x, y) for x, y in pixels(image) if image.pixelColor(x, y).alpha() >= 128]
    assert len(opaque) > size * size // 2
    readable = {(x, y) for x, y in opaque if contrast(shown.pixelColor(x, y), PANELS[panel]) >= 3.0}
    assert len(readable) / len(opaque) >= 0.15, f"{state} at {size} px: {len(readable)}/{len(opaque)} readable"
    # The square's outline too, not only the bars inside it: a dark square with no light rim all but
    # vanishes into a dark panel (this band read 22 % there before the rim, about 50 % with it).
    band = [(x, y) for x, y in opaque if min(x, y, size - 1 - x, size - 1 - y) < max(2, size // 8)]
    share = sum(p in readable for p in band) / len(band)
    assert share >= 0.35, f"{state} at {size} px: the edge reads in only {share:.0%} on {panel}"


def test_tray_states_differ_by_shape(qapp: QApplication) -> None:
    """Told apart in greyscale too (by shape, not only hue), at the smallest size, on either panel."""
    for panel in PANELS.values():
        grey = {state: on_panel(icon_image(state, 16), panel).convertToFormat(QImage.Format.Format_Grayscale8)
                for state in TRAY_STATES}
        for a, b in combinations(TRAY_STATES, 2):
            differing = sum(abs(grey[a].pixelColor(x, y).value() - grey[b].pixelColor(x, y).value()) > 48
                            for x, y in pixels(grey[a]))
            assert differing / 256 > 0.05, f"{a} and {b} differ in only {differing} of 256 pixels"


@pytest.fixture
def restored_palette(qapp: QApplication) -> Iterator[QApplication]:
    hints = QGuiApplication.styleHints()
    yield qapp
    hints.unsetColorScheme()
    qapp.setPalette(QPalette())  # back to the platform's, and following it
    qapp.setProperty(APPLIED_PROPERTY, False)


def test_scheme_of(qapp: QApplication) -> None:
    assert scheme_of(dark_palette()) == "dark"
    light = QPalette(dark_palette())
    light.setColor(QPalette.ColorRole.Window, QColor("#efefef"))
    assert scheme_of(light) == "light"
    widget = QWidget()
    widget.setPalette(dark_palette())
    assert scheme_of(widget) == "dark"
    assert scheme_of(qapp) == scheme_of(qapp.palette())


def test_follows_the_color_scheme(restored_palette: QApplication) -> None:
    app = restored_palette
    hints = QGuiApplication.styleHints()
    assert scheme_of(app) == "light"
    if hints.colorScheme() == Qt.ColorScheme.Unknown:
        before = app.palette().color(QPalette.ColorRole.Window)
        follow_color_scheme(app)  # no preference known: the palette is left alone
        assert app.palette().color(QPalette.ColorRole.Window) == before

    def switch(scheme: Qt.ColorScheme) -> None:
        hints.setColorScheme(scheme)
        QApplication.processEvents()
        QApplication.processEvents()  # the deferred response to colorSchemeChanged
        if hints.colorScheme() != scheme:  # a platform without schemes (offscreen, Xvfb): as if it had one
            apply_color_scheme(app, scheme)

    follow_color_scheme(app)
    switch(Qt.ColorScheme.Dark)
    assert scheme_of(app) == "dark"
    assert app.palette().color(QPalette.ColorRole.Window).lightness() < 80
    assert apply_color_scheme(app, Qt.ColorScheme.Dark) is False  # already dark: nothing to do
    switch(Qt.ColorScheme.Light)
    assert scheme_of(app) == "light"
    assert not app.testAttribute(Qt.ApplicationAttribute.AA_SetPalette)  # the platform's palette, still followed
    assert apply_color_scheme(app, Qt.ColorScheme.Unknown) is False


def test_a_palette_set_elsewhere_is_not_undone(restored_palette: QApplication) -> None:
    app = restored_palette
    custom = dark_palette()
    custom.setColor(QPalette.ColorRole.Window, QColor("#102030"))
    app.setPalette(custom)
    assert apply_color_scheme(app, Qt.ColorScheme.Dark) is False  # dark already
    assert apply_color_scheme(app, Qt.ColorScheme.Light) is False  # not ours to take off
    assert app.palette().color(QPalette.ColorRole.Window) == QColor("#102030")
