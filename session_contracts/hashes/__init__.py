"""The hashes each document type carries, and how a verifier checks them."""
