"""The harness side of the producer protocol: run any producer, never hang.

Every read has a deadline; stdout is read by a thread that enforces a line
size bound; stderr is drained into a bounded tail so a flooding producer can
neither block nor exhaust memory; a producer that crashes or hangs is killed
with every process it started and started again for the next case.

Ending every descendant: the producer runs in its own process group, and on
Linux every process that descends from it is found through ``/proc`` -- by
its parent links, and by a token in the environment each producer is started
with, which survives ``setsid()``, a new process group and the death of the
parent in between -- and killed. The limits: a descendant that both leaves
the tree (its parent exited) and clears its environment escapes; on other
systems only the process group is ended.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from session_contracts.errors import (
    EXIT_USAGE,
    Finding,
    InvalidDocument,
    SessionContractsError,
    UsageError,
)
from session_contracts.jsontext.strict import depth_exceeds, loads_strict
from session_contracts.jsontext.wire import dumps_wire, loads_wire
from session_contracts.validation.validator import default_validator

__all__ = [
    "CaseOutcome",
    "HarnessError",
    "ProducerInfo",
    "ProducerProcess",
    "require_producer_command",
]

_EOF = object()
_TOO_LONG = object()
STDERR_TAIL_BYTES = 64 * 1024
#: At a case's deadline, a producer whose CPU time grew by at least this share of the
#: wall time since the last look is still computing (a loaded machine's share of a core).
COMPUTING_SHARE = 0.05
#: A computing producer gets its budget in CPU seconds, but never more than this many
#: times the budget in wall time.
MAX_WALL_FACTOR = 10.0
#: How often a computing producer's CPU time is looked at past its deadline.
LOOK_AGAIN_SECONDS = 2.0
_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: An answer nesting deeper than this is not judged: no answer a case asks for comes near
#: it (documents nest 64 levels at most), and a deeper one would outgrow the JSON writers.
MAX_ANSWER_DEPTH = 200
#: The environment variable that marks every process a producer starts.
TOKEN_VARIABLE = "SESSION_CONTRACTS_PRODUCER_TOKEN"
#: Restarts after a fault, per run; past it the remaining cases are errored.
MAX_RESTARTS = 50
#: A restart gets this many times the first start's duration (at least
#: RESTART_TIMEOUT_FLOOR s, at most the start timeout) to answer ``start``.
RESTART_TIMEOUT_FACTOR = 4.0
RESTART_TIMEOUT_FLOOR = 10.0


def _process_table() -> dict[int, int]:
    """Every visible process id and its parent's, from /proc (empty elsewhere)."""
    table: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name (in parentheses) may hold spaces: the fields follow its last ")".
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            table[int(entry)] = int(fields[1])
    return table


def _waited(wall: float, budget: float) -> str:
    """How long past its budget a case was waited for, while the producer computed."""
    return f" of CPU time ({wall:.1f} s of wall time)" if wall > budget + 1 else ""


def _cpu_ticks(pid: int) -> int | None:
    """utime + stime + cutime + cstime of ``pid`` from /proc (None when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        # Fields 14-17 of proc(5), counted from the state (field 3) here.
        return sum(int(field) for field in fields[11:15])
    except (ValueError, IndexError):
        return None


def _carries_token(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read().split(b"\0")
    except OSError:
        return False


def descendants(root: int, token: str | None = None) -> set[int]:
    """``root``'s descendants that are still alive, and every process carrying ``token``."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, parent in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    if token is not None:
        marker = f"{TOKEN_VARIABLE}={token}".encode()
        me = os.getpid()
        found.update(pid for pid in table if pid != me and _carries_token(pid, marker))
    found.discard(root)
    return found


#: Whether this kernel lists a task's children (/proc/PID/task/TID/children): then a
#: producer's tree is found by reading its own processes, not every process's.
_LISTS_CHILDREN = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _tree(root: int) -> set[int]:
    """``root``'s live descendants by their parent links: each process's children as
    its threads list them where the kernel can (a few reads for a producer of one
    process), else from the whole process table (:func:`descendants` without a token)."""
    if not _LISTS_CHILDREN:
        return descendants(root)
    found: set[int] = set()
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # it ended meanwhile
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                    listed = handle.read().split()
            except OSError:
                continue
            for child in map(int, listed):
                if child not in found and child != root:
                    found.add(child)
                    stack.append(child)
    return found


def _kill_descendants(root: int, token: str | None) -> None:
    """SIGKILL every descendant of ``root`` until none is left (they may fork meanwhile)."""
    for _ in range(20):
        pids = descendants(root, token)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        # Reap the ones that are our own children (adopted or not); others are reaped by theirs.
        for pid in pids:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(0.01)


def require_producer_command(command: str | None) -> None:
    """Refuse ``--producer ''`` (or blanks): only its absence selects the reference producer.

    An unset variable in a CI job (``--producer "$PRODUCER"``) must not quietly
    certify our own reference instead of the user's producer.
    """
    if command is not None and command.strip():
        try:
            shlex.split(command)
        except ValueError as exc:
            raise UsageError(
                [
                    Finding(
                        "$.producer",
                        "producer_command_invalid",
                        f"--producer is not a valid shell command line: {exc}",
                        "quote it as a shell would, e.g. --producer './bin/producer --protocol'",
                    )
                ]
            ) from None
    if command is not None and not command.strip():
        raise UsageError(
            [
                Finding(
                    "$.producer",
                    "producer_empty",
                    "--producer was given an empty command",
                    "pass the command that starts your producer (is a CI variable unset?), or "
                    "leave --producer out to run the built-in reference producer",
                )
            ]
        )


class HarnessError(SessionContractsError):
    """The producer could not be run at all (exit status 2)."""

    exit_status = EXIT_USAGE


@dataclass(frozen=True, slots=True)
class ProducerInfo:
    """What the producer said of itself in answer to ``start``."""

    implementation: Mapping[str, Any]
    contracts: tuple[str, ...]
    operations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """The producer's answer to one case, or what went wrong getting it.

    ``outcome`` is result, rejected, skipped, or errored; an errored outcome
    says in ``error_code`` whether the producer reported its own error
    (``producer_error``) or the harness saw it break (``producer_crashed``,
    ``timeout``, ``invalid_json``, ``line_too_long``, ``wrong_seq``,
    ``invalid_response``) or gave it up (``producer_restart_failed``,
    ``producer_gave_up``).
    """

    seq: int
    outcome: str
    output: Any = None
    rejection: Mapping[str, Any] | None = None
    reason: str = ""
    error_code: str = ""
    message: str = ""
    seconds: float = 0.0
    stderr_tail: str = field(default="", compare=False)


class _LineReader:
    """Lines from a pipe, read in the calling thread with select: no hand-off
    between threads on the hot path, a deadline on every wait, a size bound."""

    def __init__(self, fd: int, max_line_bytes: int) -> None:
        self.fd, self.max_line_bytes = fd, max_line_bytes
        self.buffer = bytearray()
        self.eof = False

    def read_line(self, deadline: float) -> object:
        """The next line, or _EOF, _TOO_LONG, or "timeout" at ``deadline`` (monotonic)."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return _TOO_LONG if len(line) > self.max_line_bytes else line
            if len(self.buffer) > self.max_line_bytes:
                self.buffer.clear()
                return _TOO_LONG
            if self.eof:
                return _EOF
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return "timeout"
            try:
                chunk = os.read(self.fd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
            self.buffer += chunk


class _TailReader(threading.Thread):
    """Keep only the last bytes of a pipe (stderr), however much is written."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.tail = bytearray()
        self.lock = threading.Lock()

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with self.lock:
                self.tail += chunk
                del self.tail[: max(0, len(self.tail) - STDERR_TAIL_BYTES)]

    def text(self) -> str:
        with self.lock:
            return self.tail.decode("utf-8", "replace")


class ProducerProcess:
    """One producer command, started on demand and restarted after it breaks."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 10.0,
        start_timeout: float = 30.0,
        max_line_bytes: int = 64 * 1024 * 1024,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise HarnessError([Finding("$", "producer_command_empty", "no producer command", "")])
        self.timeout, self.start_timeout = timeout, start_timeout
        self.max_line_bytes = max_line_bytes
        self.env = dict(env) if env is not None else None
        self.info: ProducerInfo | None = None
        self.restarts = 0
        self.max_restarts = MAX_RESTARTS
        #: Why the harness stopped restarting the producer (then every case is errored).
        self.gave_up: str = ""
        self._first_start_seconds: float | None = None
        self._token: str | None = None
        #: The processes that left the producer's tree but carry its token, as last seen.
        self._escaped: set[int] = set()
        #: The seconds the last answer was waited for at most (its budget).
        self.budget = timeout
        #: What the strict reader said of the last answer that was not JSON.
        self.last_json_problem = ""
        # The producer's CPU time and the clock at the last look past a case's deadline.
        self._cpu_at_last_look = 0.0
        self._last_look = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._stdout: _LineReader | None = None
        self._stderr: _TailReader | None = None

    # -- life cycle -----------------------------------------------------------
    def __enter__(self) -> ProducerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float | None = None) -> ProducerInfo:
        """Spawn the producer and shake hands; raise HarnessError if it cannot."""
        timeout = self.start_timeout if timeout is None else timeout
        began = time.monotonic()
        self._spawn(timeout)
        answer = self._read(timeout)
        if not isinstance(answer, dict):
            tail = self.stderr_tail()
            self._kill()
            said = {
                "timeout": f"no answer within {timeout:g} s",
                "producer_crashed": "it exited",
                "line_too_long": f"its answer exceeds {self.max_line_bytes:,} bytes",
                "invalid_json": "its answer is not JSON",
            }.get(str(answer), str(answer))
            raise HarnessError(
                [
                    Finding(
                        "$",
                        "producer_start_failed",
                        f"{self.argv[0]} did not answer start: {said}"
                        + (f"; its stderr ends with: {tail[-500:]}" if tail else ""),
                        "run the producer command by hand and send it "
                        '{"cmd": "start", "protocol_version": 1}',
                    )
                ]
            )
        findings = default_validator().validate("producer-protocol.started", answer)
        if findings:
            self._kill()
            raise HarnessError(
                [
                    Finding(
                        f.path,
                        "producer_start_invalid",
                        f"the producer's answer to start breaks the protocol: {f.message}",
                        f.hint,
                    )
                    for f in findings
                ]
            )
        if self._first_start_seconds is None:
            self._first_start_seconds = time.monotonic() - began
        self.info = ProducerInfo(
            answer["implementation"], tuple(answer["contracts"]), tuple(answer["operations"])
        )
        return self.info

    def restart_timeout(self) -> float:
        """A restart's deadline for ``start``: a producer that started once starts as fast again."""
        first = self._first_start_seconds
        if first is None:
            return self.start_timeout
        return min(self.start_timeout, max(RESTART_TIMEOUT_FLOOR, RESTART_TIMEOUT_FACTOR * first))

    def _spawn(self, timeout: float) -> None:
        self._token = uuid.uuid4().hex
        self._escaped = set()
        env = dict(os.environ if self.env is None else self.env)
        env[TOKEN_VARIABLE] = self._token
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,  # its own process group: we can end all of it
            )
        except OSError as exc:
            raise HarnessError(
                [
                    Finding(
                        "$",
                        "producer_not_started",
                        f"cannot start {self.argv[0]!r}: {exc.strerror or exc}",
                        "check the --producer command and that it is executable",
                    )
                ]
            ) from None
        assert self._process.stdout is not None
        assert self._process.stderr is not None
        self._stdout = _LineReader(self._process.stdout.fileno(), self.max_line_bytes)
        self._stderr = _TailReader(self._process.stderr.fileno())
        self._stderr.start()
        assert self._process.stdin is not None
        # Non-blocking writes: a producer that stops reading must not block us.
        os.set_blocking(self._process.stdin.fileno(), False)
        self._send({"cmd": "start", "protocol_version": 1}, timeout)

    def stop(self) -> None:
        """Ask the producer to stop, then end its whole process group."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self._send({"cmd": "stop"}, 1.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=2.0)
        self._kill()

    def _kill(self) -> None:
        process = self._process
        if process is None:
            return
        # Its descendants first, while their parent links still lead to it.
        _kill_descendants(process.pid, self._token)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5.0)
        _kill_descendants(process.pid, self._token)
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        self._process = None

    def stderr_tail(self) -> str:
        return self._stderr.text() if self._stderr is not None else ""

    # -- messages -------------------------------------------------------------
    def _send(self, message: Mapping[str, Any], timeout: float) -> bool:
        process = self._process
        if process is None or process.stdin is None:
            return False
        view = memoryview(dumps_wire(message) + b"\n")
        fd = process.stdin.fileno()
        deadline = time.monotonic() + timeout
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                written = 0
            except OSError:  # a closed pipe: the producer died
                return False
            view = view[written:]
            if view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                select.select([], [fd], [], remaining)
        return True

    def measured_processes(self, *, every_process: bool = True) -> set[int]:
        """The producer's processes whose CPU time is its own: its live descendants, and
        the processes that left its tree but carry its token.

        With ``every_process`` every process on the machine is looked at for the token
        (milliseconds with a hundred processes); without it, the producer's tree is
        read from its own processes' child lists and the escaped processes the last
        full look found are added (microseconds): the measure every case takes at its
        start. A process that escaped since that last look is found at the deadline,
        and its CPU time then counts as the case's (a stricter measure, never a laxer)."""
        process = self._process
        if process is None:
            return set()
        if every_process:
            found = descendants(process.pid, self._token)
            self._escaped = found - _tree(process.pid)
            return found
        marker = f"{TOKEN_VARIABLE}={self._token}".encode()
        found = _tree(process.pid)
        found.update(pid for pid in self._escaped if _carries_token(pid, marker))
        return found

    def cpu_seconds(self, *, every_process: bool = True) -> float | None:
        """The CPU seconds the producer and every process it started have used so far
        (finished children included), or None where /proc cannot tell;
        ``every_process`` as for :meth:`measured_processes`."""
        process = self._process
        if process is None:
            return None
        total = 0.0
        for pid in (process.pid, *self.measured_processes(every_process=every_process)):
            used = _cpu_ticks(pid)
            if used is None and pid == process.pid:
                return None
            total += used or 0
        return total / _TICKS_PER_SECOND

    def _still_computing(self, budget: float, began: float, cpu_at_start: float) -> float:
        """At a case's wall deadline: the seconds more to wait, 0 to time out now.

        A loaded machine gives a producer fewer CPU seconds per second: a producer that
        is still computing (its CPU time grew in the last stretch) gets the rest of its
        budget in CPU time, up to ``MAX_WALL_FACTOR`` times the budget in wall time.
        One that waits (a hang, a lost line) is timed out at the deadline as before.
        """
        now = time.monotonic()
        cpu = self.cpu_seconds()
        if cpu is None:
            return 0.0
        used = cpu - cpu_at_start
        computing = cpu - self._cpu_at_last_look > COMPUTING_SHARE * (now - self._last_look)
        self._cpu_at_last_look, self._last_look = cpu, now
        left_in_wall = budget * MAX_WALL_FACTOR - (now - began)
        if used >= budget or left_in_wall <= 0 or not computing:
            return 0.0
        # Look again soon: the producer's share of the machine may change.
        return min(budget - used, left_in_wall, LOOK_AGAIN_SECONDS)

    def _read(
        self,
        timeout: float,
        *,
        while_computing: bool = False,
        full_budget: Callable[[], float] | None = None,
    ) -> object:
        """The next answer within ``timeout`` seconds; with ``while_computing``, the
        timeout is the producer's CPU time where it can be measured (see
        :meth:`_still_computing`). ``full_budget``, when given, is asked once, at
        ``timeout``, for the case's whole budget (at least ``timeout``), which the
        wait then runs to. The budget the wait ran to is kept in ``self.budget``."""
        assert self._stdout is not None
        began = time.monotonic()
        cpu_at_start = self.cpu_seconds(every_process=False) if while_computing else None
        self._cpu_at_last_look, self._last_look = cpu_at_start or 0.0, began
        deadline = began + timeout
        while True:
            line = self._stdout.read_line(deadline)
            if line != "timeout":
                break
            if full_budget is not None:
                timeout = max(timeout, full_budget())
                full_budget = None
                deadline = began + timeout
                if deadline > time.monotonic():
                    continue
            if cpu_at_start is None:
                break
            extension = self._still_computing(timeout, began, cpu_at_start)
            if extension <= 0:
                break
            deadline = time.monotonic() + extension
        self.budget = timeout
        if line is _EOF:
            return "producer_crashed"
        if line is _TOO_LONG:
            return "line_too_long"
        if isinstance(line, str):
            return line
        try:
            # Integers of any size stay exact (session_contracts/jsontext/wire.py).
            value = loads_wire(line)  # type: ignore[arg-type]
        except ValueError:
            pass
        else:
            if depth_exceeds(value, MAX_ANSWER_DEPTH):
                self.last_json_problem = f"it nests deeper than {MAX_ANSWER_DEPTH} levels"
                return "invalid_json"
            return value
        # Not JSON for the fast reader: the strict reader says what is wrong.
        try:
            return loads_strict(line, max_bytes=self.max_line_bytes)  # type: ignore[arg-type]
        except InvalidDocument as exc:
            self.last_json_problem = f"it is not JSON: {exc.findings[0].message}"
            return "invalid_json"

    def run(
        self,
        seq: int,
        case: Mapping[str, Any],
        timeout: float | None = None,
        *,
        full_budget: Callable[[], float] | None = None,
    ) -> CaseOutcome:
        """Send one case and classify the answer within ``timeout`` seconds (the
        producer's default when None); never raises for producer faults.

        ``full_budget``, when given, says the case's whole budget, asked only when the
        producer has not answered within ``timeout`` (a budget that costs something to
        know, the reference's time for the case, is then paid for only by a slow case);
        the answer is then waited for until the greater of the two."""
        timeout = self.timeout if timeout is None else timeout
        if self.gave_up:
            return CaseOutcome(seq, "errored", error_code="producer_gave_up", message=self.gave_up)
        if self._process is None or self._process.poll() is not None:
            self._kill()
            if self.restarts >= self.max_restarts:
                self.gave_up = (
                    f"the producer broke {self.restarts + 1} times; the harness restarts it "
                    f"at most {self.max_restarts} times a run"
                )
                return CaseOutcome(
                    seq, "errored", error_code="producer_gave_up", message=self.gave_up
                )
            self.restarts += 1
            try:
                self.start(self.restart_timeout())
            except HarnessError as failed:
                # Never again: a producer that cannot restart would cost a start
                # timeout per remaining case; they are all errored with this reason.
                detail = failed.findings[0].message if failed.findings else "no detail"
                self.gave_up = f"the producer could not be restarted after a fault: {detail}"
                return CaseOutcome(
                    seq,
                    "errored",
                    error_code="producer_restart_failed",
                    message=self.gave_up,
                    stderr_tail=self.stderr_tail()[-2000:],
                )
        started = time.perf_counter()
        if not self._send({"cmd": "run", "seq": seq, "case": dict(case)}, timeout):
            return self._broken(seq, "producer_crashed", "the producer stopped reading", started)
        answer = self._read(timeout, while_computing=True, full_budget=full_budget)
        if isinstance(answer, str):
            messages = {
                "timeout": f"no answer within {self.budget:.1f} s"
                + _waited(time.perf_counter() - started, self.budget),
                "producer_crashed": "the producer exited before answering",
                "line_too_long": f"the answer exceeds {self.max_line_bytes:,} bytes",
                "invalid_json": f"the answer cannot be judged: {self.last_json_problem}",
            }
            return self._broken(seq, answer, messages[answer], started)
        findings = default_validator().validate("producer-protocol.response", answer)
        if findings:
            detail = "; ".join(f"{f.path}: {f.message}" for f in findings[:3])
            return self._broken(
                seq, "invalid_response", f"the answer breaks the protocol: {detail}", started
            )
        assert isinstance(answer, dict)
        if answer["seq"] != seq:
            return self._broken(
                seq, "wrong_seq", f"answered seq {answer['seq']} to seq {seq}", started
            )
        seconds = time.perf_counter() - started
        outcome = answer["outcome"]
        if outcome == "result":
            return CaseOutcome(seq, "result", output=answer["output"], seconds=seconds)
        if outcome == "rejected":
            return CaseOutcome(seq, "rejected", rejection=answer["rejection"], seconds=seconds)
        if outcome == "skipped":
            return CaseOutcome(seq, "skipped", reason=answer["reason"], seconds=seconds)
        return CaseOutcome(
            seq,
            "errored",
            error_code="producer_error",
            message=str(answer.get("message", "")),
            seconds=seconds,
        )

    def _broken(self, seq: int, code: str, message: str, started: float) -> CaseOutcome:
        # After a fault the stream cannot be trusted to be in step: start over.
        tail = self.stderr_tail()
        self._kill()
        return CaseOutcome(
            seq,
            "errored",
            error_code=code,
            message=message,
            seconds=time.perf_counter() - started,
            stderr_tail=tail[-2000:],
        )
