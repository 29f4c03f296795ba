"""The bundle's one executable: every entry point of ``engram`` (tray, mcp, service, the CLI)."""

import multiprocessing

from engram.app.entry import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # a frozen app that starts helper processes needs this first
    main()
