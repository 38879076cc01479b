"""Secret redaction: the engine, policy files, the pattern dialects and Harn's algorithm."""
