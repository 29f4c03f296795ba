"""Settings and API keys changed off the Qt thread.

``SettingsController`` writes ``settings.toml`` (validate, then an atomic replace), hands the new settings to
the engine and keeps the login entry in step, as jobs in the ``settings`` lane: one write at a time, in
the order asked, so two quick edits never race on the file. ``KeysController`` talks to the OS keyring in
its own ``keyring`` lane: an unlock prompt that keeps the keyring waiting holds up nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from engram.core import Engine, EngramError, Paths
from engram.core.errors import SettingsError
from engram.core.settings_file import LoadedSettings, load_settings, reset_value, set_value

from .. import keys
from . import autostart
from .jobs import Job, Jobs


def as_text(value: Any) -> str:
    """A setting's value as the Settings page shows and compares it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Saved:
    key: str
    value: Any
    changed: bool  # False: the value was already that (nothing written)
    login_note: str = ""  # why the login entry could not follow start_at_login, when it could not


@dataclass(frozen=True)
class Refused:
    key: str
    message: str


def sync_login_entry(want: bool, *, removing: bool) -> None:
    """Write the login entry when ``want`` and it is missing; remove it only when ``removing`` (the person
    switched the setting off), so a start never deletes an entry it did not make.

    Raises:
        EngramError: the entry cannot be read or written.
    """
    enabled = autostart.is_enabled()
    if want and not enabled:
        autostart.set_enabled(True)
    elif removing and not want and enabled:
        autostart.set_enabled(False)


class SettingsController(QObject):
    """Saves and resets settings in the background and applies them to the engine."""

    saved = Signal(object)  # Saved
    refused = Signal(object)  # Refused
    reset_done = Signal(str)  # the key
    login_failed = Signal(str, str)  # title, message: the login entry could not be written or removed

    def __init__(self, jobs: Jobs, paths: Paths, environ: Mapping[str, str], engine: Engine,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.paths = paths
        self.environ = dict(environ)
        self.engine = engine

    def save(self, key: str, text: str) -> None:
        """Validate and write ``key = text``; ``saved`` (also when unchanged) or ``refused`` follows."""
        self.jobs.submit("task", f"Saving {key}", lambda _report: self._save(key, text), on_done=self._done,
                         lane="settings")

    def reset(self, key: str) -> None:
        """Remove ``key`` from the file (back to its default); ``reset_done`` follows."""

        def work(_report: object) -> str:
            reset_value(self.paths.settings_file, key)
            self._apply(key)
            return key

        self.jobs.submit("task", f"Resetting {key}", work,
                         on_done=lambda job: self.reset_done.emit(key) if job.error is None else None,
                         lane="settings")

    def sync_login_entry(self, *, removing: bool = False) -> None:
        """Bring the login entry in line with ``desktop.start_at_login`` (see ``sync_login_entry``)."""
        want = self.engine.settings.desktop.start_at_login

        def work(_report: object) -> str:
            try:
                sync_login_entry(want, removing=removing)
            except EngramError as exc:
                return f"{exc.title}\n{exc.message}"
            return ""

        self.jobs.submit("task", "Updating the login entry", work, on_done=self._login_done, lane="settings")

    def when_idle(self, then: Callable[[], None]) -> None:
        """Call ``then`` on the Qt thread after every write asked for so far."""
        self.jobs.submit("task", "Settings written", lambda _report: None, on_done=lambda _job: then(),
                         lane="settings")

    # ------------------------------------------------------------ workers

    def _save(self, key: str, text: str) -> Saved | Refused:
        try:
            current = self._load().value(key)
            if as_text(current) == text.strip():
                return Saved(key, current, changed=False)
            value = set_value(self.paths.settings_file, key, text)
        except SettingsError as exc:
            return Refused(key, exc.message)
        note = self._apply(key)
        return Saved(key, value, changed=True, login_note=note)

    def _apply(self, key: str) -> str:
        """Hand the file's settings to the engine; the login entry follows ``desktop.start_at_login``."""
        settings = self._load().settings
        self.engine.apply_settings(settings)
        if key != "desktop.start_at_login":
            return ""
        try:
            sync_login_entry(settings.desktop.start_at_login, removing=True)
        except EngramError as exc:
            return f"{exc.title}\n{exc.message}"
        return ""

    def loaded(self) -> LoadedSettings:
        """The settings as they are now (file + environment). Raises ``SettingsError`` for a bad file."""
        return self._load()

    def _load(self) -> LoadedSettings:
        return load_settings(self.paths.settings_file, self.environ)

    # ------------------------------------------------------- on the Qt thread

    def _done(self, job: Job) -> None:
        outcome = job.result
        if isinstance(outcome, Refused):
            self.refused.emit(outcome)
        elif isinstance(outcome, Saved):
            if outcome.login_note:
                self.login_failed.emit(*outcome.login_note.split("\n", 1))
            self.saved.emit(outcome)

    def _login_done(self, job: Job) -> None:
        if job.error is None and job.result:
            self.login_failed.emit(*str(job.result).split("\n", 1))


class KeysController(QObject):
    """The remote providers' API keys in the OS keyring, one keyring call at a time off the Qt thread."""

    # A sentence about the keyring or a provider's key; whether the keyring works; whether the sentence is an error.
    state = Signal(str, bool, bool)

    def __init__(self, jobs: Jobs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs

    def check(self) -> None:
        """Say which keyring keeps the keys (or why there is none)."""
        self._run("Checking the keyring", lambda: f"Keys are kept in {keys.check_backend()}.")

    def show(self, provider: str) -> None:
        """Say whether a key for ``provider`` is stored (reading it can make the OS ask to unlock)."""
        self._run(f"Looking for the {provider} key", lambda: (
            f"A key for {provider} is stored ({keys.backend_name()})." if keys.has_key(provider)
            else f"No key stored for {provider}."))

    def store(self, provider: str, secret: str) -> None:
        def work() -> str:
            keys.store_key(provider, secret)
            return f"Stored the {provider} key in the keyring ({keys.backend_name()})."

        self._run(f"Storing the {provider} key", work)

    def remove(self, provider: str) -> None:
        self._run(f"Removing the {provider} key", lambda: (
            f"Removed the {provider} key." if keys.remove_key(provider) else f"No key was stored for {provider}."))

    def _run(self, title: str, work: Callable[[], str]) -> None:
        def job(_report: object) -> tuple[str, bool, bool]:
            try:
                return work(), True, False
            except keys.KeyringUnavailable as exc:
                return exc.message, False, True
            except EngramError as exc:  # a refused key (empty, too long): the keyring itself works
                return exc.message, True, True

        self.jobs.submit("task", title, job, on_done=lambda done: self.state.emit(*done.result)
                         if done.error is None else None, lane="keyring")
