"""Canaries and look-alikes: the planted secrets the conformance suite watches for.

The suite plants a canary of every kind into every text input of a producer and checks
that none reaches the output, while a look-alike of every kind must survive. Canaries are
built from pieces at run time so that no secret scanner flags this source file, and from a
hash so they are deterministic yet as random-looking as real secrets.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from typing import Any

from session_contracts.redaction.engine import RedactionPolicy
from session_contracts.redaction.policy import default_policy

__all__ = [
    "canaries",
    "canary_secrets",
    "known_canaries",
    "known_canary_secrets",
    "lookalikes",
    "strings_of",
]

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UPPER_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_BASE64 = _ALNUM + "+/"
_BASE64URL = _ALNUM + "-_"


def _filler(seed: str, length: int, alphabet: str) -> str:
    out: list[str] = []
    counter = 0
    while len(out) < length:
        digest = hashlib.sha256(f"session-contracts canary {seed} {counter}".encode()).digest()
        out.extend(alphabet[byte % len(alphabet)] for byte in digest)
        counter += 1
    return "".join(out[:length])


def _canary_parts() -> dict[str, tuple[str, str, str]]:
    """Per kind: the text before the secret, the secret, the text after it."""
    pem_body = "\n".join(
        "MIIEpAIBAAKCAQEA" + _filler("pem", 48, _BASE64)
        if line == 0
        else "CANARY" + _filler(f"pem{line}", 58, _BASE64)
        for line in range(4)
    )
    rsa = "RSA PRIVATE KEY"
    pem = f"-----BEGIN {rsa}-----\n{pem_body}\n-----END {rsa}-----"
    jwt_header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"  # {"alg":"HS256","typ":"JWT"}
    jwt_payload = "eyJzdWIiOiJDQU5BUlkiLCJuYW1lIjoiY2FuYXJ5In0"  # {"sub":"CANARY",...}
    return {
        "pem_private_key": ("", pem, ""),
        "jwt": ("", f"{jwt_header}.{jwt_payload}.CANARY{_filler('jwt', 37, _BASE64URL)}", ""),
        "anthropic_api_key": ("", "sk-" + "ant-api03-CANARY" + _filler("ant", 80, _BASE64URL), ""),
        "openai_api_key": ("", "sk-" + "proj-CANARY" + _filler("openai", 40, _ALNUM) + "7", ""),
        "github_token": ("", "gh" + "p_CANARY" + _filler("github", 30, _ALNUM), ""),
        "slack_token": (
            "",
            "xox" + "b-104729" + "3355-77041952" + "-CANARY" + _filler("slack", 18, _ALNUM),
            "",
        ),
        "stripe_key": ("", "sk" + "_live_CANARY" + _filler("stripe", 20, _ALNUM), ""),
        "google_api_key": ("", "AI" + "zaCANARY" + _filler("google", 29, _BASE64URL), ""),
        "aws_access_key_id": ("", "AK" + "IACANARY" + _filler("akia", 10, _UPPER_ALNUM), ""),
        "aws_secret_access_key": (
            "aws_secret_access_key = ",
            "CANARY" + _filler("aws-secret", 34, _BASE64),
            "",
        ),
        "azure_storage_key": (
            "DefaultEndpointsProtocol=https;AccountName=canary;AccountKey=",
            "CANARY" + _filler("azure", 80, _BASE64) + "==",
            ";EndpointSuffix=core.windows.net",
        ),
        "url_password": (
            "postgres://canary:",
            "CANARY-" + _filler("url", 12, _ALNUM),
            "@db:5432/app",
        ),
        "bearer_token": (
            "Authorization: Bearer ",
            "CANARY." + _filler("bearer", 24, _BASE64URL),
            "",
        ),
        "authorization_header": (
            "Authorization: Basic ",
            "Q0FOQVJZ" + _filler("basic", 16, _ALNUM) + "==",
            "",
        ),
        "password_assignment": ("password=", "CANARY-" + _filler("password", 9, _ALNUM), ""),
        "sensitive_key_high_entropy": (
            'signing_key: "',
            "CANARY" + _filler("entropy", 34, _ALNUM),
            '"',
        ),
    }


def _harn_canary_parts() -> dict[str, tuple[str, str, str]]:
    """Per kind of Harn's catalog that our own catalog lacks: before, secret, after."""
    shared = _canary_parts()
    return {
        "github_pat_fine": ("", "github" + "_pat_11CANARY" + _filler("pat", 70, _ALNUM), ""),
        "aws_access_key": ("", shared["aws_access_key_id"][1], ""),
        "gitlab_token": ("", "gl" + "pat-CANARY" + _filler("gitlab", 20, _ALNUM), ""),
        "huggingface_token": ("", "hf" + "_CANARY" + _filler("hf", 30, _ALNUM), ""),
        "cerebras_key": ("", "cs" + "k-CANARY" + _filler("cerebras", 42, _ALNUM), ""),
        "together_key": ("", "tgp" + "_v1_CANARY" + _filler("together", 37, _ALNUM), ""),
        "npm_token": ("", "np" + "m_CANARY" + _filler("npm", 30, _ALNUM), ""),
        "openai_key": ("", shared["openai_api_key"][1], ""),
        "private_key_block": ("", shared["pem_private_key"][1], ""),
        "sensitive_assignment": ("api_key = ", "CANARY-" + _filler("assign", 12, _ALNUM), ""),
    }


def _all_canary_parts() -> dict[str, tuple[str, str, str]]:
    return dict(_built_canary_parts())


@functools.cache
def _built_canary_parts() -> tuple[tuple[str, tuple[str, str, str]], ...]:
    """Built once: every golden fixture that names a secret asks for them all."""
    return tuple({**_canary_parts(), **_harn_canary_parts()}.items())


def _kinds_of(policy: RedactionPolicy | None) -> tuple[str, ...]:
    if policy is None:
        policy = default_policy()
    return policy.kinds


def canaries(policy: RedactionPolicy | None = None) -> dict[str, str]:
    """One realistic, clearly fake secret of every kind of ``policy`` (the default
    policy when None), in the context it needs."""
    parts = _all_canary_parts()
    return {kind: "".join(parts[kind]) for kind in _kinds_of(policy) if kind in parts}


def canary_secrets(policy: RedactionPolicy | None = None) -> dict[str, str]:
    """The part of each canary that must not survive redaction (the key or scheme may)."""
    parts = _all_canary_parts()
    return {kind: parts[kind][1] for kind in _kinds_of(policy) if kind in parts}


def strings_of(value: Any) -> Iterator[str]:
    """Every string of a JSON value, member names included, as decoded: where a canary's
    secret must not be (in JSON text a secret with a newline, a PEM key, reads ``\\n``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def known_canaries() -> dict[str, str]:
    """Every canary of both built-in catalogs, in context (for fixtures that name one)."""
    return {kind: "".join(parts) for kind, parts in _all_canary_parts().items()}


def known_canary_secrets() -> dict[str, str]:
    """The secret of every canary kind of both built-in catalogs (for fixtures that name one)."""
    return {kind: secret for kind, (_, secret, _) in _all_canary_parts().items()}


def _all_lookalikes() -> dict[str, str]:
    return {
        "pem_private_key": "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n"
        "-----END PUBLIC KEY-----",
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        "anthropic_api_key": "sk-ant-short",
        "openai_api_key": "sk-abc123",
        "github_token": "ghp_short123",
        "slack_token": "xoxb-short",
        "stripe_key": "pk_live_" + "CANARYpublishable0123456789",
        "google_api_key": "AIza prefixes a Google API key",
        "aws_access_key_id": "AKIA is the prefix of an access key id",
        "aws_secret_access_key": "aws_secret_access_key is read from the environment",
        "azure_storage_key": "set AccountKey in the connection string",
        "url_password": "https://user@example.com:8443/path?q=1",
        "bearer_token": "the bearer of this letter",
        "authorization_header": "Authorization: required",
        "password_assignment": "reset your password in settings",
        "sensitive_key_high_entropy": 'signing_key: "rotate-every-ninety-days"',
        # Harn's catalog
        "github_pat_fine": "github_pat_ starts a fine-grained token",
        "aws_access_key": "AKIA is the prefix of an access key id",
        "gitlab_token": "glpat-short",
        "huggingface_token": "hf_hub_download",
        "cerebras_key": "csk-short",
        "together_key": "tgp_v1_short",
        "npm_token": "npm_config_registry",
        "openai_key": "sk-abc123",
        "private_key_block": "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n"
        "-----END PUBLIC KEY-----",
        "sensitive_assignment": "max_tokens=200",
    }


def lookalikes(policy: RedactionPolicy | None = None) -> dict[str, str]:
    """One text per kind of ``policy`` (the default when None) that resembles its
    secrets but must survive redaction."""
    texts = _all_lookalikes()
    return {kind: texts[kind] for kind in _kinds_of(policy) if kind in texts}
