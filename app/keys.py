"""Remote providers' API keys in the OS keyring (service ``engram``), never in the settings file.

Used by ``engram keys`` and by the window's settings page. Every failure is a ``KeyringUnavailable``
whose message says what is missing, so both can show it as it is.
"""

from __future__ import annotations

from types import ModuleType

from engram.core import EngramError
from engram.core.models.providers import KEYRING_SERVICE

REMOTE_PROVIDERS = ("openai", "anthropic", "vllm", "ollama")


class KeyringUnavailable(EngramError):
    title = "Keyring unavailable"


def _keyring() -> ModuleType:
    """The keyring module, imported on first use (it looks for a backend when imported)."""
    import keyring

    return keyring


def backend_name() -> str:
    """The keyring backend in use, e.g. ``SecretService Keyring`` (``fail Keyring`` where there is none)."""
    backend = _keyring().get_keyring()
    return getattr(backend, "name", None) or type(backend).__name__


def _unavailable(exc: Exception) -> KeyringUnavailable:
    return KeyringUnavailable(
        f"No usable OS keyring on this computer ({str(exc).rstrip('.')}). API keys are kept only in the OS keyring "
        "(Secret Service on Linux, Keychain on macOS, Credential Manager on Windows); start one, or use the local "
        "provider, which needs no key.")


def check_backend() -> str:
    """The usable keyring backend's name, without reading any secret (which could prompt to unlock it).

    Raises:
        KeyringUnavailable: the only backend is keyring's "fail" placeholder (no OS keyring here).
    """
    backend = _keyring().get_keyring()
    if type(backend).__module__ == "keyring.backends.fail":
        from keyring.errors import NoKeyringError

        raise _unavailable(NoKeyringError("no recommended backend is available"))
    return backend_name()


def has_key(provider: str) -> bool:
    """Whether a key for ``provider`` is stored. Raises ``KeyringUnavailable``."""
    from keyring.errors import KeyringError

    try:
        return _keyring().get_password(KEYRING_SERVICE, provider) is not None
    except (KeyringError, RuntimeError) as exc:
        raise _unavailable(exc) from exc


def store_key(provider: str, secret: str) -> None:
    """Store ``secret`` as ``provider``'s API key.

    Raises:
        EngramError: the key is empty (nothing is stored).
        KeyringUnavailable: there is no usable keyring.
    """
    from keyring.errors import KeyringError

    if not secret.strip():
        raise EngramError("The key is empty; nothing was stored.", title="Invalid argument")
    try:
        _keyring().set_password(KEYRING_SERVICE, provider, secret.strip())
    except (KeyringError, RuntimeError) as exc:
        raise _unavailable(exc) from exc


def remove_key(provider: str) -> bool:
    """Remove ``provider``'s key; ``False`` when none was stored. Raises ``KeyringUnavailable``."""
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        _keyring().delete_password(KEYRING_SERVICE, provider)
    except PasswordDeleteError:
        return False
    except (KeyringError, RuntimeError) as exc:
        raise _unavailable(exc) from exc
    return True
