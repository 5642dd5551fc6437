"""A Spark standalone cluster on loopback for tests: one master and its workers, started
from the ``spark-class`` script that the pyspark package ships, and stopped afterwards."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SparkCluster:
    """A master and `workers` workers of `cores` cores each, logging into `directory`."""

    def __init__(self, directory: Path, workers: int = 2, cores: int = 1) -> None:
        self.directory = directory
        self.home = Path(pyspark.__file__).parent
        self.port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self.env = dict(os.environ, SPARK_HOME=str(self.home), SPARK_LOCAL_IP="127.0.0.1",
                        SPARK_WORKER_DIR=str(directory / "work"), PYSPARK_PYTHON=sys.executable,
                        SPARK_NO_DAEMONIZE="1")
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self._start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(self.port), "--webui-port", str(free_port())])
        self._wait_for("Starting Spark master", self.logs[0])
        for number in range(workers):
            self._start(f"worker{number}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--cores", str(cores), "--memory", "1g", "--webui-port", str(free_port()),
                self.master_url])
        for log in self.logs[1:]:
            self._wait_for("Successfully registered with master", log)

    def _start(self, name: str, arguments: list[str]) -> None:
        log = self.directory / f"{name}.log"
        handle = log.open("wb")
        self.processes.append(subprocess.Popen(
            [str(self.home / "bin" / "spark-class"), *arguments], env=self.env,
            stdout=handle, stderr=subprocess.STDOUT, start_new_session=True))
        self.logs.append(log)

    def _wait_for(self, text: str, log: Path, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if log.exists() and text in log.read_text(errors="replace"):
                return
            if any(p.poll() is not None for p in self.processes):
                break
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"Spark cluster did not start ({text!r} not in {log}):\n"
                           + log.read_text(errors="replace")[-3000:])

    def stop(self) -> None:
        """Stop the workers, then the master."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
