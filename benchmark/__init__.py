"""Reproducible measurements of Engram (see benchmark/README.md)."""
