"""Capture: editors' sessions read as turns and stored once each, the hooks' inbox, the session and folder watches."""
