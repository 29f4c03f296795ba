"""The desktop app: a tray icon and a window over the same engine and service as the command line.

``main.run_tray`` starts it. The service (engine + MCP over Streamable HTTP) runs inside the Qt event
loop through qasync; blocking engine work runs on worker threads (``jobs``), never on the Qt thread.
"""
