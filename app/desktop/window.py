"""The window: the Home, Ask, Memory, Editors and Settings pages, and a status bar with the service's address.

Keyboard: Ctrl+F goes to Home's search box; Ctrl+1… opens the pages in order; Tab walks each page.
"""

from __future__ import annotations

from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget, QWidget

from engram.core import Engine

from .ask_page import AskPage
from .editors import EditorsController
from .editors_page import EditorsPage
from .jobs import Jobs
from .memory_page import MemoryPage
from .models_control import ModelsController
from .overview import OverviewPage
from .resources import app_icon
from .settings_control import KeysController, SettingsController
from .settings_page import SettingsPage
from .shell import Shell

#: A page's tab title where it is not its name capitalised.
TAB_TITLES = {"editors": "AI tools"}


class MainWindow(QMainWindow):
    """The pages on tabs; the status bar says the shell's messages and the service's address."""

    def __init__(self, shell: Shell, jobs: Jobs, engine: Engine, *, editors: EditorsController,
                 settings_control: SettingsController, keys: KeysController, models: ModelsController) -> None:
        super().__init__()
        self.shell = shell
        self.setWindowTitle("Engram")
        self.setWindowIcon(app_icon())
        self.resize(900, 680)
        self.tabs = QTabWidget()
        self.overview = OverviewPage(jobs, engine, editors, shell)
        self.ask = AskPage(jobs, engine, editors, shell, models, settings_control)
        self.ask.search_instead.connect(self.search_for)
        self.ask.open_settings.connect(lambda: self.show_page("settings"))
        self.memory = MemoryPage(jobs, engine, shell)
        self.settings = SettingsPage(engine, settings_control, keys, models, shell)
        self.editors = EditorsPage(editors)
        self.pages: dict[str, QWidget] = {"home": self.overview, "ask": self.ask, "memory": self.memory, "editors": self.editors,
                                          "settings": self.settings}
        for name, page in self.pages.items():
            self.tabs.addTab(page, TAB_TITLES.get(name, name.capitalize()))
        self.tabs.setAccessibleName("Pages")
        search = QShortcut(QKeySequence.StandardKey.Find, self)
        search.activated.connect(self.focus_question)
        for number, name in enumerate(self.pages, start=1):
            shortcut = QShortcut(QKeySequence(f"Ctrl+{number}"), self)
            shortcut.activated.connect(lambda name=name: self.show_page(name))
        self.setCentralWidget(self.tabs)
        self.service_label = QLabel()
        self.statusBar().addPermanentWidget(self.service_label)
        shell.message.connect(self.statusBar().showMessage)
        shell.service_changed.connect(self.show_service)

    def show_page(self, name: str) -> None:
        """Bring page ``name`` (home, ask, memory, editors, settings) to the front; an unknown name changes nothing."""
        page = self.pages.get(name)
        if page is not None:
            self.tabs.setCurrentWidget(page)

    def focus_question(self) -> None:
        """Home, with the cursor in its search box (Ctrl+F)."""
        self.show_page("home")
        self.overview.question.setFocus()
        self.overview.question.selectAll()

    def search_for(self, text: str) -> None:
        """Home, searching for ``text`` (just the search box, focused, when it is empty)."""
        self.focus_question()
        if text:
            self.overview.question.setText(text)
            self.overview.panel.ask()

    def show_service(self, text: str) -> None:
        """The service's state in the status bar, in words; its address (for the curious) in the tooltip."""
        serving = text.startswith("Serving editors at ")
        self.service_label.setText("Your AI tools can reach Engram" if serving else text)
        self.service_label.setToolTip(text)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.shell.has_tray:
            event.ignore()  # the tray stays; Quit is in its menu
            self.hide()
            self.shell.went_to_tray()
        else:
            event.accept()  # no tray to come back from: closing the window quits
            self.shell.quit()
