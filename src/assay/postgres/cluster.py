"""A throw-away PostgreSQL cluster of Debian's `postgresql` package on this machine: the
agent's server (agent/pgserver.py), the one code that runs a host's too, run in this process.

initdb refuses root, so every server process runs as the package's `postgres` user (through
`setpriv`, with a parent-death signal: when assay dies, even by `kill -9`, the postmaster gets
SIGQUIT and shuts down at once). The server listens on no TCP port, only on a Unix socket in a
private temporary directory (a run directory's path could pass the 107 bytes a socket's may
have), so it never meets the system's own cluster. Here its failures are the run's
(RunAborted), and a missing PostgreSQL is the user's to install (UserError).
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

from assay.agent import pgserver
from assay.agent.pgserver import kill_all, processes
from assay.exitcodes import RunAborted, UserError

__all__ = ["SOCKET_PREFIX", "Cluster", "account", "bindir", "chown", "kill_all", "processes",
           "reachable"]
SOCKET_PREFIX = "assay-pg-"  # the socket directory, in the temporary directory


def bindir() -> Path:
    """The newest installed PostgreSQL's binaries; UserError naming the package if none."""
    try:
        return pgserver.bindir(None)
    except pgserver.Refused as e:
        raise UserError(f"a postgres workload needs PostgreSQL: {e}") from None


def account() -> None:
    """UserError naming the package when the server's user is missing (as root)."""
    try:
        pgserver.account()
    except pgserver.Refused as e:
        raise UserError(f"a postgres workload runs the server as another user: {e}") from None


def chown(path: Path) -> None:
    pgserver.chown(path)


def reachable(directory: Path) -> str | None:
    """Why the PostgreSQL user cannot reach `directory`, or None."""
    try:
        pgserver.reachable(directory)
    except pgserver.Refused as e:
        return str(e)
    return None


def free_port() -> int:
    """A port number no local server uses (it only names the socket file; no TCP listener)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster(pgserver.Server):
    """One server: its data directory (on the target), its socket directory, its process."""

    Error = RunAborted

    def __init__(self, data: Path, log: Path, bins: Path | None = None):
        super().__init__(bins or bindir(), data, Path(), log, free_port())
        self.socket_dir: Path | None = None  # made when it starts

    def start(self, settings: dict[str, str]) -> None:
        self.sockets = self.socket_dir = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX))
        super().start(settings)

    def stop(self, timeout: float = 30.0) -> None:
        super().stop(timeout)
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
