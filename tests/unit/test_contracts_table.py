"""One table of contracts (session_contracts/contracts.py): certify and golden agree on
which document types and operations belong to which contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_contracts.conformance.judge.checks import CHECKS
from session_contracts.conformance.judge.golden import GoldenCase, fixture_contracts
from session_contracts.contracts import (
    CONTRACTS,
    contracts_of_doctype,
    contracts_of_operation,
)
from session_contracts.validation.schema_set import default_schema_set

NAMES = {contract.name for contract in CONTRACTS}


def test_every_check_names_a_contract_of_the_table() -> None:
    assert {check.contract for check in CHECKS} - {"all"} <= NAMES


def test_the_reference_claims_every_contract_of_the_table() -> None:
    from session_contracts.conformance.reference.producer import HELLO_CONTRACTS

    assert set(HELLO_CONTRACTS) == NAMES


@pytest.mark.parametrize("doctype", sorted(default_schema_set().document_types))
def test_golden_sends_a_document_fixture_to_the_contracts_certify_draws_it_for(
    doctype: str,
) -> None:
    case = GoldenCase(
        "documents/x", Path("x"), "", (), (), "document.roundtrip", {"doctype": doctype}
    )
    owners = {c.name for c in CONTRACTS if doctype.startswith(c.doctype_prefixes)}
    assert set(fixture_contracts(case)) == (owners or {doctype.partition(".")[0]})


def test_the_journal_events_belong_to_no_contract() -> None:
    # Read by the recap and run records, round-tripped by neither.
    assert contracts_of_doctype("session-event.event") == ("session-event",)


def test_each_operation_of_a_contract_is_its_own() -> None:
    for contract in CONTRACTS:
        for operation in contract.operations:
            assert contracts_of_operation(operation) == (contract.name,)
    assert contracts_of_operation("document.roundtrip") == ()
