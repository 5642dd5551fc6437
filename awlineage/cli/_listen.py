"""The listening sockets of ``awl serve`` and ``awl dataserver serve``, bound before anything is
said about the server (its site's address), and their ports and hosts checked as arguments,
so that a port out of range or taken is one line naming it."""

from __future__ import annotations

import argparse
import socket

from awlineage.errors import ConfigurationError
from awlineage.extras import require_extra

MAX_PORT = 65535
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
"""Uvicorn's log levels, the choices of ``--log-level``."""


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535.

    0, "any free port", is refused: it would leave a site's recorded address unknown.

    Parameters
    ----------
    text : str
        The argument as given.

    Returns
    -------
    int
        The port.

    Raises
    ------
    argparse.ArgumentTypeError
        When `text` is not a whole number from 1 to 65535.

    Examples
    --------
    >>> from awlineage.cli import port_number
    >>> port_number("8080")
    8080
    """
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (a whole number from 1 to "
                                         f"{MAX_PORT})")
    return port


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` and listening, with Nagle's algorithm off.

    Uvicorn's own socket leaves Nagle on in the connections it accepts, which holds each
    keep-alive answer back by some 40 ms (delayed ACKs); Linux copies the option from the
    listening socket to every accepted one. The socket is inheritable, for worker processes.

    Parameters
    ----------
    host : str
        The address to listen on (``127.0.0.1``, ``::1``, a host name).
    port : int
        The TCP port.

    Returns
    -------
    socket.socket
        The bound, listening socket.

    Raises
    ------
    ConfigurationError
        Naming the address, when it cannot be bound (taken, not this machine's, no such host).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(socket.SOMAXCONN)
    except (OSError, OverflowError) as exc:
        sock.close()
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigurationError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def serve_on(app: object, sock: socket.socket, log_level: str) -> int:
    """Run `app` under uvicorn on the bound `sock` until stopped.

    Parameters
    ----------
    app : object
        An ASGI application (the viewer's, the data server's).
    sock : socket.socket
        A socket from `listening_socket`.
    log_level : str
        One of `LOG_LEVELS`.

    Returns
    -------
    int
        The exit status: 0, or 1 when the app did not start (uvicorn has logged why).

    Raises
    ------
    MissingExtraError
        When uvicorn (the ``web`` extra) is not installed.
    """
    uvicorn = require_extra("uvicorn", "web", "serving over HTTP")
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level))
    server.run(sockets=[sock])
    return 0 if server.started else 1
