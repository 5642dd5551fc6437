"""Run one measurement in a process of its own and read its peak memory from the kernel
(``wait4``'s resource usage of that child alone), so measurements do not pollute each other."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ChildRun:
    """What one child process did: wall time, peak resident memory, exit status, output."""

    seconds: float
    cpu_seconds: float
    """User and system CPU time of the child (and of the children it waited for)."""
    peak_mib: float
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    result: dict = field(default_factory=dict)
    """The child's last stdout line read as JSON, when it printed one."""


def run_child(command: list[str], *, env: dict[str, str] | None = None,
              cwd: str | Path | None = None, timeout: float | None = None,
              log: Path | None = None) -> ChildRun:
    """Run `command`, return its wall time and peak RSS (MiB). After `timeout` seconds the
    child and its process group are killed and the run is marked ``timed_out``. Output goes to
    `log` (or a temporary file) rather than a pipe, so that a chatty tool cannot block."""
    out_path = log or Path(os.environ.get("TMPDIR", "/tmp")) / f"awl-bench-{os.getpid()}.out"
    err_path = out_path.with_suffix(".err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd,
                                start_new_session=True)
        timed_out = False
        deadline = None if timeout is None else start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                timed_out = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = out_path.read_text(), err_path.read_text()
    if log is None:
        out_path.unlink()
        err_path.unlink()
    result = {}
    lines = stdout.strip().splitlines()
    if lines and lines[-1].startswith("{"):
        try:
            result = json.loads(lines[-1])
        except json.JSONDecodeError:
            result = {}
    return ChildRun(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                    proc.returncode, stdout, stderr, timed_out, result)


def report(**figures: object) -> None:
    """Print a child's figures as the JSON line `run_child` reads."""
    print(json.dumps(figures), flush=True)
