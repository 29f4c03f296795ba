"""Stand-ins shared by the tests and the benchmark, neither of which may import the other's code for them: an
S3-compatible server on loopback (``standins.s3``), a proxy that adds a round trip to every request
(``standins.delay_proxy``) and a deterministic embedder (``standins.embedder``), the seam where the embedding
model is not what is being tried.

None is part of Engram: they let a shared workspace be tried against a real object-storage protocol and a slow
link, and a crash be aimed at the store's writes rather than the model, without leaving the machine.
"""
