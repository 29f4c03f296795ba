"""Draws Engram's icons into resources/ (run again after changing the drawing; the PNGs are committed).

    QT_QPA_PLATFORM=offscreen python scripts/make_icons.py

Shapes only, no text, so the output does not depend on the fonts installed. Each icon is drawn at every
pixel size Qt may ask for (``TRAY_ICON_SIZES``, ``APP_ICON_SIZES``), with its bars placed on whole pixels,
rather than scaled from one large image, so it stays crisp at 16 px and on high-DPI screens.

The mark: a dark rounded square holding three light bars (memories kept in layers). The tray's carries a
light rim, so the dark square stands out on a dark panel as it does on a light one, and a badge for the
state, told apart by shape as well as colour, each colour of middle lightness (contrast >= 3:1 against
both a light and a dark panel) with a transparent gap cut around it:

    ready        no badge
    indexing     a blue ring with a gap (a spinner)
    downloading  an amber arrow pointing down
    error        a red disc with a white exclamation mark
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
)

from engram.app.desktop.resources import APP_ICON_SIZES, TRAY_ICON_SIZES, TRAY_STATES, icon_file_name

OUT = Path(__file__).resolve().parent.parent / "resources"

BODY_TOP, BODY_BOTTOM = QColor("#2c3a4d"), QColor("#1f2835")
BARS = QColor("#e8edf4")
RIM = QColor("#e8edf4")
BADGES = {"indexing": QColor("#2f7de1"), "downloading": QColor("#c77700"), "error": QColor("#e0453a")}


def px(value: float) -> int:
    return int(value + 0.5)


def rounded(rect: QRectF, radius: float) -> QPainterPath:
    path = QPainterPath()
    path.addRoundedRect(rect, radius, radius)
    return path


def draw_mark(p: QPainter, size: int, margin: int, rim: int, rim_color: QColor) -> None:
    """The rounded square and its bars, filling ``size`` px less ``margin`` on each side."""
    side = size - 2 * margin
    outer = QRectF(margin, margin, side, side)
    radius = side * 14 / 60
    if rim:
        p.fillPath(rounded(outer, radius), rim_color)
    inner = outer.adjusted(rim, rim, -rim, -rim)
    body = QLinearGradient(inner.topLeft(), inner.bottomLeft())
    body.setColorAt(0, BODY_TOP)
    body.setColorAt(1, BODY_BOTTOM)
    p.fillPath(rounded(inner, max(radius - rim, 1)), QBrush(body))
    # Three bars on whole pixels, centred in the square: 1/2, 3/8 and 1/4 of it wide.
    height = max(2, px(side / 8))
    gap = max(1, px(side / 16))
    top = margin + (side - (3 * height + 2 * gap)) // 2
    left = margin + (side - px(side / 2)) // 2
    for i, fraction in enumerate((1 / 2, 3 / 8, 1 / 4)):
        bar = QRectF(left, top + i * (height + gap), px(side * fraction), height)
        p.fillPath(rounded(bar, height / 2), BARS)


def badge_paths(state: str, box: QRectF) -> tuple[QPainterPath, QPainterPath]:
    """(the badge's silhouette, cut with a gap around it; the shape filled with the state's colour)."""
    b = box.width()
    centre = box.center()
    silhouette = QPainterPath()
    shape = QPainterPath()
    if state == "indexing":
        silhouette.addEllipse(box)
        stroke = b / 4
        arc = QPainterPath()
        ring = box.adjusted(stroke / 2, stroke / 2, -stroke / 2, -stroke / 2)
        arc.arcMoveTo(ring, 100)
        arc.arcTo(ring, 100, 290)  # open at the top right, as a spinner
        stroker = QPainterPathStroker()
        stroker.setWidth(stroke)
        stroker.setCapStyle(Qt.PenCapStyle.RoundCap)
        shape = stroker.createStroke(arc)
    elif state == "downloading":
        # A stem of whole pixels either side of the centre (its width of the same parity as the box's).
        stem_w = 2 * max(1, px(b * 0.18)) if round(b) % 2 == 0 else 2 * max(1, px(b * 0.18 - 0.5)) + 1
        head_h = px(b / 2)
        x0, y0 = box.left(), box.top()
        shape.addRect(QRectF(centre.x() - stem_w / 2, y0, stem_w, b - head_h + 0.5))
        head = QPainterPath(QPointF(x0, y0 + b - head_h))
        head.lineTo(x0 + b, y0 + b - head_h)
        head.lineTo(centre.x(), y0 + b)
        head.closeSubpath()
        shape = shape.united(head)
        silhouette = QPainterPath(shape)
    elif state == "error":
        silhouette.addEllipse(box)
        shape = QPainterPath(silhouette)
    return silhouette, shape


def draw_tray(size: int, state: str) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    rim = max(1, px(size / 20))
    draw_mark(p, size, 0, rim, RIM)
    if state in BADGES:
        b = px(size / 2)
        box = QRectF(size - b, size - b, b, b)
        silhouette, shape = badge_paths(state, box)
        gap = max(1.0, size / 16)
        stroker = QPainterPathStroker()
        stroker.setWidth(2 * gap)
        stroker.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        p.setCompositionMode(QPainter.CompositionMode.CompositionMode_Clear)
        p.fillPath(silhouette.united(stroker.createStroke(silhouette)), Qt.GlobalColor.black)
        p.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
        p.fillPath(shape, BADGES[state])
        if state == "error":  # the exclamation mark: a bar and a dot, on whole pixels where it can
            w = max(2, px(b / 4))
            w += (b - w) % 2  # centred on whole pixels
            x, top = box.left() + (b - w) // 2, box.top()
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#ffffff"))
            p.drawRoundedRect(QRectF(x, top + px(b / 8), w, px(b * 3 / 8)), w / 4, w / 4)
            p.drawRoundedRect(QRectF(x, top + px(b * 5 / 8), w, w), w / 4, w / 4)
    p.end()
    return image


def draw_app(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    # Large icons keep a margin like their neighbours in a dock; the rim, half-transparent, keeps the
    # square's edge visible on a dark task bar without a hard frame on a light one.
    margin = px(size * 4 / 64) if size >= 48 else 0
    rim_color = QColor(RIM)
    rim_color.setAlphaF(0.45)
    draw_mark(p, size, margin, max(1, px(size / 64)), rim_color)
    p.end()
    return image


def main() -> None:
    app = QGuiApplication(sys.argv)  # noqa: F841 (painting needs an application object)
    written = 0
    for size in APP_ICON_SIZES:
        draw_app(size).save(str(OUT / icon_file_name("engram", size, APP_ICON_SIZES)))
        written += 1
    for state in TRAY_STATES:
        for size in TRAY_ICON_SIZES:
            draw_tray(size, state).save(str(OUT / icon_file_name(f"tray-{state}", size, TRAY_ICON_SIZES)))
            written += 1
    print(f"{written} icons written to {OUT}")


if __name__ == "__main__":
    main()
