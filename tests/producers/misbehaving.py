"""A producer that misbehaves on purpose, one way per mode (argv[1]).

Used by tests/integration/test_protocol.py to prove the harness survives every fault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> int:
    mode = sys.argv[1]
    out = sys.stdout.buffer

    def send(message: object) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    if mode == "no_start":
        time.sleep(60)
        return 0
    if mode == "spawns_child":
        # A grandchild in the same process group: the harness must end it too.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        with open(os.environ["CHILD_PID_FILE"], "w") as handle:
            handle.write(str(child.pid))
    for raw in sys.stdin.buffer:
        command = json.loads(raw)
        if command["cmd"] == "start":
            send(
                {
                    "protocol_version": 1,
                    "implementation": {"name": mode, "version": "0", "language": "python"},
                    "contracts": ["session-health"],
                    "operations": ["health.reduce"],
                }
            )
            continue
        if command["cmd"] == "stop":
            return 0
        seq = command["seq"]
        if mode == "crash":
            return 3
        if mode in ("hang", "spawns_child"):
            time.sleep(120)
        if mode == "computes_1_5_s":
            # Busy for 1.5 s of CPU time, however long that takes on a loaded machine.
            began = time.process_time()
            while time.process_time() - began < 1.5:
                pass
            send({"seq": seq, "outcome": "result", "output": {"facts": []}})
        elif mode == "flood_stderr":
            chunk = b"x" * 65536
            for _ in range(200):  # 12.5 MiB of noise
                sys.stderr.buffer.write(chunk)
            sys.stderr.flush()
            send({"seq": seq, "outcome": "result", "output": {"facts": []}})
        elif mode == "partial_line":
            out.write(b'{"seq": ')
            out.flush()
            time.sleep(120)
        elif mode == "huge_line":
            out.write(
                b'{"seq": %d, "outcome": "result", "output": "' % seq + b"a" * (3 << 20) + b'"}\n'
            )
            out.flush()
        elif mode == "invalid_json":
            out.write(b"this is not json\n")
            out.flush()
        elif mode == "wrong_seq":
            send({"seq": seq + 1, "outcome": "result", "output": {}})
        elif mode == "bad_outcome":
            send({"seq": seq, "outcome": "maybe"})
        elif mode == "polite":
            send({"seq": seq, "outcome": "skipped", "reason": "not implemented yet"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
