"""Generation models: manifest-backed files, verified downloads, GPU detection, the pool, providers."""
