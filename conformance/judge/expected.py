"""The reference's answers as the judge sees them: computed once per input, and timed.

Every judge compares a producer's answer with the reference producer's answer to the
same input, computed here in this process. The answer is kept for the last few inputs,
so a judge that asks twice (and a failure report that shows it) does not compute it
again, and the seconds it took are kept beside it: a case's time budget for the
producer follows them (:mod:`session_contracts.conformance.judge.budget`).

A kept answer is held as its JSON bytes and read afresh for each caller, so no
caller can change what another sees.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.protocol import Rejected, Skipped
from session_contracts.jsontext.wire import dumps_wire, loads_wire

__all__ = ["ReferenceAnswer", "reference_answer", "reference_outcome"]

#: How many inputs' answers are kept (a check judges one input at a time; a few more
#: cover a judge that asks for the answer to a variant of the input, then the input).
KEPT_ANSWERS = 8


@dataclass(frozen=True, slots=True)
class ReferenceAnswer:
    """The reference's answer to one input: the outcome as the wire carries it, the
    size of the input as sent, and the seconds the reference needed for it here."""

    outcome: str
    payload: bytes
    reason: str
    input_bytes: int
    seconds: float

    def as_outcome(self, seq: int = 0) -> CaseOutcome:
        value = loads_wire(self.payload) if self.payload else None
        if self.outcome == "result":
            return CaseOutcome(seq, "result", output=value, seconds=self.seconds)
        if self.outcome == "rejected":
            return CaseOutcome(seq, "rejected", rejection=value, seconds=self.seconds)
        if self.outcome == "skipped":
            return CaseOutcome(seq, "skipped", reason=self.reason, seconds=self.seconds)
        return CaseOutcome(
            seq, "errored", error_code="producer_error", message=self.reason, seconds=self.seconds
        )


_kept: OrderedDict[tuple[str, bytes], ReferenceAnswer] = OrderedDict()


@contextmanager
def _quiet_reference() -> Iterator[None]:
    """The reference logs what a server's operator must see (a corrupt journal, a failed
    request); computing an expected answer is the harness's business, not the user's."""
    # A logger's own switch: a record is dropped only by the logger that makes it.
    loggers = [
        logging.getLogger(name)
        for name in list(logging.root.manager.loggerDict)
        if name == "session_contracts" or name.startswith("session_contracts.")
    ]
    were = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, was in zip(loggers, were, strict=True):
            logger.disabled = was


def _compute(operation: str, sent: bytes) -> ReferenceAnswer:
    from session_contracts.conformance.reference.producer import HANDLERS

    # The handler gets its own copy, as read from the wire: it may keep or change it.
    case_input = loads_wire(sent)
    began = time.perf_counter()
    outcome, value, reason = "result", None, ""
    with _quiet_reference():
        try:
            value = HANDLERS[operation](case_input)
        except Rejected as rejected:
            outcome, value = "rejected", rejected.to_json()
        except Skipped as skipped:
            outcome, reason = "skipped", skipped.reason
        except Exception as exc:
            # A malformed case input (a missing member, a wrong type) breaks the
            # handler: the reference errs on that case, as a producer process that
            # raised would, never a traceback.
            outcome, reason = "errored", f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - began
    payload = dumps_wire(value) if outcome in ("result", "rejected") else b""
    return ReferenceAnswer(outcome, payload, reason, len(sent), seconds)


def reference_answer(operation: str, case_input: Any) -> ReferenceAnswer:
    """The reference's answer to ``case_input``, computed once for the last few inputs."""
    sent = dumps_wire(case_input)
    key = (operation, sent)
    answer = _kept.get(key)
    if answer is None:
        answer = _compute(operation, sent)
        _kept[key] = answer
        while len(_kept) > KEPT_ANSWERS:
            _kept.popitem(last=False)
    else:
        _kept.move_to_end(key)
    return answer


def reference_outcome(operation: str, case_input: Any, seq: int = 0) -> CaseOutcome:
    """The reference producer's answer, in-process, as the harness would see it."""
    return reference_answer(operation, case_input).as_outcome(seq)
