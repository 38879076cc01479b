"""The authoritative v1 JSON Schemas (draft 2020-12), their examples and the redaction
policies: data only, read through session_contracts.validation.schema_set."""
