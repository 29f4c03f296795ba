"""The one embedding model of an engine: loaded on first use, shared by every workspace, closed once."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..errors import EngineClosed, ModelError
from .embedder import Embedder


def closed_error() -> EngineClosed:
    return EngineClosed("The engine is closed.")


class EmbeddingSlot:
    """Holds the embedding model. Thread-safe.

    A failed load is remembered (``note`` says why) and not retried until a restart. A load that ends after
    ``close`` ran closes the model it loaded at once: nothing stays loaded.
    """

    def __init__(self, loader: Callable[[], Embedder], given: Embedder | None = None) -> None:
        """``given`` is a model someone else owns (closing the slot leaves it open); otherwise ``loader``
        builds one on first use, and the slot owns and closes it."""
        self._loader = loader
        self._embedder = given
        self._owned = given is None
        self._error: str | None = None
        self._closed = False
        self._load_lock = threading.Lock()  # held while the model loads
        self._state_lock = threading.Lock()  # guards _closed and the hand-over to close; never held across a load

    def get(self) -> Embedder:
        """The model, loaded on first use.

        Raises:
            ModelError: it cannot be built, verified or loaded (the message says why and what to do).
            EngineClosed: the slot is closed (also when it was closed during the load).
        """
        with self._load_lock:
            with self._state_lock:
                if self._closed:
                    raise closed_error()
                if self._embedder is not None:
                    return self._embedder
            if self._error is not None:
                raise ModelError(self._error)
            try:
                loaded = self._loader()
            except ModelError as exc:
                self._error = exc.message
                raise
            with self._state_lock:
                closed = self._closed
                if not closed:
                    self._embedder = loaded
            if closed:
                loaded.close()
                raise closed_error()
            return loaded

    def get_or_none(self) -> Embedder | None:
        """The model, or ``None`` when it cannot be loaded (``note`` says why).

        Raises:
            EngineClosed: the slot is closed.
        """
        try:
            return self.get()
        except ModelError:
            return None

    def peek(self) -> Embedder | None:
        """The model if it is loaded; never loads."""
        return self._embedder

    @property
    def loaded(self) -> bool:
        return self._embedder is not None

    @property
    def note(self) -> str | None:
        """Why the model is unavailable, if a load failed."""
        return self._error

    def detach(self) -> Embedder | None:
        """Refuse every later ``get`` (``EngineClosed``) and hand over the model this slot owns, for the caller to
        close once nothing uses it any more. Idempotent (``None`` after the first call).

        Does not wait for a load in flight: that load closes its model when it ends.
        """
        with self._state_lock:
            if self._closed:
                return None
            self._closed = True
            embedder = self._embedder if self._owned else None
            if self._owned:
                self._embedder = None
        return embedder

    def close(self) -> None:
        """``detach`` and close the model at once. Idempotent."""
        embedder = self.detach()
        if embedder is not None:
            embedder.close()
