"""What the controller tells the agent's `pgbench` command on a host (agent/pgbench.py): the
check before any IO, the run's spec (where the database goes, its settings, pgbench's
options with the host's paths), and the failed check of a host whose database was lost;
and what the databases need of the cluster's hosts (`Hosts`, a protocol: postgres/ does
not import cluster/)."""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.metrics.sampler import ComponentSpec, Sample
from assay.postgres.dataset import load_key
from assay.postgres.hostrows import transaction_types
from assay.postgres.load import pgbench_options, settings
from assay.runners import agent
from assay.runners.base import Runner
from assay.thresholds.evaluate import Result
from assay.thresholds.grammar import Threshold
from assay.workloads.postgres import Params


class HostRows(Protocol):
    """A host's own series (cluster/hostseries.py), which the databases' rows join."""

    failures: dict[str, list[Result]]

    def add(self, host: str, samples: list[Sample]) -> None: ...


class Hosts(Protocol):
    """What the databases need of the cluster's hosts (cluster/group.py's RunnerGroup)."""

    runners: dict[str, Runner]
    facts: dict[str, dict[str, Any]]
    lost: dict[str, dict[str, Any]]
    specs: list[ComponentSpec]
    spawn_s: dict[str, float]
    instant: float | None

    @property
    def series(self) -> HostRows: ...

    @property
    def current(self) -> Any: ...  # the phase running (ClusterRun): t0, measured, last_doc

    def is_lost(self, host: str) -> bool: ...


@dataclass
class Remote:
    """One workload's database on one host: its agent and what it said."""

    host: str
    name: str
    proc: Any = None  # the agent (subprocess.Popen)
    rows: queue.Queue[dict[str, Any]] = field(default_factory=queue.Queue)
    info: dict[str, Any] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)  # bindir, socket, port (pg_backup)
    ended: bool = False  # said "end" (pgbench done) or stopped sending
    lost: str | None = None

    def read(self) -> None:
        """The agent's rows into its queue; {"gone": ...} when it ends."""
        assert self.proc is not None and self.proc.stdout is not None
        for row in agent.rows(self.proc.stdout):
            self.rows.put(row)
        err = self.proc.stderr.read().decode(errors="replace").strip() if self.proc.stderr else ""
        self.rows.put({"gone": err[-300:]})

    def next(self, timeout: float, want: str) -> dict[str, Any]:
        """The agent's next row with `want`, "error" or "gone" (skipping others)."""
        end = time.monotonic() + timeout
        while True:
            try:
                row = self.rows.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                return {"error": f"no {want} within {timeout:g}s"}
            if want in row or "error" in row:
                return row
            if "gone" in row:
                return {"error": f"the agent ended: {row['gone'] or 'no message'}"}


WAIT_S = 3600  # a host gives up waiting for its start (and removes the database) after this


def check_host(runner: Runner, bindir: str | None, databases: list[dict[str, Any]]) \
        -> str | None:
    """Why the host cannot run its `databases` ({base, name, wal}: PostgreSQL missing, its
    user cannot reach them, a directory of theirs that assay did not make), or None."""
    proc = runner.agent("pgbench", ["check", json.dumps(
        {"bindir": bindir, "databases": databases})])
    # read to its end: closing its stdin would end the command (hosts/ssh.py)
    said: list[bytes] = []
    stream = proc.stdout
    assert stream is not None
    reader = threading.Thread(target=lambda: said.append(stream.read()), daemon=True)
    reader.start()
    reader.join(120)
    if reader.is_alive():
        proc.kill()
    proc.wait()
    out = said[0] if said else b""
    err = proc.stderr.read() if proc.stderr else b""
    for line in out.splitlines():
        row = json.loads(line) if line.startswith(b"{") else {}
        if row.get("ok"):
            return None
        if "problem" in row:
            return f"the postgres workload cannot run there: {row['problem']}"
    return f"the agent could not check PostgreSQL there: " \
           f"{err.decode(errors='replace').strip()[-300:] or 'no answer'}"



def host_spec(name: str, p: Params, base: str, bindir: str | None, fresh: bool,
              direct: bool, backup: bool = False) -> dict[str, Any]:
    """The agent's spec of workload `name`'s database on one host (`backup`: a pg_backup step
    copies it, so it takes replication connections)."""
    conf = settings(p, p.dataset_estimate, direct, backup)
    conf.pop("shared_buffers")  # the agent's, from the database it loaded
    return {"name": name, "base": base, "wal": p.wal_path, "bindir": bindir,
            "driver": p.driver, "size": p.size, "schema": "tpcc-schema.sql", "fresh": fresh,
            "key": load_key(p),
            "settings": conf, "shared_buffers": p.shared_buffers, "cache": p.cache,
            # the agent runs pgbench in the host's run directory, the scripts one up
            "pgbench": pgbench_options(p, "tx", lambda s: f"../tpcc-{s}.sql"),
            "rate": p.rate, "wait_s": WAIT_S,
            "streams": {str(i): s for i, s in enumerate(transaction_types(p))}}


def lost(host: str, name: str, t: float, why: str) -> Result:
    """A failed check of `host`: its database of workload `name` was lost."""
    th = Threshold(selector=(host, name), metric="database", op="==", value=1.0,
                   text=f"{host}: {name}'s database ran to the end", source="cluster")
    return Result(th, f"{host}/{name}", 0.0, 1.0, False,
                  note=f"{host}: database {name} lost at {t}s: {why}")
