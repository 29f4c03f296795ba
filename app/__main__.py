"""``python -m engram.app``: the same as the ``engram`` command."""

from .entry import main

main()
