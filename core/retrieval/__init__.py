"""Retrieval: semantic, lexical and graph channels fused by weighted RRF."""
