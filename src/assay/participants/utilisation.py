"""Each host's utilisation each second (CPU, memory, network): this machine's, and on a
cluster run every host's, from the agent's `utilisation` command there. The rows go in
hosts.ndjson, one per host and second, and `host.` thresholds grade them
(`host.cpu_pct: "< 90%"` every host, `host.n2.cpu_pct` one); X-Ray charts each node's CPU
during every test, as the report does from them.

This machine is `local`: on a cluster run, the controller. A host's row is placed by when it
arrived here (the hosts' clocks need no offset, the network's delay is milliseconds); a lost
host's rows end at its loss. A host whose agent does not run has no rows, and run.json's
`participants.utilisation` says why; the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.hosts.utilisation import HostProbe
from assay.participants.base import ParticipantBase, Traits
from assay.plan import LOCAL
from assay.runners.base import Runner
from assay.runners.issuelog import Pump


class Utilisation(ParticipantBase):
    name = "utilisation"
    traits = Traits.HOSTS

    def __init__(self, runners: Mapping[str, Runner] | None = None,
                 lost: Collection[str] = ()):
        self.runners = dict(runners or {})
        self.lost = lost  # the run's lost hosts, as they are lost
        self.probe: HostProbe | None = None  # from the load's start
        self.agents: dict[str, subprocess.Popen[bytes]] = {}
        self.readers: dict[str, _Rows] = {}
        self.errors: dict[str, str] = {}
        self.pump: Pump | None = None

    def start(self) -> None:
        """The agent on every host, before fio starts there (in parallel: a host's first
        agent command writes the agent's archive there)."""
        self.probe = HostProbe()
        if not self.runners:
            return
        pump = self.pump = Pump()

        def one(host: str) -> None:
            try:
                proc = self.runners[host].agent("utilisation")
            except Exception as e:  # noqa: BLE001 - the run goes on without its rows
                self.errors[host] = f"could not start assay's agent there: {e}"
                return
            assert proc.stdout is not None
            self.agents[host], self.readers[host] = proc, _Rows()
            pump.add(proc.stdout, self.readers[host])

        with ThreadPoolExecutor(max_workers=min(16, len(self.runners))) as pool:
            list(pool.map(one, [h for h in self.runners if h not in self.lost]))

    def host_rows(self, t: float, origin: float) -> list[dict[str, Any]]:
        """This machine's second ending at `t` (the series' axis), and the rows the hosts
        sent since the last call, placed on the axis by `origin` (its zero, epoch s)."""
        self.probe = self.probe or HostProbe()
        out = [{"t": round(t, 3), "host": LOCAL, **self.probe.sample()}]
        for host, reader in self.readers.items():
            if host in self.lost:  # what came before its loss was seen is kept, no more
                reader.closed = True
            for arrived, row in reader.take():
                at = round(arrived - origin, 3)
                if at >= 0:
                    out.append({**row, "t": at, "host": host})
        return out

    def stop(self) -> list[Any]:
        self._end()
        return []

    def collect(self, status: str) -> dict[str, Any] | None:
        self._end()
        if not self.runners:
            return None
        return {"hosts": sorted(h for h, r in self.readers.items() if r.seen),
                "errors": self.errors}

    def _end(self) -> None:
        """Each agent ended (its stdin closed: it ends there); why a host sent nothing."""
        agents, self.agents = self.agents, {}
        for host, proc in agents.items():
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            if host in self.lost:
                proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if not self.readers[host].seen and host not in self.lost:
                tail = b""
                if proc.stderr is not None:
                    with contextlib.suppress(OSError, ValueError):
                        tail = proc.stderr.read()[-300:]
                why = tail.decode(errors="replace").strip().splitlines()
                self.errors[host] = (f"its agent sent no row (exit status {proc.returncode})"
                                     + (f": {why[-1]}" if why else ""))
        if self.pump is not None:  # no longer reading them: their pipes can close
            self.pump.close()
            self.pump = None
        for proc in agents.values():
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


class _Rows:
    """One host's agent rows, as the pump reads them: kept with when each arrived."""

    def __init__(self) -> None:
        self._rows: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.seen = False
        self.closed = False  # its host was lost

    def line(self, text: bytes) -> None:
        if self.closed:
            return
        try:
            row = json.loads(text)
        except ValueError:
            return
        if isinstance(row, dict) and "cpu_pct" in row:
            row.pop("t", None)  # the host's clock: placed by its arrival instead
            with self._lock:
                self._rows.append((time.time(), row))
                self.seen = True

    def eof(self) -> None:
        return None

    def take(self) -> list[tuple[float, dict[str, Any]]]:
        with self._lock:
            rows, self._rows = self._rows, []
        return rows
