"""Certify a running HTTP recap adapter: ``certify --http URL --journal PATH``.

The adapter under test serves ``GET /sessions/{sessionId}/recap`` from an
SQLite journal (the :class:`SqliteJournal` format).  Certify writes each
generated case's events into that journal, asks the adapter for the case's
query over HTTP, and judges the answer with the very checks that judge
``recap.project`` for stdio producers, against the in-process reference.

The journal is shared and append-only, and generated cases reuse session ids
(``sess-1``).  So every case is rewritten before anyone sees it
(:meth:`HttpTarget.prepare`, applied to the generated trial): its sessions get
a suffix unique to the case and the run.  The journal numbers events per
session, so event ids stay as the case has them.  The reference then projects
exactly what the adapter reads; renaming afterwards is impossible, since
``projectionHash`` and the record hashes bind the session id.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import secrets
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from session_contracts.conformance.judge.budget import BUDGET_FLOOR_SECONDS, TimeBudget
from session_contracts.conformance.judge.certify import (
    DERIVED_BUDGET,
    SILENT,
    CheckResult,
    Progress,
    Trial,
    judge_trial,
    run_check,
)
from session_contracts.conformance.judge.checks import CHECKS, Check
from session_contracts.conformance.judge.expected import reference_answer
from session_contracts.conformance.judge.runner import CaseOutcome, ProducerInfo
from session_contracts.errors import Finding, InvalidDocument, UsageError
from session_contracts.hashes.snapshot import record_hash
from session_contracts.journal import (
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    SqliteJournal,
    unheld_integer,
)
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes
from session_contracts.jsontext.strict import loads_strict
from session_contracts.recap import StoredEventOrder

__all__ = [
    "HTTP_CONTRACTS",
    "HTTP_OPERATIONS",
    "NOT_OVER_HTTP",
    "HttpTarget",
    "certify_http",
    "replay_http",
]

HTTP_OPERATIONS = ("recap.project",)
HTTP_CONTRACTS = ("session-recap",)
NOT_OVER_HTTP = "not reachable over HTTP"
# Checks of recap.project that need the runtime in a given condition (a journal
# that cannot be opened, a runtime refusing reads, damaged rows): a live
# adapter cannot be put in it from outside, so they run through the protocol.
NOT_IMPOSABLE_OVER_HTTP = {
    "recap.unavailable-states": "the runtime conditions it needs (journal unavailable, "
    "admission refused, damaged rows) cannot be imposed on a live adapter; certify the "
    "producer through the protocol for them",
}
MAX_BODY_BYTES = 64 * 1024 * 1024  # the stdio harness's line bound
SERVE_HINT = (
    "start the adapter on the journal first, e.g. "
    "`session-contracts serve --journal {journal} --port 8765`, "
    "then pass --http http://127.0.0.1:8765 --journal {journal}"
)
_SESSION_KEYS = ("sessionId", "session_id")
_FROM_KEYS = ("fromEventId", "from_event_id")
# The suffix prepare() gives a session; a replayed case gets a fresh one instead of two.
_SUFFIX = re.compile(r"~c[0-9a-f]+-[0-9]+\Z")


class _TooLarge(Exception):
    pass


class _NotExpressible(Exception):
    """A case no GET request can carry (our strategies never make one)."""


def _url_error(url: str, message: str) -> UsageError:
    return UsageError(
        [
            Finding(
                "$.http",
                "http_url_invalid",
                f"{url!r}: {message}",
                "pass the adapter's base URL, e.g. http://127.0.0.1:8765 "
                "(the harness appends /sessions/{sessionId}/recap)",
            )
        ]
    )


class HttpTarget:
    """A running HTTP recap adapter and the journal it reads.

    Opening one opens (or creates) the journal for appending; nothing is sent
    until :meth:`check_reachable`.  :meth:`prepare` and :meth:`run` are the
    trial rewrite and the runner that :func:`certify_http` hands the checks.
    """

    def __init__(
        self,
        url: str,
        journal: str | Path,
        *,
        timeout: float = BUDGET_FLOOR_SECONDS,
        budget: TimeBudget = DERIVED_BUDGET,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _url_error(url, "not an http:// or https:// URL")
        if parts.query or parts.fragment:
            raise _url_error(url, "a base URL has no query or fragment")
        if parts.username is not None or parts.password is not None:
            # Credentials would be sent nowhere and repeated in every report.
            raise _url_error(url, "credentials in the URL are not supported")
        try:
            port = parts.port
        except ValueError:
            raise _url_error(url, "the port is not a number from 0 to 65535") from None
        self.url = url.rstrip("/")
        # ``timeout`` bounds the probe and the journal's seeding; each case's GET has its
        # time budget (docs/checks.md, "Time budgets").
        self.timeout = timeout
        self.budget = budget
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, port
        self._prefix = parts.path.rstrip("/")
        self.journal_path = Path(journal)
        self._journal = _open_journal(self.journal_path)
        self._connection: http.client.HTTPConnection | None = None
        self._cases = 0
        # Unique to this run: a journal may hold the sessions of earlier runs.
        self._run_tag = secrets.token_hex(4)
        self._seeded: set[bytes] = set()
        self._seq = 0
        self.reconnects = 0
        self.info = ProducerInfo(
            {
                "name": f"HTTP recap adapter at {self.url}"[:256],
                "version": "unknown",
                "language": "http",
            },
            HTTP_CONTRACTS,
            HTTP_OPERATIONS,
        )

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._disconnect()
        self._journal.close()

    # -- the cases ---------------------------------------------------------------------------
    def prepare(self, trial: Trial) -> Trial:
        """``trial`` with sessions of its own: each session id gets a suffix no other
        case of any run has (the journal numbers events per session, so ids stay)."""
        if trial.operation != "recap.project":
            return trial
        raw_events = trial.input.get("events")
        events = list(raw_events) if isinstance(raw_events, list) else []
        raw_query = trial.input.get("query")
        query = dict(raw_query) if isinstance(raw_query, Mapping) else {}
        self._cases += 1
        tag = f"~c{self._run_tag}-{self._cases}"

        def rename(session: Any) -> Any:
            return _SUFFIX.sub("", session) + tag if isinstance(session, str) else session

        def move(event: Any) -> Any:
            if not isinstance(event, Mapping):
                return event
            return dict(event, sessionId=rename(event.get("sessionId")))

        def move_stored(event: Any) -> Any:
            if not isinstance(event, Mapping):
                return event
            return dict(event, session_id=rename(event.get("session_id")))

        for key in _SESSION_KEYS:
            if key in query:
                query[key] = rename(query[key])
        rewritten = dict(trial.input)
        if isinstance(raw_events, list):
            rewritten["events"] = [move(event) for event in events]
        raw_stored = trial.input.get("storedEvents")
        if isinstance(raw_stored, list):
            rewritten["storedEvents"] = [move_stored(event) for event in raw_stored]
        if isinstance(raw_query, Mapping):
            rewritten["query"] = query
        return Trial(trial.operation, rewritten)

    def run(self, trial: Trial) -> CaseOutcome:
        """Seed the trial's events (once), GET its query, classify the answer."""
        self._seq += 1
        seq = self._seq
        if trial.operation != "recap.project":
            return CaseOutcome(seq, "skipped", reason=NOT_OVER_HTTP)
        started = time.perf_counter()
        if "storedEvents" in trial.input:
            refused = self._seed_stored(seq, trial.input["storedEvents"])
        else:
            refused = self._seed(seq, trial.input.get("events") or [])
        if refused is not None:
            return refused
        try:
            target = self._request_target(trial.input.get("query"))
        except _NotExpressible as exc:
            return CaseOutcome(seq, "errored", error_code="case_not_expressible", message=str(exc))
        reference = reference_answer(trial.operation, dict(trial.input))
        seconds = self.budget.seconds(reference)
        try:
            status, reason, _, body = self._exchange(target, seconds)
        except TimeoutError:
            message = f"no answer within {seconds:.1f} s ({self.budget.explain(reference)})"
            return self._broken(seq, "timeout", message, started)
        except _TooLarge:
            message = f"the answer exceeds {MAX_BODY_BYTES:,} bytes"
            return self._broken(seq, "response_too_large", message, started)
        except (http.client.HTTPException, OSError) as exc:
            code = "http_unreachable" if isinstance(exc, OSError) else "invalid_http"
            return self._broken(seq, code, f"GET {self._show(target)}: {exc!r}", started)
        seconds = time.perf_counter() - started
        if status == 200:
            try:
                output = loads_strict(body, max_bytes=MAX_BODY_BYTES)
            except InvalidDocument as exc:
                message = f"the 200 answer is not strict JSON: {exc.findings[0].message}"
                return CaseOutcome(
                    seq, "errored", error_code="invalid_json", message=message, seconds=seconds
                )
            return CaseOutcome(seq, "result", output=output, seconds=seconds)
        if status == 400:
            return CaseOutcome(seq, "rejected", rejection=_rejection(body), seconds=seconds)
        snippet = body[:200].decode("utf-8", "replace")
        return CaseOutcome(
            seq,
            "errored",
            error_code="http_status",
            message=f"HTTP {status} {reason} for GET {self._show(target)}: {snippet}",
            seconds=seconds,
        )

    def _broken(self, seq: int, code: str, message: str, started: float) -> CaseOutcome:
        # The connection's state is unknown after a fault: the next case starts afresh.
        self._disconnect()
        seconds = time.perf_counter() - started
        return CaseOutcome(seq, "errored", error_code=code, message=message, seconds=seconds)

    def _seed(self, seq: int, raw_events: Sequence[Any]) -> CaseOutcome | None:
        """Append the events unless this very list is in the journal already (the
        determinism and alias checks send one case twice)."""
        key = hashlib.sha256(canonical_bytes(list(raw_events))).digest()
        if key in self._seeded or not raw_events:
            return None
        events: list[SessionEvent] = []
        findings: list[dict[str, str]] = []
        for index, raw_event in enumerate(raw_events):
            try:
                events.append(SessionEvent.from_json(raw_event))
            except InvalidDocument as exc:
                findings.extend(
                    {"code": f.code, "path": f"$.events[{index}]{f.path[1:]}", "message": f.message}
                    for f in exc.findings
                )
        if findings:
            # The journal refuses such events before any adapter could read them,
            # exactly as the reference producer does: every finding, the first on top.
            findings.sort(key=lambda f: (f["path"], f["code"]))
            rejection = {**findings[0], "findings": findings}
            return CaseOutcome(seq, "rejected", rejection=rejection)
        try:
            self._journal.append(events)
        except JournalWriteError as exc:
            message = f"cannot append the case's events to {self.journal_path}: " + "; ".join(
                f.message for f in exc.findings[:3]
            )
            return CaseOutcome(seq, "errored", error_code="journal_write_failed", message=message)
        self._seeded.add(key)
        return None

    def _seed_stored(self, seq: int, stored_events: Sequence[Any]) -> CaseOutcome | None:
        """Append Harn's stored events as they are (once), as a Harn store export is
        imported (``append_stored``); only cases ``expressible_over_http`` admits come here."""
        key = hashlib.sha256(harn_canonical_bytes(list(stored_events))).digest()
        if key in self._seeded or not stored_events:
            return None
        try:
            self._journal.append_stored(stored_events)
        except JournalWriteError as exc:
            message = f"cannot append the case's stored events to {self.journal_path}: " + (
                "; ".join(f.message for f in exc.findings[:3])
            )
            return CaseOutcome(seq, "errored", error_code="journal_write_failed", message=message)
        self._seeded.add(key)
        return None

    def _request_target(self, query: Any) -> str:
        """The request path and query string of a query (_NotExpressible if none)."""
        if not isinstance(query, Mapping):
            raise _NotExpressible("the case has no query object")
        session_key = next((k for k in _SESSION_KEYS if isinstance(query.get(k), str)), None)
        if session_key is None:
            raise _NotExpressible("the query has no session id to put in the path")
        pairs: list[tuple[str, str]] = []
        for key, value in query.items():
            if key == session_key:
                continue  # the path carries it; another spelling goes along for the server to judge
            if isinstance(value, bool) or not isinstance(value, int | str):
                kind = type(value).__name__
                raise _NotExpressible(f"$.query.{key} is a {kind}: a URL parameter cannot carry it")
            pairs.append((key, str(value)))
        path = f"{self._prefix}/sessions/{urllib.parse.quote(query[session_key], safe='')}/recap"
        if pairs:
            path += "?" + urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)
        return path

    def _show(self, target: str) -> str:
        return f"{self.url}{target.removeprefix(self._prefix)}"

    # -- HTTP --------------------------------------------------------------------------------
    def _connect(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        self._connection = kind(self._host, self._port, timeout=self.timeout)
        return self._connection

    def _disconnect(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _exchange(self, target: str, timeout: float | None = None) -> tuple[int, str, str, bytes]:
        """One GET on the kept-alive connection, each wait within ``timeout`` seconds (the
        target's own when None): status, reason, server header, body."""
        for attempt in (1, 2):
            reused = self._connection is not None
            connection = self._connection or self._connect()
            connection.timeout = self.timeout if timeout is None else timeout
            if connection.sock is not None:
                connection.sock.settimeout(connection.timeout)
            try:
                connection.request("GET", target, headers={"accept": "application/json"})
                response = connection.getresponse()
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                self._disconnect()
                # A kept-alive connection the server has since closed: a GET is safe
                # to send once more on a fresh one.  A fresh one failing is the answer.
                if not reused or attempt == 2:
                    raise
                self.reconnects += 1
                continue
            except BaseException:
                self._disconnect()
                raise
            try:
                body = response.read(MAX_BODY_BYTES + 1)
            except BaseException:
                self._disconnect()
                raise
            if len(body) > MAX_BODY_BYTES:
                self._disconnect()
                raise _TooLarge
            if response.will_close or not response.isclosed():
                self._disconnect()
            return response.status, response.reason, response.getheader("server") or "", body
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the start -------------------------------------------------------------------------
    def check_reachable(self) -> ProducerInfo:
        """One request before any case: a probe event in a session of its own, asked
        for over HTTP.  Raise UsageError if the adapter cannot be reached, or does
        not read the journal certify writes."""
        hint = SERVE_HINT.format(journal=self.journal_path)
        # A turn id of its own: an adapter reading another journal (where an earlier
        # run may have left a probe session of the same name) cannot answer with it.
        turn = f"certify-probe-{secrets.token_hex(8)}"
        probe = self.prepare(
            Trial(
                "recap.project",
                {
                    "events": [
                        {
                            "id": 1,
                            "sessionId": "certify-probe",
                            "runId": None,
                            "turnId": turn,
                            "iteration": None,
                            "executionId": None,
                            "topic": "session",
                            "kind": "message",
                            "recordedAtUnixMs": int(time.time() * 1000),
                            "payload": {
                                "role": "user",
                                "visibility": None,
                                "text": "session-contracts certify probe",
                            },
                        }
                    ],
                    "query": {"sessionId": "certify-probe", "limit": 1},
                },
            )
        )
        refused = self._seed(0, probe.input["events"])
        if refused is not None:
            message = refused.message or str(dict(refused.rejection or {}))
            raise UsageError([Finding("$.journal", "journal_write_failed", message, hint)])
        target = self._request_target(probe.input["query"])
        try:
            status, _, server, body = self._exchange(target)
        except TimeoutError:
            problem = f"no answer within {self.timeout:g} s"
        except _TooLarge:
            problem = f"the answer exceeds {MAX_BODY_BYTES:,} bytes"
        except (http.client.HTTPException, OSError) as exc:
            problem = str(exc) or type(exc).__name__
        else:
            problem = ""
        if problem:
            raise UsageError(
                [
                    Finding(
                        "$.http",
                        "http_unreachable",
                        f"cannot reach the recap adapter at {self.url}: {problem}",
                        hint,
                    )
                ]
            )
        (event,) = probe.input["events"]
        self._refuse_unserved(status, body, (turn, record_hash(event)))
        if server:
            self.info = ProducerInfo(
                {**self.info.implementation, "version": server[:256]},
                HTTP_CONTRACTS,
                HTTP_OPERATIONS,
            )
        return self.info

    def _refuse_unserved(self, status: int, body: bytes, evidence: tuple[str, str]) -> None:
        """The probe's session is in the journal: an adapter that finds no journal, or
        not the session, or answers without the probe's turn id and record hash (either
        one will do: a faulty adapter may lose one), reads another file (or none)."""
        journal = self.journal_path
        if status == 404:
            raise UsageError(
                [
                    Finding(
                        "$.http",
                        "http_not_found",
                        f"{self.url}/sessions/{{sessionId}}/recap answered 404 for a session "
                        f"certify has just written to {journal}",
                        "pass the adapter's base URL (without /sessions/...), and serve the "
                        "journal certify writes: " + SERVE_HINT.format(journal=journal),
                    )
                ]
            )
        if status != 200:
            return  # the checks will report it, case by case
        try:
            envelope = loads_strict(body, max_bytes=MAX_BODY_BYTES)
        except InvalidDocument:
            return
        if not isinstance(envelope, dict):
            return
        state, reason = envelope.get("state"), envelope.get("reason")
        if state == "available" and not any(token.encode() in body for token in evidence):
            answered = "an envelope without the event"
        elif state == "unavailable" and reason in ("journal_unavailable", "session_missing"):
            answered = str(reason)
        else:
            return  # served, or broken in a way the checks will report case by case
        raise UsageError(
            [
                Finding(
                    "$.journal",
                    "journal_not_served",
                    f"the adapter at {self.url} answered {answered} for a session certify "
                    f"has just written to {journal}: it reads another journal",
                    SERVE_HINT.format(journal=journal),
                )
            ]
        )


def _is_uint(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _rejection(body: bytes) -> dict[str, Any]:
    """A 400's ``{"error": {code, path, message, findings?}}``, its paths rebased into
    the case input (``$.limit`` is the case's ``$.query.limit``), as the stdio protocol
    has it; the judge then holds it to the rejection vocabulary (a code outside it, such
    as the ``http_400`` of a body without one, is ``rejection_code_unknown``)."""
    try:
        error = loads_strict(body, max_bytes=MAX_BODY_BYTES).get("error")
    except (InvalidDocument, AttributeError):
        error = None
    if not isinstance(error, dict):
        error = {}
    code = error.get("code") if isinstance(error.get("code"), str) else "http_400"
    path = error.get("path")
    where = "$.query" + path[1:] if isinstance(path, str) and path.startswith("$") else "$.query"
    message = error.get("message")
    if not isinstance(message, str):
        message = body[:200].decode("utf-8", "replace")
    rejection: dict[str, Any] = {"code": code, "path": where, "message": message}
    listed = error.get("findings")
    if isinstance(listed, list):
        # An adapter may list every finding, each rebased like the first.
        rejection["findings"] = [
            {
                "code": item.get("code"),
                "path": "$.query" + item["path"][1:]
                if isinstance(item.get("path"), str) and item["path"].startswith("$")
                else item.get("path"),
            }
            for item in listed
            if isinstance(item, dict)
        ]
    return rejection


def _open_journal(path: Path) -> SqliteJournal:
    try:
        return SqliteJournal.open(path, create=True)
    except (JournalUnavailable, OSError) as exc:
        detail = (
            exc.findings[0].message if isinstance(exc, JournalUnavailable) else str(exc.strerror)
        )
        raise UsageError(
            [
                Finding(
                    "$.journal",
                    "journal_unavailable",
                    f"cannot open or create the journal {path}: {detail}",
                    "pass the path of the SQLite journal the adapter reads (created if "
                    "missing); its folder must exist and be writable",
                )
            ]
        ) from None


# Case members an HTTP adapter over a journal cannot be given: a runtime condition
# (docs/protocol.md, recap.project).
_NOT_OVER_HTTP_MEMBERS = ("journal", "admission", "damagedEventIds")


def expressible_over_http(trial: Trial) -> bool:
    """Whether a recap case can be sent as events appended to the journal and a GET: no
    runtime condition; stored events only when the journal can hold them as given (each
    valid, ids increasing within a session, every integer one Harn's store holds, and no
    journal-model events beside them), since the journal refuses the others before any
    adapter could read them."""
    if any(member in trial.input for member in _NOT_OVER_HTTP_MEMBERS):
        return False
    stored = trial.input.get("storedEvents")
    if stored is None:
        return True
    if not isinstance(stored, list) or "events" in trial.input:
        return False
    order = StoredEventOrder()
    return all(not order.findings(event) and unheld_integer(event) is None for event in stored)


def certify_http(
    target: HttpTarget,
    *,
    checks: Sequence[Check] = CHECKS,
    examples: int = 25,
    seed: int = 0,
    failures_dir: Path = Path(".session-contracts/failures"),
    progress: Progress = SILENT,
) -> list[CheckResult]:
    """Every check of ``recap.project`` (and the cross-cutting ones) against ``target``;
    the others are skipped as not reachable over HTTP."""
    results = []
    for check in checks:
        if check.operation != "*" and check.operation not in HTTP_OPERATIONS:
            result = CheckResult(check, "skipped", 0, NOT_OVER_HTTP, applicable=False)
            progress.check_finished(check, result)
        elif check.id in NOT_IMPOSABLE_OVER_HTTP:
            result = CheckResult(
                check, "skipped", 0, NOT_IMPOSABLE_OVER_HTTP[check.id], applicable=False
            )
            progress.check_finished(check, result)
        else:
            result = run_check(
                check,
                target.run,
                contracts=HTTP_CONTRACTS,
                operations=HTTP_OPERATIONS,
                examples=examples,
                seed=seed,
                failures_dir=failures_dir,
                prepare=target.prepare,
                expressible=expressible_over_http,
                golden=False,
                progress=progress,
            )
        results.append(result)
    return results


def replay_http(target: HttpTarget, check: Check, trial: Trial) -> CheckResult:
    """Judge one saved case again, in sessions of its own (the saved ones are taken)."""
    if check.operation != "*" and check.operation not in HTTP_OPERATIONS:
        return CheckResult(check, "skipped", 0, NOT_OVER_HTTP, trial, applicable=False)
    if check.id in NOT_IMPOSABLE_OVER_HTTP:
        reason = NOT_IMPOSABLE_OVER_HTTP[check.id]
        return CheckResult(check, "skipped", 0, reason, trial, applicable=False)
    if trial.operation not in HTTP_OPERATIONS:
        return CheckResult(
            check, "skipped", 0, f"{trial.operation}: {NOT_OVER_HTTP}", trial, applicable=False
        )
    return judge_trial(target.run, check, target.prepare(trial))
