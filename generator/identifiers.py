"""Names shared by every language the generator writes: a schema file's contract, and
member identifiers.

A schema file ``NAME[-vN].schema.json`` holds contract ``NAME`` (``session-recap-v1.schema.json``
holds ``session-recap``), the first half of its document types' ``CONTRACT.KIND``.


A JSON member name becomes an identifier of the target language: ``sessionId`` and
``session_id`` both become ``session_id`` in Rust and Python and ``SessionID`` in Go.
When members of one object map to one identifier, every one is still held, each under
an identifier of its own, and the JSON name stays explicit (a serde rename, a pydantic
alias, the Go decoder's member name):

- the member whose JSON name is spelt in snake_case keeps the plain identifier (the
  spelling of Harn's serde field names, and of the session-health fact's members);
  without one, the first member of the group in schema order keeps it;
- every other member gets the name of its spelling appended: ``camel``
  (``sessionId``), ``pascal`` (``SessionId``), ``kebab`` (``session-id``), ``snake``,
  or ``other`` (``session.id``): ``session_id_camel`` in Rust and Python,
  ``SessionIDCamel`` in Go.

Two members of one group with one spelling (``a.b`` and ``a:b``), or a suffixed
identifier equal to another member's, cannot be told apart by this rule: the generator
stops with ``polyglot_name_clash`` instead of overwriting one with the other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from session_contracts.errors import Finding, ToolError

__all__ = ["SPELLINGS", "contract_name", "member_identifiers", "name_clash", "snake", "spelling"]

_VERSION_SUFFIX = re.compile(r"-v\d+$")


def contract_name(schema_file: Path) -> str:
    """``session-recap-v1.schema.json`` -> ``session-recap``."""
    return _VERSION_SUFFIX.sub("", schema_file.name.removesuffix(".schema.json"))


# Spellings in the order in which they keep the plain identifier.
SPELLINGS = ("snake", "camel", "pascal", "kebab", "other")


def snake(name: str) -> str:
    """``sessionId`` -> ``session_id``; ``A2aTaskStatus`` -> ``a2a_task_status``."""
    text = re.sub(r"[^0-9A-Za-z]+", "_", name)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    return text.strip("_").lower() or "field"


def spelling(json_name: str) -> str:
    """How a JSON member name is spelt: one of :data:`SPELLINGS`."""
    if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", json_name):
        return "snake"
    if re.fullmatch(r"[a-z][a-z0-9]*([A-Z][a-z0-9]*)+", json_name):
        return "camel"
    if re.fullmatch(r"([A-Z][a-z0-9]*)+", json_name):
        return "pascal"
    if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", json_name):
        return "kebab"
    return "other"


def name_clash(message: str) -> ToolError:
    return ToolError(
        [
            Finding(
                "$",
                "polyglot_name_clash",
                message,
                "rename one of the schema names, or teach generator/identifiers.py to tell "
                "them apart",
            )
        ]
    )


def member_identifiers(
    json_names: Sequence[str],
    identifier: Callable[[str], str],
    suffixed: Callable[[str, str], str],
    where: str,
) -> tuple[str, ...]:
    """One identifier per member of an object, in the order of ``json_names``.

    ``identifier`` spells a JSON name in the language; ``suffixed(identifier, spelling)``
    appends a spelling's name to an identifier (``session_id_camel``, ``SessionIDCamel``).
    Raises ``polyglot_name_clash`` when the rule of this module cannot tell two members
    apart; ``where`` names the object in that message.
    """
    plain = [identifier(name) for name in json_names]
    groups: dict[str, list[int]] = {}
    for index, name in enumerate(plain):
        groups.setdefault(name, []).append(index)
    chosen = list(plain)
    for name, members in groups.items():
        if len(members) == 1:
            continue
        ranked = sorted(members, key=lambda i: (SPELLINGS.index(spelling(json_names[i])), i))
        spellings = [spelling(json_names[i]) for i in ranked[1:]]
        if len(set(spellings)) != len(spellings):
            raise name_clash(
                f"{where}: the members {sorted(json_names[i] for i in members)} map to "
                f"{name} and two of them are spelt alike ({', '.join(spellings)})"
            )
        for index in ranked[1:]:
            chosen[index] = suffixed(name, spelling(json_names[index]))
    repeated = sorted({name for name in chosen if chosen.count(name) > 1})
    if repeated:
        raise name_clash(f"{where}: two members map to one identifier: {', '.join(repeated)}")
    return tuple(chosen)
