"""Data server throughput: storing and retrieving 1,000 files of 1 MiB and one file of
1 GiB on each back end, against a plain file copy (local directory, HTTP in front of it) or
the raw minio client (S3, HTTP in front of it) in the same run, with the peak resident
memory of the 1 GiB case.

    python benchmarks/data_servers.py                    # everything (about 10 minutes)
    python benchmarks/data_servers.py --large-mib 0      # only the 1,000 small files
    python benchmarks/data_servers.py --backends local,s3 --small-count 200

The S3 server is moto (``moto_server``) in its own process on loopback, the HTTP data
server is uvicorn in its own process; each 1 GiB transfer runs in a fresh child process, so
its peak RSS is that transfer's alone. Ratios are our time over the baseline's time: 1.00
is as fast as the baseline, 1.30 is 30 % slower. The small files' rates are the median of
--repeat rounds, ours and the baseline alternated (baseline first, then ours first, ...), and
each ratio the median (min-max) of the rounds' paired ratios; the 1 GiB case runs once. The
load is printed at the start and the end. Goals: local within 1.3x of a plain copy, S3 within
1.2x of the raw minio client.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ACCESS, SECRET = "bench-access", "bench-secret-key"
TOKEN = "bench-token-0123456789abcdef"
MIB = 1024 * 1024
BACKENDS = ("local", "s3", "http+local", "http+s3")


# -- services ---------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def peak_rss_mib(pid: int) -> float:
    """Peak resident memory of a running process (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Services:
    """moto_server, and an HTTP data server in front of a directory and of a bucket."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.processes: dict[str, subprocess.Popen] = {}
        self.urls: dict[str, str] = {}
        self.log = open(workdir / "services.log", "ab")  # noqa: SIM115 (closed in stop)

    def start(self, kinds: set[str]) -> None:
        if kinds & {"s3", "http+s3"}:
            port = free_port()
            self.processes["moto"] = subprocess.Popen(
                ["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=self.log, stderr=self.log)
            wait_for(port, self.processes["moto"], "moto_server")
            self.endpoint = f"127.0.0.1:{port}"
            self.urls["s3"] = (f"s3://bench-{uuid.uuid4().hex[:12]}?endpoint={self.endpoint}"
                               "&secure=false")
        if "local" in kinds or "http+local" in kinds:
            self.urls["local"] = str(self.workdir / f"local-{uuid.uuid4().hex[:8]}")
        for kind in ("http+local", "http+s3"):
            if kind in kinds:
                self.urls[kind] = self._http(kind, self.urls[kind.split("+")[1]])

    def _http(self, kind: str, storage_url: str) -> str:
        port = free_port()
        env = {**os.environ, "AWL_DATASERVER_STORAGE": storage_url,
               "AWL_DATASERVER_TOKENS": TOKEN, "PYTHONPATH": str(ROOT),
               "AWL_S3_ACCESS_KEY": ACCESS, "AWL_S3_SECRET_KEY": SECRET}
        env.pop("AWL_DATABASE_URL", None)
        self.processes[kind] = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "dataserver:create_app",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=env, cwd=self.workdir, stdout=self.log, stderr=self.log)
        wait_for(port, self.processes[kind], f"data server ({kind})")
        return f"http://127.0.0.1:{port}"

    def baseline_url(self, kind: str) -> str:
        """Where the baseline of `kind` writes: the bucket for S3 kinds, else unused."""
        return self.urls["s3"] if uses_s3(kind) else self.urls["local"]

    def server_rss(self, kind: str) -> float | None:
        process = self.processes.get(kind)
        return None if process is None else peak_rss_mib(process.pid)

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            process.wait(timeout=30)
        self.processes.clear()
        self.log.close()


@contextmanager
def services(workdir: Path, kinds: set[str]):
    running = Services(workdir)
    try:
        running.start(kinds)
        yield running
    finally:
        running.stop()


# -- the operations -----------------------------------------------------------------------
def environment() -> None:
    os.environ["AWL_S3_ACCESS_KEY"] = ACCESS
    os.environ["AWL_S3_SECRET_KEY"] = SECRET


def open_backend(url: str):
    from dataserver import open_storage

    return open_storage(url, token=TOKEN)


def raw_minio(s3_url: str):
    from urllib.parse import parse_qs, urlsplit

    from minio import Minio

    parts = urlsplit(s3_url)
    endpoint = parse_qs(parts.query)["endpoint"][0]
    client = Minio(endpoint, access_key=ACCESS, secret_key=SECRET, secure=False)
    bucket = parts.netloc + "-raw"
    if not client.bucket_exists(bucket):
        client.make_bucket(bucket)
    return client, bucket


def uses_s3(kind: str) -> bool:
    return kind.endswith("s3")


def baseline_store(kind: str, url: str, sources: list[Path], names: list[str],
                   dest: Path) -> None:
    """Plain copies into a directory, or the raw minio client's uploads."""
    if uses_s3(kind):
        client, bucket = raw_minio(url)
        for source, name in zip(sources, names, strict=True):
            client.fput_object(bucket, name, str(source))
    else:
        for source, name in zip(sources, names, strict=True):
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def baseline_store_durable(kind: str, url: str, sources: list[Path], names: list[str],
                           dest: Path) -> None:
    """Plain copies, then flushed to disk as the local back end does before a commit: many
    files with one flush of the file system, a few one by one."""
    from dataserver import sync_filesystem

    baseline_store(kind, url, sources, names, dest)
    if len(names) > 8 and sync_filesystem(dest):
        return
    for name in names:
        with open(dest / name, "rb") as handle:
            os.fsync(handle.fileno())
    for directory in {(dest / name).parent for name in names}:
        handle = os.open(directory, os.O_RDONLY)
        os.fsync(handle)
        os.close(handle)


def baseline_retrieve(kind: str, url: str, names: list[str], stored: Path,
                      dest: Path) -> None:
    if uses_s3(kind):
        client, bucket = raw_minio(url)
        for name in names:
            client.fget_object(bucket, name, str(dest / name.replace("/", "_")))
    else:
        for name in names:
            shutil.copyfile(stored / name, dest / name.replace("/", "_"))


def our_store(url: str, sources: list[Path], names: list[str]) -> list[str]:
    storage = open_backend(url)
    with storage:
        return [storage.put(name, source).sha256
                for source, name in zip(sources, names, strict=True)]


def our_retrieve(url: str, names: list[str], hashes: list[str], dest: Path) -> None:
    from dataserver import FileCache

    cache = FileCache(dest, max_bytes=1024**4)
    storage = open_backend(url)
    with storage:
        for name, sha in zip(names, hashes, strict=True):
            cache.fetch(storage, name, sha)


def timed(function, *args) -> float:
    os.sync()  # flush earlier writes so they do not slow this run down
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def timed_into(times: list[float], function, *args):
    """`function(*args)`, its time (after flushing earlier writes) appended to `times`."""
    os.sync()
    start = time.perf_counter()
    answer = function(*args)
    times.append(time.perf_counter() - start)
    return answer


# -- the child process of a 1 GiB transfer --------------------------------------------------
def child_main(spec: dict) -> None:
    environment()
    operation, kind, url = spec["operation"], spec["kind"], spec["url"]
    source, name = Path(spec["source"]), spec["name"]
    dest = Path(spec["dest"])
    start = time.perf_counter()
    result: dict = {}
    if operation == "baseline-store":
        baseline_store(kind, url, [source], [name], dest)
    elif operation == "baseline-store-durable":
        baseline_store_durable(kind, url, [source], [name], dest)
    elif operation == "store":
        result["sha256"] = our_store(url, [source], [name])[0]
    elif operation == "baseline-retrieve":
        baseline_retrieve(kind, url, [name], dest.parent / "stored", dest)
    elif operation == "retrieve":
        our_retrieve(url, [name], [spec["sha256"]], dest)
    result["seconds"] = time.perf_counter() - start
    # VmHWM, this process's own: ru_maxrss keeps the parent's high-water mark across the
    # fork and exec, so it would report the benchmark's own size for a small transfer
    result["peak_rss_mib"] = peak_rss_mib(os.getpid())
    if result["peak_rss_mib"] != result["peak_rss_mib"]:  # nan: no /proc here
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def in_child(spec: dict) -> dict:
    os.sync()
    output = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                            check=True, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(output.stdout.strip().splitlines()[-1])


# -- the cases ----------------------------------------------------------------------------
def make_small_files(directory: Path, count: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = directory / f"small-{i:04d}.bin"
        path.write_bytes(os.urandom(MIB))
        paths.append(path)
    return paths


def make_large_file(path: Path, mib: int) -> Path:
    with open(path, "wb") as out:
        for _ in range(mib):
            out.write(os.urandom(MIB))
    return path


def small_case(kind: str, url: str, base_url: str, sources: list[Path], work: Path,
               repeat: int) -> dict:
    """`repeat` rounds of each, baseline and ours, store and retrieve: every round's times,
    the two sides alternated (the baseline first in even rounds, ours first in odd ones) so
    that each round's pair meets the same load and neither always goes first."""
    times: dict[str, list[float]] = {"base_store": [], "store": [],
                                     "base_retrieve": [], "retrieve": []}
    if not uses_s3(kind):
        times["durable_store"] = []
    for round_ in range(repeat):
        names = [f"small-{round_}/{p.name}" for p in sources]
        stored = work / f"base-stored-{round_}"
        durable = work / f"durable-{round_}"
        out = work / f"base-out-{round_}"
        out.mkdir(parents=True)
        cache = work / f"cache-{round_}"
        stores = [("base_store", baseline_store, (kind, base_url, sources, names, stored)),
                  ("store", our_store, (url, sources, names))]
        if not uses_s3(kind):
            stores.insert(0, ("durable_store", baseline_store_durable,
                              (kind, base_url, sources, names, durable)))
        answers = {}
        for key, function, arguments in (stores if round_ % 2 == 0 else stores[::-1]):
            answers[key] = timed_into(times[key], function, *arguments)
            shutil.rmtree(durable, ignore_errors=True)  # the copy+fsync is not read back
        retrieves = [("base_retrieve", baseline_retrieve, (kind, base_url, names, stored, out)),
                     ("retrieve", our_retrieve, (url, names, answers["store"], cache))]
        for key, function, arguments in (retrieves if round_ % 2 == 0 else retrieves[::-1]):
            timed_into(times[key], function, *arguments)
        for leftover in (stored, out, cache):
            shutil.rmtree(leftover, ignore_errors=True)
    return times


def large_case(kind: str, url: str, base_url: str, source: Path, work: Path) -> dict:
    name = f"large/{source.name}"
    ours = {"kind": kind, "url": url, "source": str(source), "name": name}
    base = {**ours, "url": base_url}
    stored = work / "stored"
    stored.mkdir(parents=True, exist_ok=True)
    results = {}
    if not uses_s3(kind):
        durable = work / "durable"
        durable.mkdir(parents=True, exist_ok=True)
        results["durable_store"] = in_child({**base, "operation": "baseline-store-durable",
                                             "dest": str(durable)})
        shutil.rmtree(durable)
    results["base_store"] = in_child({**base, "operation": "baseline-store", "dest": str(stored)})
    results["store"] = in_child({**ours, "operation": "store", "dest": str(stored)})
    out = work / "out"
    out.mkdir(exist_ok=True)
    results["base_retrieve"] = in_child({**base, "operation": "baseline-retrieve",
                                         "dest": str(out)})
    shutil.rmtree(out)
    results["retrieve"] = in_child({**ours, "operation": "retrieve", "dest": str(work / "cache"),
                                    "sha256": results["store"]["sha256"]})
    shutil.rmtree(stored, ignore_errors=True)
    shutil.rmtree(work / "cache", ignore_errors=True)
    return results


def hash_rate(path: Path) -> float:
    start = time.perf_counter()
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(8 * MIB):
            digest.update(chunk)
    return path.stat().st_size / MIB / (time.perf_counter() - start)


def copy_fsync_rate(source: Path, dest: Path) -> float:
    os.sync()
    start = time.perf_counter()
    shutil.copyfile(source, dest)
    with open(dest, "rb") as handle:
        os.fsync(handle.fileno())
    seconds = time.perf_counter() - start
    dest.unlink()
    return source.stat().st_size / MIB / seconds


# -- report -------------------------------------------------------------------------------
def baseline_name(kind: str) -> str:
    return "raw minio" if uses_s3(kind) else "plain copy"


def print_row(kind: str, mib: float, times: dict[str, list[float]], extra: str = "") -> None:
    """One back end's rates (from the median times) and ratios (median (min-max) of the
    rounds' pairs)."""
    from benchmark_support import ratio_spread  # not at the top: the 1 GiB transfers'
    # child processes import this module, and their peak RSS would count SQLAlchemy's

    def rate(key: str) -> str:
        return f"{mib / statistics.median(times[key]):7.0f}"

    def ratio(ours: str, base: str) -> str:
        median, _, rest = ratio_spread(times[ours], times[base]).partition(" ")
        return f"{median}x {rest}"

    line = (f"  {kind:<10} store {rate('store')} MB/s vs {baseline_name(kind)} "
            f"{rate('base_store')}: {ratio('store', 'base_store')}")
    if "durable_store" in times:
        line += (f" (vs copy+fsync {rate('durable_store')}: "
                 f"{ratio('store', 'durable_store')})")
    line += (f" | retrieve {rate('retrieve')} vs {rate('base_retrieve')}: "
             f"{ratio('retrieve', 'base_retrieve')}")
    print(line + extra)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--small-count", type=int, default=1000)
    parser.add_argument("--large-mib", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=2, help="rounds of the small case (median)")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 20 small files, 8 MiB, one run, local and http+s3")
    args = parser.parse_args()
    if args.quick:  # the local store and HTTP over S3: both servers, started once each
        args.small_count, args.large_mib, args.repeat = 20, 8, 1
        args.backends = "local,http+s3"
    if args.child:
        child_main(json.loads(args.child))
        return 0
    environment()
    kinds = [k.strip() for k in args.backends.split(",") if k.strip()]
    unknown = set(kinds) - set(BACKENDS)
    if unknown:
        parser.error(f"unknown back end(s) {', '.join(sorted(unknown))}; known: "
                     f"{', '.join(BACKENDS)}")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="awl-bench-dataserver-"))
    workdir.mkdir(parents=True, exist_ok=True)
    from benchmark_support import load_average

    print(load_average())
    try:
        run(args, kinds, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        print(load_average())
    return 0


def run(args: argparse.Namespace, kinds: list[str], workdir: Path) -> None:
    print(f"data server benchmark: {os.cpu_count()} cores, scratch {workdir}")
    print("  S3 = moto_server (own process, loopback); HTTP = uvicorn (own process)")
    if args.small_count:
        sources = make_small_files(workdir / "inputs", args.small_count)
        mib = args.small_count
        print(f"\n{args.small_count} x 1 MiB (median of {args.repeat} alternated rounds; "
              "ratio: median (min-max) of the rounds' pairs):")
        with services(workdir, set(kinds)) as running:
            for kind in kinds:
                times = small_case(kind, running.urls[kind], running.baseline_url(kind),
                                   sources, workdir / kind, args.repeat)
                print_row(kind, mib, times)
        shutil.rmtree(workdir / "inputs")
    if args.large_mib:
        source = make_large_file(workdir / "large.bin", args.large_mib)
        print(f"\n1 x {args.large_mib} MiB (each transfer in its own process; peak RSS of "
              "store / retrieve, and of the server):")
        print(f"  SHA-256 alone {hash_rate(source):8.1f} MB/s; plain copy with fsync "
              f"{copy_fsync_rate(source, workdir / 'fsync-copy.bin'):8.1f} MB/s")
        for kind in kinds:
            # A fresh moto for each: it keeps every object in memory.
            with services(workdir, {kind}) as running:
                results = large_case(kind, running.urls[kind], running.baseline_url(kind),
                                     source, workdir / kind)
                server = running.server_rss(kind) if kind.startswith("http") else None
            times = {key: [value["seconds"]] for key, value in results.items()}
            print_row(kind, args.large_mib, times)
            rss = (f"  {'':<10} peak RSS store {results['store']['peak_rss_mib']:.0f} MiB, "
                   f"retrieve {results['retrieve']['peak_rss_mib']:.0f} MiB (baseline "
                   f"{results['base_store']['peak_rss_mib']:.0f} / "
                   f"{results['base_retrieve']['peak_rss_mib']:.0f})")
            if server is not None:
                rss += f"; server process {server:.0f} MiB"
            print(rss)
    print("\ngoals: local within 1.3x of a plain copy; S3 within 1.2x of the raw minio client; "
          "1 GiB transfers under 200 MiB resident")


if __name__ == "__main__":
    sys.exit(main())
