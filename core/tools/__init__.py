"""Tools: row functions (arguments → result models), formatters (results → text), the registry."""
