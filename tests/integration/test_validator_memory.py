"""An invalid large document is judged in bounded memory.

The fast engine's errors each carry a converted copy of the value they are
about, so a root-level error on a large document used hundreds of times the
document; above 1 MiB the findings come from the reference engine instead,
and they are the same findings.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import session_contracts.validation.validator as validator_module

EXAMPLE = Path(__file__).resolve().parents[2] / "schemas" / "examples"


def _invalid_snapshot(items: int) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EXAMPLE / "session-recap.snapshot.json").read_text())
    document["extensions"] = {"pad": [{"a": index} for index in range(items)]}
    document["zz_unknown"] = 1
    document["turns"][0]["zz_inner"] = True
    return document


def test_large_and_small_invalid_documents_get_the_same_findings(monkeypatch: Any) -> None:
    validator = validator_module.DocumentValidator()
    document = _invalid_snapshot(100)
    monkeypatch.setattr(validator_module, "FAST_FINDINGS_MAX_BYTES", 10**12)
    fast = validator.validate("session-recap.snapshot", document)
    monkeypatch.setattr(validator_module, "FAST_FINDINGS_MAX_BYTES", 0)
    bounded = validator.validate("session-recap.snapshot", document)
    assert {(f.path, f.code) for f in fast} == {(f.path, f.code) for f in bounded}
    assert {f.code for f in fast} == {"unknown_field"}
    assert len(fast) == 2


_MEASURE = """
import json, resource, sys
sys.path.insert(0, {tests!r})
from test_validator_memory import _invalid_snapshot
from session_contracts.validation.validator import DocumentValidator
validator = DocumentValidator()
document = _invalid_snapshot(400_000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
findings = validator.validate("session-recap.snapshot", document)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"codes": sorted({{f.code for f in findings}}), "grew_kib": after - before,
                  "size": len(json.dumps(document))}}))
"""


def test_an_invalid_six_megabyte_document_costs_no_more_than_a_few_copies_of_itself() -> None:
    script = _MEASURE.format(tests=str(Path(__file__).resolve().parent))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    measured = json.loads(done.stdout)
    assert measured["codes"] == ["unknown_field"]
    # The fast engine's errors alone grew the peak by about 370 MiB here (60 times
    # the text); judging must stay within a few times the document itself.
    assert measured["grew_kib"] * 1024 < 8 * measured["size"], measured
