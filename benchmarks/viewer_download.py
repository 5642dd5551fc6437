"""What the viewer's download (``/obj/<id>/file``) costs on a big file: the server's CPU time,
the time to the first byte and to the last, and the server's peak resident memory, over HTTP
from a real ``awl serve``.

The viewer checks a file against its SHA-256 before it sends the first byte
(`dataserver.ContentChecks`, once per state of the file): the first download of a file hashes
it, later ones only look at its state. ``--before DIR`` also serves the same database from
the packages in DIR (say ``git archive <commit> webviewer | tar -x -C DIR``), alternated with
the current code, to compare with a viewer that hashed while it streamed. Each figure is
printed as the median (min-max) of the rounds (the cases alternate within each round), with
the load average.

    python benchmarks/viewer_download.py --megabytes 200 --rounds 5 [--before /tmp/old]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmark_support import load_average, spread

ROOT = Path(__file__).resolve().parents[1]

MAKE = """
import os, sys
from awlineage import DataObject, Session, connect
class BigFile(DataObject):
    __namespace__ = "benchdownload"
db = connect(sys.argv[1])
with Session(db, sys.argv[2]):
    made = BigFile()
    with open(sys.argv[3], "rb") as source:
        made.store(source, filename="big.bin")
    made.commit()
print(made.object_id)
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _serve(folder: Path, port: int, path: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": path}
    server = subprocess.Popen(
        [sys.executable, "-m", "awlineage.cli", "serve", "--port", str(port), "--database",
         f"sqlite:///{folder}/bench.db", "--data-url", str(folder / "data")],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).read()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit(f"the viewer on port {port} did not start")


def _download(port: int, object_id: int, pid: int) -> tuple[float, float, float, int]:
    """Server CPU seconds, seconds to the first byte, seconds in all, and bytes received."""
    cpu, wall = _cpu_seconds(pid), time.perf_counter()
    size, first = 0, 0.0
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/obj/{object_id}/file") as answer:
        while chunk := answer.read(1 << 20):
            first = first or time.perf_counter() - wall
            size += len(chunk)
    return _cpu_seconds(pid) - cpu, first, time.perf_counter() - wall, size


def _touch(path: Path) -> None:
    """Change the file's state (ctime) without changing its bytes: the next download checks
    it again, as the first one after a restart would."""
    os.chmod(path, 0o644)
    os.chmod(path, 0o444)


def _free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="a directory holding an older webviewer package")
    parser.add_argument("--quick", action="store_true",
                        help="an 8 MB file, one round (a smoke run; figures are noisy)")
    args = parser.parse_args()
    if args.quick:
        args.megabytes, args.rounds = 8, 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "big.bin"
        with source.open("wb") as out:
            for _ in range(args.megabytes):
                out.write(os.urandom(1 << 20))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        object_id = int(subprocess.run(
            [sys.executable, "-c", MAKE, f"sqlite:///{folder}/bench.db", str(folder / "data"),
             str(source)], cwd=folder, env=env, check=True, capture_output=True,
            text=True).stdout.split()[-1])
        source.unlink()
        stored = folder / "data" / "big.bin"
        ports = {"now": _free_port(), "before": _free_port()}
        servers = {"now": _serve(folder, ports["now"], str(ROOT))}
        if args.before:
            servers["before"] = _serve(folder, ports["before"], f"{args.before}:{ROOT}")
        cases = ["now, first (hashes)", "now, again (state only)"]
        if args.before:
            cases.append("before (hashed while sent)")
        times: dict[str, list[tuple[float, float, float]]] = {case: [] for case in cases}
        try:
            for _ in range(args.rounds):
                for case in cases:
                    which = "before" if case.startswith("before") else "now"
                    if case.endswith("(hashes)"):
                        _touch(stored)
                    cpu, first, wall, size = _download(ports[which], object_id,
                                                       servers[which].pid)
                    assert size == args.megabytes << 20, size
                    times[case].append((cpu, first, wall))
            print(f"{args.megabytes} MB file, {args.rounds} rounds, {load_average()}; "
                  f"median (min-max) of the rounds:")
            for case, seen in times.items():
                cpu, first, wall = ([t[i] * 1000 for t in seen] for i in range(3))
                print(f"  {case:28s} server CPU {spread(cpu, 0):>15s} ms   first byte "
                      f"{spread(first, 0):>15s} ms   wall {spread(wall, 0):>15s} ms")
            for which, server in servers.items():
                print(f"  peak resident memory of the viewer ({which}): "
                      f"{_peak_mib(server.pid):.0f} MiB")
        finally:
            for server in servers.values():
                server.terminate()
                server.wait()


if __name__ == "__main__":
    main()
