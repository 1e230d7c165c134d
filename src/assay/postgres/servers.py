"""Where a running database is, on its host, for the steps that act on it: `pg_backup` runs
the agent's `pgbackup` there, through the host's runner, on one host or many alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from assay.runners.base import Runner


@dataclass(frozen=True)
class DatabaseServer:
    """One workload's running server on one host."""

    runner: Runner  # the host's: its agent runs the copy there
    bindir: str
    socket: str  # the server's socket directory
    port: int
    target: str  # the host's target directory: `pg-backups/` goes there without `to`


class Running(Protocol):
    """A postgres workload while it runs (postgres/load.py here, cluster/postgres.py on hosts)."""

    def servers(self) -> dict[str, DatabaseServer]:
        """Its server on each host still in the run."""
        ...
