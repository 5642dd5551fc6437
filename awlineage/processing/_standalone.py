"""A Spark standalone cluster on this machine: a master and its workers, started from the
``spark-class`` script that the pyspark package ships, bound to loopback (or a host given),
left running in sessions of their own, and described by a state file (``cluster.json`` in
its directory: the master URL, the web UI, the process ids and the logs) through which
``awl spark status`` and ``awl spark stop`` find them again."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from awlineage.errors import AwlError
from awlineage.extras import require_extra, require_java

STATE_FILE = "cluster.json"
"""The state file's name in the cluster's directory."""
START_TIMEOUT = 120.0
"""Seconds the master and each worker get to come up."""
SPARK_DAEMONS = b"org.apache.spark.deploy."
"""In the command line of every process a cluster is made of (`_alive`)."""
DAEMON_OPTIONS = "SPARK_DAEMON_JAVA_OPTS"
"""The environment variable of the master's and workers' JVM options (Spark's own)."""
STOP_TIMEOUT = 30.0
"""Seconds a process gets to end after SIGTERM before it is killed."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _alive(pid: int) -> bool:
    """Whether `pid` is a running Spark master or worker: a process id of a state file may
    have been taken by another process since (after a reboot), which must not be stopped."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return SPARK_DAEMONS in command and state != "Z"  # a zombie has ended


@dataclasses.dataclass
class ClusterState:
    """What the state file records of a started cluster."""

    master_url: str
    web_ui: str
    pids: list[int]
    logs: list[str]
    workers: int
    cores: int

    def alive(self) -> list[bool]:
        """Whether each process (master first) is still running."""
        return [_alive(pid) for pid in self.pids]


def daemon_options() -> str:
    """The master's and workers' JVM options: the driver's (`awlineage.processing._spark.
    driver_java_options`: the quick compiler, one collector thread, a heap that starts
    small), then the environment's ``SPARK_DAEMON_JAVA_OPTS``, which win. The daemons only
    keep track of workers and applications; with the JVM's defaults a master and two workers
    took 11.5 s of CPU to start and held 682 MB resident on a 2-core, 24 GB machine."""
    from awlineage.processing._spark import driver_java_options

    return driver_java_options(os.environ.get(DAEMON_OPTIONS, ""))


class StandaloneCluster:
    """A master and `workers` workers of `cores` cores and `memory` each, started now,
    logging into `directory` (created), with its state in ``directory/cluster.json``.

    Raises `awlineage.errors.AwlError` when a cluster of that directory is running already,
    or when the cluster does not come up (its processes are stopped then).
    """

    def __init__(self, directory: Path, workers: int = 2, cores: int = 1,
                 memory: str = "1g", host: str = "127.0.0.1") -> None:
        require_extra("pyspark", "spark", "a Spark standalone cluster")
        require_java("a Spark standalone cluster")
        import pyspark

        self.directory = Path(directory).resolve()
        self.directory.mkdir(parents=True, exist_ok=True)
        running = read_state(self.directory)
        if running is not None and any(running.alive()):
            raise AwlError(f"a cluster of {self.directory} is running already, at "
                           f"{running.master_url} (awl spark stop to stop it)")
        self.home = Path(pyspark.__file__).parent
        self.port = free_port(host)
        ui_port = free_port(host)
        self.master_url = f"spark://{host}:{self.port}"
        self.web_ui = f"http://{host}:{ui_port}"
        self.env = dict(os.environ, SPARK_HOME=str(self.home), SPARK_LOCAL_IP=host,
                        SPARK_WORKER_DIR=str(self.directory / "work"),
                        PYSPARK_PYTHON=sys.executable, SPARK_DAEMON_JAVA_OPTS=daemon_options())
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.workers, self.cores = workers, cores
        self._start("master", ["org.apache.spark.deploy.master.Master", "--host", host,
                               "--port", str(self.port), "--webui-port", str(ui_port)])
        self._wait_for("Starting Spark master", self.logs[0])
        for number in range(workers):
            self._start(f"worker{number + 1}", [
                "org.apache.spark.deploy.worker.Worker", "--host", host, "--cores", str(cores),
                "--memory", memory, "--webui-port", str(free_port(host)), self.master_url])
        for log in self.logs[1:]:
            self._wait_for("Successfully registered with master", log)
        self.state = ClusterState(self.master_url, self.web_ui,
                                  [p.pid for p in self.processes], [str(p) for p in self.logs],
                                  workers, cores)
        (self.directory / STATE_FILE).write_text(json.dumps(dataclasses.asdict(self.state),
                                                            indent=1) + "\n")

    def _start(self, name: str, arguments: list[str]) -> None:
        log = self.directory / f"{name}.log"
        with log.open("wb") as handle:  # the child keeps its own copy of the descriptor
            self.processes.append(subprocess.Popen(
                [str(self.home / "bin" / "spark-class"), *arguments], env=self.env,
                stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                start_new_session=True))
        self.logs.append(log)

    def _wait_for(self, text: str, log: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if log.exists() and text in log.read_text(errors="replace"):
                return
            if any(p.poll() is not None for p in self.processes):
                break
            time.sleep(0.2)
        self.stop()
        raise AwlError(f"the Spark cluster did not start ({text!r} not in {log}):\n"
                       + log.read_text(errors="replace")[-3000:])

    def stop(self) -> None:
        """Stop the workers, then the master, and remove the state file."""
        stop_processes([p.pid for p in self.processes])
        for process in self.processes:
            process.poll()  # reap them
        (self.directory / STATE_FILE).unlink(missing_ok=True)


def read_state(directory: Path) -> ClusterState | None:
    """The state of the cluster `awl spark start` started in `directory`.

    Parameters
    ----------
    directory : pathlib.Path
        The folder the cluster's state file (``cluster.json``) was written in.

    Returns
    -------
    ClusterState or None
        Its processes, master URL and logs; None when no cluster was started there.

    Raises
    ------
    AwlError
        When the state file is not one a cluster wrote.
    """
    path = Path(directory) / STATE_FILE
    try:
        return ClusterState(**json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        raise AwlError(f"{path} is not a cluster's state file ({exc}): remove it") from None


def stop_processes(pids: list[int]) -> None:
    """End the sessions led by `pids` (the last first): SIGTERM, then SIGKILL after
    `STOP_TIMEOUT` seconds."""
    for pid in reversed(pids):
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def stop_cluster(directory: Path) -> ClusterState | None:
    """Stop the cluster started in `directory` (the workers, then the master) and remove its
    state file.

    Parameters
    ----------
    directory : pathlib.Path
        The folder the cluster's state file was written in.

    Returns
    -------
    ClusterState or None
        The state of the cluster stopped; None when none was started there.
    """
    state = read_state(directory)
    if state is None:
        return None
    stop_processes(state.pids)
    (Path(directory) / STATE_FILE).unlink(missing_ok=True)
    return state
