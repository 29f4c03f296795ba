"""``python -m engram.app``: the same as the ``engram`` command."""

from .cli import main

main()
