"""The window: Overview, Settings and Editors pages, and a status bar with the service's address."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget

from .editors_page import EditorsPage
from .overview import OverviewPage
from .resources import app_icon
from .settings_page import SettingsPage

if TYPE_CHECKING:
    from .desktop import Desktop


class MainWindow(QMainWindow):
    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        self.desktop = desktop
        self.setWindowTitle("Engram")
        self.setWindowIcon(app_icon())
        self.resize(900, 680)
        self.tabs = QTabWidget()
        self.overview = OverviewPage(desktop)
        self.settings = SettingsPage(desktop)
        self.editors = EditorsPage(desktop)
        self.tabs.addTab(self.overview, "Home")
        self.tabs.addTab(self.settings, "Settings")
        self.tabs.addTab(self.editors, "Editors")
        self.setCentralWidget(self.tabs)
        self.service_label = QLabel()
        self.statusBar().addPermanentWidget(self.service_label)

    def show_service(self, text: str) -> None:
        self.service_label.setText(text)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.desktop.tray is not None:
            event.ignore()  # the tray stays; Quit is in its menu
            self.hide()
        else:
            event.accept()  # no tray to come back from: closing the window quits
            self.desktop.quit()
