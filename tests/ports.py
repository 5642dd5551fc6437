"""Loopback ports for the servers the tests start (uvicorn, ``awl serve``, ``awl dataserver
serve``), which need the port number before they listen.

Asking the kernel for port 0 and closing the socket leaves a window in which another test,
in this worker or the other, may be given the same port (the kernel hands out ephemeral ports
to every socket, a client's too). Here each xdist worker takes ports in turn from a block of
its own below the kernel's ephemeral range (32768-60999 on Linux), so no port given out here
is given out twice in a run, and none is one the kernel hands to a client; a port something
else holds is skipped.
"""

from __future__ import annotations

import itertools
import os
import socket

FIRST_PORT = 20000
"""The first port of gw0's block."""
BLOCK = 3000
"""Ports per xdist worker."""


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker[2:]) if worker[2:].isdigit() else 0


_offsets = itertools.count()


def free_port() -> int:
    """A loopback port nothing listens on now, not given out before in this test run."""
    start = FIRST_PORT + _worker_index() * BLOCK
    for _ in range(BLOCK):
        port = start + next(_offsets) % BLOCK
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:  # something else holds it
                continue
            return port
    raise RuntimeError(f"no free loopback port in {start}-{start + BLOCK - 1}")
