"""A case's time budget: how long the producer may take to answer it, from the work it is.

A fixed number of seconds makes the verdict depend on the machine: a case the
reference answers in 7 s on an idle laptop takes 15 s on a loaded CI runner,
for every producer alike. So each case's budget follows what the reference
needed for the same input, on this machine, in this run (its answer is
computed here anyway, to judge the producer's): ``BUDGET_FACTOR`` times that,
and never less than ``BUDGET_FLOOR_SECONDS``. A load that slows the producer
slows the reference's measure too, and the verdict stays the producer's.
``--timeout SECONDS`` sets one fixed budget for every case instead
(docs/checks.md, "Time budgets").
"""

from __future__ import annotations

from dataclasses import dataclass

from session_contracts.conformance.judge.expected import ReferenceAnswer

__all__ = ["BUDGET_FACTOR", "BUDGET_FLOOR_SECONDS", "TimeBudget"]

#: A case's budget is at least this many seconds (a producer's start-up, a first
#: import, a garbage collection: costs that do not follow the case's size).
BUDGET_FLOOR_SECONDS = 10.0
#: ...and this many times the reference's time for the same input, here and now:
#: room for a producer slower than ours, and for the pipe between us.
BUDGET_FACTOR = 20.0


@dataclass(frozen=True, slots=True)
class TimeBudget:
    """How a case's budget is set: from the reference's time, or ``fixed`` seconds."""

    fixed: float | None = None

    def at_least(self) -> float:
        """The seconds every case gets, whatever the reference's time for it: the fixed
        budget, or the floor. Only a case the producer has not answered by then needs
        the reference's time to know its whole budget (:meth:`seconds`)."""
        return self.fixed if self.fixed is not None else BUDGET_FLOOR_SECONDS

    def seconds(self, reference: ReferenceAnswer) -> float:
        """The seconds the producer gets for a case the reference answered as ``reference``."""
        if self.fixed is not None:
            return self.fixed
        return max(BUDGET_FLOOR_SECONDS, BUDGET_FACTOR * reference.seconds)

    def explain(self, reference: ReferenceAnswer) -> str:
        """What a timeout message adds: the case's size, the reference's time, the budget's
        rule and the flag that raises it."""
        size = f"the case's input is {reference.input_bytes:,} bytes"
        if self.fixed is not None:
            rule = f"--timeout {self.fixed:g} sets this budget for every case"
            hint = "raise --timeout, or leave it out to budget each case from the reference's time"
        else:
            rule = (
                f"the reference answered it in {reference.seconds:.2f} s on this machine, "
                f"and a case's budget is the greater of {BUDGET_FLOOR_SECONDS:g} s and "
                f"{BUDGET_FACTOR:g} times that"
            )
            hint = "pass --timeout SECONDS to give every case a fixed, larger budget"
        return f"{size}; {rule}; {hint}"
