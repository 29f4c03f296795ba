"""Recall: batched read plans merged under one budget, context packs, altitude digests."""
