"""Keeping a workspace's memories tidy: duplicates merged at write time, superseded memories marked."""
