"""Draws Engram's icons into resources/ (run again after changing the drawing; the PNGs are committed).

    QT_QPA_PLATFORM=offscreen python scripts/make_icons.py

Shapes only, no text, so the output does not depend on the fonts installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPainterPath

OUT = Path(__file__).resolve().parent.parent / "resources"
BADGES = {"ready": "#2e9d57", "indexing": "#2f6fd6", "downloading": "#d98a1c", "error": "#cf3a3a"}


def draw(size: int, badge: str | None) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 64
    body = QPainterPath()
    body.addRoundedRect(QRectF(4 * s, 4 * s, 56 * s, 56 * s), 14 * s, 14 * s)
    p.fillPath(body, QColor("#25303f"))
    # Three stacked bars: memories kept in layers.
    for i, width in enumerate((36, 28, 20)):
        bar = QPainterPath()
        bar.addRoundedRect(QRectF(14 * s, (17 + i * 11) * s, width * s, 7 * s), 3.5 * s, 3.5 * s)
        p.fillPath(bar, QColor("#e8edf4"))
    if badge is not None:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor("#ffffff"))
        p.drawEllipse(QRectF(38 * s, 38 * s, 24 * s, 24 * s))
        p.setBrush(QColor(BADGES[badge]))
        p.drawEllipse(QRectF(41 * s, 41 * s, 18 * s, 18 * s))
    p.end()
    return image


def main() -> None:
    app = QGuiApplication(sys.argv)  # noqa: F841 (painting needs an application object)
    draw(256, None).save(str(OUT / "engram.png"))
    for badge in BADGES:
        draw(64, badge).save(str(OUT / f"tray-{badge}.png"))
    print(f"icons written to {OUT}")


if __name__ == "__main__":
    main()
