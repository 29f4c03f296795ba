"""Ingest: listing files, chunking by structure, embedding, and swapping into the store."""
