"""Journal events checked as one batch, and each event's canonical text cut out of the batch's.

A writer checks every journal event twice over before it stores it: against the
``session-event.event`` contract, and for an RFC 8785 form (its record hash is
of that form; docs/hashing.md 4.1).  :func:`check_events` does both for a whole
batch of wire-form events, as given (parsed JSON, such as a request carries):
the usual batch (every event valid, every one with a form) is decided in a few
calls for all of them, and only otherwise is each event checked on its own, to
say which and why.  What it returns, :class:`CheckedEvents`, is what
:meth:`SqliteJournal.append_checked` stores, so a caller that must report the
findings in its own terms (the reference producer, at paths into its case
input) checks once, not once itself and again in the journal.  Both stores (the SQLite
journal and the tape) refuse a batch through :func:`checked_for_writing` and chain what
passes through :func:`stored_forms`, so the rule is stated once.

:func:`element_forms` is how one canonical encoding of a whole list gives each
element's canonical text: the per-element work is a split, not an encoding.
Pure: nothing is read or written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal.harn_stored import chained_stored_events
from session_contracts.journal.model import (
    JournalWriteError,
    all_events_valid,
    capped,
    rejected,
    validate_event,
)
from session_contracts.jsontext.canonical import canonical_bytes, hash_bytes

__all__ = ["CheckedEvents", "check_events", "element_forms"]


@dataclass(frozen=True, slots=True)
class CheckedEvents:
    """Journal events (wire form) that :func:`check_events` found valid and with an
    RFC 8785 form, in order, each with its record hash (docs/hashing.md 4.1).
    Made only by :func:`check_events`; the events are the values it was given, not
    copies, and are read only."""

    events: tuple[Mapping[str, Any], ...]
    record_hashes: tuple[str, ...]


def check_events(raws: Sequence[Any]) -> tuple[CheckedEvents, list[tuple[int, Finding]]]:
    """Check each of ``raws`` against ``session-event.event`` and for an RFC 8785 form.

    Returns the events that pass, with their record hashes, and (index, finding)
    for each finding of those that do not, in index order, each finding's path
    into its event: an event's contract findings (at most ``MAX_FINDINGS``), or,
    for a valid event, the one finding that refuses its RFC 8785 form.
    """
    # All at once: every event valid (in batches), and the whole list with a form,
    # cut into each event's form. Any doubt: each event on its own, as below.
    valid = all_events_valid(raws)
    forms = _rfc8785_forms(raws) if valid else None
    if forms is not None:
        return CheckedEvents(tuple(raws), tuple(map(hash_bytes, forms))), []
    events: list[Mapping[str, Any]] = []
    hashes: list[str] = []
    problems: list[tuple[int, Finding]] = []
    for index, raw in enumerate(raws):
        try:
            if not valid:
                validate_event(raw)
            # The record hash; RFC 8785 also refuses what no record hash could cover.
            hashes.append(hash_bytes(canonical_bytes(raw)))
        except InvalidDocument as exc:
            problems.extend((index, finding) for finding in exc.findings)
            continue
        events.append(raw)
    return CheckedEvents(tuple(events), tuple(hashes)), problems


def checked_for_writing(raws: Sequence[Any], *, at: Sequence[int] | None = None) -> CheckedEvents:
    """:func:`check_events` of ``raws`` when every event passes; else a
    :class:`JournalWriteError` refusing the batch: each finding at its event's index in
    the batch (``at[i]`` for ``raws[i]`` when they are some of a batch's events), named
    by the event's id, at most ``MAX_FINDINGS`` of them."""
    checked, found = check_events(raws)
    if found:
        where = range(len(raws)) if at is None else at
        raise JournalWriteError(
            capped(
                rejected([finding], index=where[index], event_id=raws[index]["id"])
                for index, finding in found
            )
        )
    return checked


def stored_forms(events: CheckedEvents, previous: Mapping[str, str]) -> list[dict[str, Any]]:
    """The stored forms of checked journal events, each chained on the previous record
    hash of its session (``previous`` gives each session's last one stored before)."""
    pairs = zip(events.events, events.record_hashes, strict=True)
    return list(chained_stored_events(pairs, previous=previous))


def _rfc8785_forms(raws: Sequence[Any]) -> list[bytes] | None:
    """Each valid event's RFC 8785 bytes, or None when the list has no form or cannot be
    cut (then each event is encoded on its own, which names the event that has none)."""
    try:
        whole = canonical_bytes(list(raws))
    except InvalidDocument:
        return None
    return element_forms(raws, whole)


def element_forms(items: Sequence[Any], whole: bytes) -> list[bytes] | None:
    """Each item's canonical text, cut out of ``whole``, the canonical text of the list
    of them (RFC 8785 or Harn's canonical JSON: compact, keys sorted); None when it
    cannot be cut so, and the caller encodes each item itself.

    The cut needs every item to be an object whose least key is the same plain ASCII
    name ``K`` (least in code point order, which for an ASCII key is also RFC 8785's
    UTF-16 order): then each item's text opens with ``{"K":``, and ``whole`` is ``[``,
    the texts joined by ``,``, and ``]``, so each of the ``n - 1`` boundaries reads
    ``,{"K":``. The same bytes never occur inside a string (a quote there is escaped),
    only as structure, nested in an item; when ``whole`` holds them exactly ``n - 1``
    times, none is nested, and the pieces between the boundaries' commas are the items'
    texts. Each such comma becomes a NUL byte, which canonical text never holds (a
    string escapes it), to split at.
    """
    if not items:
        return [] if whole == b"[]" else None
    first = _least_key(items[0])
    if first is None or set(map(type, items)) != {dict}:
        return None
    try:  # every item's least key (map in C: this runs for each of thousands of items)
        if set(map(min, items)) != {first}:
            return None
    except (TypeError, ValueError):  # an empty object, keys that are not all strings
        return None
    opening = b'{"' + first.encode("ascii") + b'":'
    if not (whole.startswith(b"[" + opening) and whole.endswith(b"]")) or b"\0" in whole:
        return None
    pieces = whole[1:-1].replace(b"," + opening, b"\0" + opening).split(b"\0")
    return pieces if len(pieces) == len(items) else None


_PLAIN_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _least_key(item: Any) -> str | None:
    """The least key of a non-empty plain dict if it is a plain ASCII name (written in
    JSON as itself between quotes), else None."""
    if type(item) is not dict or not item:
        return None
    try:
        key = min(item)
    except TypeError:
        return None
    if type(key) is not str or not key or not set(key) <= _PLAIN_NAME:
        return None
    return key
