"""The exception tree of the engine.

Every error a user or an agent can meet carries a short ``title`` and a ``message`` that says what
was wrong and what to do. Library and OS errors are translated into these at each boundary
(store, model, file system), so callers show errors by type and never by matching text::

    EngramError
    ├── SettingsError            a settings key or value was refused
    ├── InvalidArgument          a tool argument was refused (names the argument and what it accepts)
    ├── NotFound                 an id, source or workspace that does not exist
    ├── WorkspaceError           a workspace name or folder that cannot be used
    │   └── SchemaTooNew         the store was written by a newer Engram
    ├── StoreError               the database refused an operation
    ├── ModelError               the embedding model is missing, damaged or failed to load
    │   └── ChecksumMismatch     a model file's SHA256 is not the pinned one
    ├── IngestError              a path that cannot be ingested at all
    ├── LedgerError              the run ledger cannot be read or written (no provider work follows)
    └── BudgetRefused            a run's allowance does not cover a preparation (the message says which limit)
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


class LedgerError(EngramError):
    title = "Run ledger unavailable"


class BudgetRefused(EngramError):
    title = "Run budget used up"
