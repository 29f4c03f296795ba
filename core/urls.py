"""Credentials in URLs: refused where a URL is given, hidden where one is shown.

A URL with a user or key before its host (``https://KEY:SECRET@host``) would be saved in a settings file or a
workspace's ``location.json`` and shown by every list, status and error; Engram takes keys only from the keyring
or the environment, so such a URL is refused, and a message that quotes a refused value shows it masked.
"""

from __future__ import annotations

import re

#: A scheme, then everything up to the last "@" of that word: where a user and key would be (a secret may hold "/").
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^\s\"']*@")


def has_credentials(url: str) -> bool:
    """Whether ``url`` carries a user name or key before its host (any "@" after the scheme's "://")."""
    return "@" in url.partition("://")[2] if "://" in url else "@" in url


def mask_credentials(text: str) -> str:
    """``text`` with the user and key of every URL in it replaced by "…"."""
    return _USERINFO.sub(r"\1…@", text)


CREDENTIALS_REFUSED = ("carries a user name or key before '@'; Engram takes no credentials in a URL, where they "
                       "would be saved and shown: give the URL without them, and the key in the environment "
                       "variable the provider reads (or the keyring)")
