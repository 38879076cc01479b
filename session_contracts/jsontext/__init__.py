"""Strict JSON reading, canonical forms (RFC 8785, Harn's) and the content hashes on them,
the wire form, and read-only JSON values."""
