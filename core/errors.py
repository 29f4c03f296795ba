"""The exception tree of the engine.

Every error a user or an agent can meet carries a short ``title`` and a ``message`` that says what
was wrong and what to do. Library and OS errors are translated into these at each boundary
(store, model, file system), so callers show errors by type and never by matching text.

This is every error class of Engram (``tests/test_error_tree.py`` checks it). The classes defined in
this file have no module named; the others are defined beside the code that raises them::

    EngramError
    ├── SettingsError            a settings key or value was refused
    ├── InvalidArgument          a tool argument was refused (names the argument and what it accepts)
    │   └── TransferRefused      an export folder that exists; an import path missing, unreadable or of no known format
    ├── NotFound                 an id, source or workspace that does not exist
    ├── WorkspaceError           a workspace name or folder that cannot be used
    │   ├── SchemaTooNew         the store was written by a newer Engram
    │   ├── WorkspaceNotFound    no workspace has that name
    │   ├── KeyringRefused       a shared workspace's key cannot be read from or kept in the keyring (core/store/bucket_access.py)
    │   ├── BucketCredentialsRefused  the bucket refused the access key (core/store/bucket_errors.py)
    │   ├── BucketMissing        a shared workspace's bucket does not exist (core/store/bucket_errors.py)
    │   └── BucketForbidden      the access key may not read or write the prefix (core/store/bucket_errors.py)
    ├── StoreError               the database refused an operation
    │   ├── WriterClosed         a write came after the store's writer closed (core/store/writer.py)
    │   ├── BucketUnreachable    a shared workspace's storage cannot be reached (core/store/bucket_errors.py)
    │   └── CommitConflict       other machines' commits kept winning the race (core/store/bucket_errors.py)
    ├── ModelError               the embedding model is missing, damaged or failed to load
    │   ├── ChecksumMismatch     a model file's SHA256 is not the pinned one
    │   ├── BindingBroken        llama.cpp's binding cannot be loaded: how to repair it (core/models/backend.py)
    │   ├── AnalysisFailed       a long question cannot be read in sections by this model (core/chat/sections.py)
    │   ├── DeadlineExceeded     the model did not answer before the deadline (core/models/generation.py)
    │   └── DownloadError        a model download failed (core/models/download.py)
    │       ├── DiskFull         no room for the model file (core/models/download.py)
    │       ├── NetworkError     the connection broke off (core/models/download.py)
    │       └── ServerError      the server refused the download (core/models/download.py)
    ├── IngestError              a path that cannot be ingested at all
    ├── IngestCancelled          an ingest stopped because someone cancelled it (its finished files stay)
    ├── TransferFailed           the disk refused writing an export folder (nothing that looks whole is left)
    ├── LedgerError              the run ledger cannot be read or written (no provider work follows)
    ├── BudgetRefused            a run's allowance does not cover a preparation (the message says which limit)
    ├── EngineClosed             the engine was closed
    ├── ServiceUnavailable       the service cannot start, or does not answer (mcp/errors.py)
    ├── RemoteToolError          a tool error the service reported, with its title (mcp/errors.py)
    ├── ServiceRunning           another process serves this data folder (mcp/service.py)
    ├── ServiceStopped           the data folder's service stopped answering the CLI (mcp/errors.py)
    ├── TokenMismatch            the process on the service's port cannot prove the token (mcp/handshake.py)
    ├── SetupError               an editor's config file cannot be read or written (mcp/setup_clients.py)
    ├── AutostartError           the start-at-login entry cannot be written or removed (app/desktop/autostart.py)
    └── KeyringUnavailable       no usable OS keyring for API keys (app/keys.py)

Outside the tree: ``NotOnWriter`` (core/store/writer.py), an ``AssertionError`` that only a
programming error raises (a store write off the writer thread).
"""

from __future__ import annotations


class EngramError(Exception):
    """Base of every error Engram raises on purpose.

    ``title`` is a few words for a heading or a notification; ``message`` is a full sentence that
    tells the user what was wrong and what they can do about it.
    """

    title = "Engram error"

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title

    def __str__(self) -> str:
        return self.message


class SettingsError(EngramError):
    title = "Invalid setting"


class InvalidArgument(EngramError):
    title = "Invalid argument"


class TransferRefused(InvalidArgument):
    """``engram export`` or ``engram import`` refused its input before writing anything."""

    title = "Cannot export or import"


class NotFound(EngramError):
    title = "Not found"


class WorkspaceError(EngramError):
    title = "Workspace unavailable"


class SchemaTooNew(WorkspaceError):
    title = "Store written by a newer Engram"


class StoreError(EngramError):
    title = "Store error"


class ModelError(EngramError):
    title = "Model unavailable"


class ChecksumMismatch(ModelError):
    title = "Model file damaged"


class IngestError(EngramError):
    title = "Cannot ingest"


class IngestCancelled(EngramError):
    title = "Ingest cancelled"


class TransferFailed(EngramError):
    title = "Export failed"


class LedgerError(EngramError):
    title = "Run ledger unavailable"


class BudgetRefused(EngramError):
    title = "Run budget used up"


class WorkspaceNotFound(WorkspaceError):
    title = "Unknown workspace"


class EngineClosed(EngramError):
    title = "Engine closed"
