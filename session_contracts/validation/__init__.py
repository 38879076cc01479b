"""Validation of documents against the contract schemas, the x- keywords included."""
