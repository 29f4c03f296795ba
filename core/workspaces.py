"""The workspaces of one data folder: where each lives, and their stores, opened once and kept.

A workspace lives in its local folder (``workspaces/NAME/``), or, shared, under a prefix of an S3-compatible
bucket that a team's machines read and write together. A shared workspace is registered on each machine by a
``location.json`` in its local folder (``engram workspace add``), which also keeps what stays on this machine:
chats and the run ledger. Its access key is in the OS keyring or the environment (``store.bucket_access``).
Where a workspace lives is invisible to tools except ``status``.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from .errors import EngineClosed, EngramError, InvalidArgument, WorkspaceError, WorkspaceNotFound
from .paths import Paths
from .privacy import private_folder
from .settings import Settings, is_workspace_name
from .store import WorkspaceStore, Writer
from .store.bucket_access import (
    BucketCredentials,
    credentials_for,
    forget_credentials,
    storage_options,
    store_credentials,
)
from .store.connection import BucketConnection
from .store.location import LOCATION_FILE, BucketLocation, read_location, write_location
from .store.opening import META_FILE, open_workspace

logger = logging.getLogger(__name__)

_NAME_RULE = "use 1–40 lowercase letters, digits and dashes, starting with a letter or digit"


@dataclass(frozen=True)
class WorkspacePlace:
    """Where one workspace lives, and (when checked) whether it can be reached and how many memories it holds."""

    name: str
    location: BucketLocation | None  # None: a local folder
    where: str
    reachable: bool | None = None  # None: not checked
    memories: int | None = None
    problem: str = ""

    @property
    def shared(self) -> bool:
        return self.location is not None


class Workspaces:
    """Opens each workspace once (local or shared) and keeps its store. Thread-safe; ``close`` when done."""

    def __init__(self, paths: Paths, writer: Writer, settings: Callable[[], Settings],
                 dimensions: Callable[[], tuple[int, str]], on_open: Callable[[WorkspaceStore], None],
                 environ: Mapping[str, str]) -> None:
        """``dimensions`` gives the embedding model's (vector size, model id); ``on_open`` is called with every
        store once it is open (the maintenance schedule watches it); ``environ`` is where shared workspaces'
        access keys come from when the keyring has none."""
        self._paths = paths
        self._writer = writer
        self._settings = settings
        self._dimensions = dimensions
        self._on_open = on_open
        self._environ = dict(environ)
        self._stores: dict[str, WorkspaceStore] = {}
        self._opening: dict[str, threading.Lock] = {}  # one per name: a workspace opens once, even when asked twice
        self._lock = threading.Lock()  # guards _stores, _opening and _closed; never held across an open
        self._closed = False

    # ------------------------------------------------------------------- names

    def names(self) -> list[str]:
        """Workspaces of this data folder: local ones and the shared ones registered on this machine."""
        root = self._paths.workspaces_dir
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir()
                      if (p / META_FILE).is_file() or (p / LOCATION_FILE).is_file())

    def location(self, name: str) -> BucketLocation | None:
        """The bucket of shared workspace ``name``; ``None`` for a local one. Raises ``WorkspaceError``."""
        return read_location(self._paths.workspace_dir(name))

    # ------------------------------------------------------------------ opening

    def store(self, name: str, *, create: bool) -> WorkspaceStore:
        """The store of workspace ``name``, opened once and kept (see ``Engine.store`` for what it raises)."""
        _check_name(name)
        with self._lock:
            cached = self._cached(name)
            if cached is not None:
                return cached
            opening = self._opening.setdefault(name, threading.Lock())
        # Opened outside the shared lock: a shared workspace whose storage does not answer holds up only the
        # callers of that workspace, never those of the others.
        with opening:
            with self._lock:
                cached = self._cached(name)
                if cached is not None:
                    return cached
            location = self.location(name)
            return self._keep(name, self._open(name, location, create=create and location is None))

    def _keep(self, name: str, store: WorkspaceStore) -> WorkspaceStore:
        """Keep a store just opened (unless the engine closed meanwhile) and hand it to ``on_open``."""
        with self._lock:
            if self._closed:
                raise EngineClosed("The engine is closed.")
            self._stores[name] = store
        self._on_open(store)
        return store

    def _cached(self, name: str) -> WorkspaceStore | None:
        """The open store of ``name`` (under ``_lock``); a shared one removed from this machine is dropped."""
        if self._closed:
            raise EngineClosed("The engine is closed.")
        cached = self._stores.get(name)
        if cached is not None and cached.location is not None \
                and not (self._paths.workspace_dir(name) / LOCATION_FILE).is_file():
            del self._stores[name]
            return None
        return cached

    def _open(self, name: str, location: BucketLocation | None, *, create: bool,
              credentials: BucketCredentials | None = None) -> WorkspaceStore:
        dimensions, model_id = self._dimensions()
        try:
            private_folder(self._paths.data_dir)
            private_folder(self._paths.workspaces_dir)
        except OSError as exc:
            raise WorkspaceError(f"Cannot create Engram's data folder ({exc.strerror}); check that "
                                 "ENGRAM_DATA_DIR (or the default data folder) is yours and writable.") from exc
        cfg = self._settings().store
        bucket = None
        consistency = cfg.read_consistency_sec
        if location is not None:
            access = credentials or credentials_for(name, self._environ)
            bucket = BucketConnection(location, storage_options(location, access))
            consistency = cfg.shared_read_consistency_sec
        try:
            return self._writer.run(lambda: open_workspace(
                name, self._paths.workspace_dir(name), dimensions=dimensions, embed_model=model_id,
                read_consistency=timedelta(seconds=consistency), create=create, bucket=bucket))
        except WorkspaceNotFound as exc:
            if location is not None:
                raise
            known = ", ".join(self.names()) or "none yet"
            raise WorkspaceNotFound(f"{exc.message} Existing workspaces: {known}.") from None

    # ------------------------------------------------------------- shared ones

    def add_shared(self, name: str, location: BucketLocation,
                   credentials: BucketCredentials | None = None) -> WorkspaceStore:
        """Register shared workspace ``name`` at ``location`` on this machine: create it there when the prefix is
        empty, or join the workspace another machine created. ``credentials`` go to the OS keyring; without
        them the environment's AWS variables are used. Nothing is registered unless the bucket answered.

        Raises:
            InvalidArgument: the name is taken by a local workspace or another shared one.
            WorkspaceError: no credentials, or the bucket refused them, or it is missing, or access is denied,
                or the prefix holds something else (each message names what to fix).
            BucketUnreachable: the bucket cannot be reached.
        """
        _check_name(name)
        folder = self._paths.workspace_dir(name)
        if (folder / META_FILE).is_file():
            raise InvalidArgument(f"Workspace '{name}' already exists on this computer as a local workspace; choose "
                                  "another name for the shared one.")
        current = self.location(name)
        if current is not None and current.uri != location.uri:
            raise InvalidArgument(f"Workspace '{name}' is already shared at {current.uri}; remove it first with "
                                  f"`engram workspace remove {name}` to point it elsewhere.")
        with self._lock:
            if self._closed:
                raise EngineClosed("The engine is closed.")
            opening = self._opening.setdefault(name, threading.Lock())
        with opening:
            created_folder = not folder.exists()
            try:
                store = self._open(name, location, create=True,
                                   credentials=credentials or credentials_for(name, self._environ))
                if credentials is not None:
                    store_credentials(name, credentials)
                private_folder(folder)
                write_location(folder, location)
            except OSError as exc:
                _undo_folder(folder, created_folder)
                raise WorkspaceError(f"Cannot register workspace '{name}' on this computer ({exc.strerror}); check "
                                     "that Engram's data folder is writable.") from exc
            except EngramError as exc:
                _undo_folder(folder, created_folder)
                # The reason, and that nothing is kept on this computer: the caller adds it again once it is fixed.
                exc.message = f"{exc.message} Workspace '{name}' was not added."
                exc.args = (exc.message,)
                raise
            return self._keep(name, store)

    def remove_shared(self, name: str) -> BucketLocation:
        """Forget shared workspace ``name`` on this machine (its access key too); the bucket keeps every memory.

        Raises:
            WorkspaceNotFound: no shared workspace has that name here.
        """
        _check_name(name)
        location = self.location(name)
        if location is None:
            raise WorkspaceNotFound(f"No shared workspace '{name}' on this computer (shared ones: "
                                    f"{', '.join(n for n in self.names() if self.location(n)) or 'none'}).")
        with self._lock:
            (self._paths.workspace_dir(name) / LOCATION_FILE).unlink(missing_ok=True)
            self._stores.pop(name, None)
        forget_credentials(name)
        return location

    def places(self, *, check: bool) -> list[WorkspacePlace]:
        """Every workspace with where it lives; with ``check``, whether it answers (shared ones within seconds)."""
        out: list[WorkspacePlace] = []
        for name in self.names():
            try:
                location = self.location(name)
            except WorkspaceError as exc:
                out.append(WorkspacePlace(name, None, str(self._paths.workspace_dir(name)), False, None, exc.message))
                continue
            where = location.describe() if location else str(self._paths.workspace_dir(name))
            if not check:
                out.append(WorkspacePlace(name, location, where))
                continue
            try:
                store = self.store(name, create=False)
                out.append(WorkspacePlace(name, location, where, True, store.count_memories()))
            except EngramError as exc:
                out.append(WorkspacePlace(name, location, where, False, None, exc.message))
        return out

    def close(self) -> None:
        """Release every store; none opens after this (one being opened is dropped when it is). Idempotent."""
        with self._lock:
            self._closed = True
            self._stores.clear()


def _undo_folder(folder: Path, created: bool) -> None:
    if created:
        shutil.rmtree(folder, ignore_errors=True)


def _check_name(name: str) -> None:
    if not is_workspace_name(name):
        raise InvalidArgument(f"'{name}' is not a workspace name: {_NAME_RULE}.")
