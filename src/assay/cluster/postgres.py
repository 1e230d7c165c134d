"""Postgres workloads placed on a cluster's hosts (`hosts:`): a database on each host.

The remote half is the agent's `pgbench` command (agent/pgbench.py), one per host and
workload, session-bound: it checks PostgreSQL (`open`, before any IO), makes or reuses the
loaded database in the host's target and starts the run's copy (`prepare`), runs pgbench
from the run's start instant (`start`: the same T0 as fio's, on the host's clock), sends one
small row a second (counts and latency buckets, agent/pgfold.py) and removes the server and
its copy at the end, or at once when the session ends (assay killed). This class is the
engine's `Sidecars` for a cluster run: the rows of every host go into the host's own series
(graded by `each_host.`) and, added up second by second, into the merged series
(cluster/postgresrows.py reads them).

A database that stops sending on a live host, or whose host is lost, is lost: a timeline
event and a failed check of that host ("its database ran to the end"), never a pass.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rich.console import Console

from assay.cluster.postgresrows import DatabaseRows
from assay.exitcodes import RunAborted, UserError
from assay.metrics.sampler import Sample
from assay.plan import Plan
from assay.plan.instances import host_dir
from assay.postgres.dataset import SCRIPTS, tpcc_file
from assay.postgres.hostspec import Hosts, Remote, check_host, host_spec
from assay.postgres.load import caching
from assay.postgres.servers import DatabaseServer
from assay.postgres.sidecar import IdleRun
from assay.results.rundir import RunDir
from assay.workloads.postgres import Params

READY_TIMEOUT_S = 3600.0  # a large load takes its time
END_GRACE_S = 30.0


class HostDatabases:
    """The run's postgres workloads on their hosts (the engine's Sidecars, for a cluster)."""

    def __init__(self, plan: Plan, group: Hosts, rd: RunDir):
        assert plan.cluster is not None
        self.plan, self.group, self.rd = plan, group, rd
        self.params = {n: w for n, w in plan.resolved.workloads.items() if isinstance(w, Params)}
        self.remotes = [Remote(h, n) for h, hp in plan.cluster.hosts.items()
                        for n in self.params if n in hp.instances]
        self.rows = DatabaseRows(plan, group, rd, self.remotes, self.params)  # what they send
        self._warnings: list[str] = []
        self.backup = any(s.action == "pg_backup" for s in plan.resolved.steps)  # plan-checked
        self.databases: dict[str, OnHosts] = {}  # running, for actions (pg_backup)

    @classmethod
    def open(cls, plan: Plan, group: Hosts, rd: RunDir) -> HostDatabases | None:
        """None without postgres workloads; else every host that runs one checked for
        PostgreSQL, before any IO (UserError naming each host that lacks it)."""
        if plan.cluster is None or not any(isinstance(w, Params)
                                           for w in plan.resolved.workloads.values()):
            return None
        self = cls(plan, group, rd)
        hosts = sorted({r.host for r in self.remotes})
        with ThreadPoolExecutor(max_workers=min(16, len(hosts) or 1)) as pool:
            said = dict(zip(hosts, pool.map(self._check, hosts), strict=True))
        bad = [f"{h}: {why}" for h, why in said.items() if why]
        if bad:
            raise UserError("; ".join(bad) if len(bad) == 1 else
                            f"{len(bad)} hosts cannot run the postgres workload:\n  "
                            + "\n  ".join(bad))
        return self

    def _check(self, host: str) -> str | None:
        dbs = [{"base": self._base(r), "name": r.name, "wal": self.params[r.name].wal_path}
               for r in self.remotes if r.host == host]
        return check_host(self.group.runners[host], self._bindir(host), dbs)

    def _base(self, r: Remote) -> str:
        """Where the database goes on its host: the instance's directory of the target."""
        assert self.plan.cluster is not None
        p = self.params[r.name]
        return f"{self.plan.cluster.hosts[r.host].host.path}/{p.subdir or host_dir(r.host, 0)}"

    def _bindir(self, host: str) -> str | None:
        assert self.plan.cluster is not None
        given = self.plan.cluster.hosts[host].host.vars.get("assay_pg_bindir")
        return str(given) if given else None

    def _put(self, host: str, name: str, data: bytes) -> None:
        """A file into the host's run directory, where the agent runs (SshRunner.put)."""
        self.group.runners[host].put(name, data)  # type: ignore[attr-defined]

    def __bool__(self) -> bool:
        return bool(self.remotes)

    def check(self) -> None:
        """Done per host by `open`."""

    # -- before the load ------------------------------------------------------------------
    def prepare(self, directory: object, fresh: bool, console: Console, direct: bool,
                temporary: bool = False) -> dict[str, Any]:
        """Every host's database loaded (or reused) and started, in parallel."""
        t0 = time.monotonic()
        console.print(f"postgres: preparing {len(self.remotes)} database(s) on "
                      f"{', '.join(sorted({r.host for r in self.remotes}))}")
        for r in self.remotes:
            runner = self.group.runners[r.host]
            if self.params[r.name].driver == "tpcc":
                for s in ("schema", *SCRIPTS):
                    self._put(r.host, f"tpcc-{s}.sql", tpcc_file(s).read_bytes())
            spec = host_spec(r.name, self.params[r.name], self._base(r),
                             self._bindir(r.host), fresh, direct, self.backup)
            r.proc = runner.agent("pgbench", ["run", json.dumps(spec)])
            threading.Thread(target=r.read, daemon=True).start()
        problems = []
        for r in self.remotes:
            row = r.next(READY_TIMEOUT_S, "ready")
            if "ready" not in row:
                problems.append(f"{r.host}: workload {r.name}: {row.get('error') or 'no answer'}")
                continue
            r.server = row["ready"].pop("server", {})
            r.info.update(row["ready"])
            db = r.info["dataset"]["database_bytes"]
            sb = int(r.info["settings"]["shared_buffers"].removesuffix("kB")) * 1024
            self._warnings += [f"{r.host}: {w}" for w in caching(r.name, db, sb)]
        if problems:
            raise RunAborted("; ".join(problems))
        self.databases = {n: OnHosts(self, n) for n in self.params}
        self.rd.event("postgres", outcome="ready", seconds=round(time.monotonic() - t0, 2),
                      hosts={f"{r.host}/{r.name}": r.info.get("prepare_s")
                             for r in self.remotes})
        return self.info()

    def warnings(self) -> list[str]:
        return list(self._warnings)

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for r in self.remotes:
            p = self.params[r.name]
            w = out.setdefault(r.name, {"driver": p.driver, "size": p.size,
                                        "clients": p.clients, "threads": p.threads,
                                        "rate": p.rate, "hosts": {}})
            w["hosts"][r.host] = {**r.info, **({"lost": r.lost} if r.lost else {})}
        return out

    # -- the load ---------------------------------------------------------------------------
    def start(self, procs: Mapping[str, str]) -> None:
        """pgbench on every host from one instant T0, at which the group then starts fio
        (`RunnerGroup.instant`): T0 leaves each host's start file time to get there (3 times
        what one remote command took when the hosts were checked, at least 1 s)."""
        hosts = sorted({r.host for r in self.remotes})
        spawn = max((self.group.spawn_s.get(h, 0.0) for h in hosts), default=0.0)
        t0 = time.time() + max(1.0, 0.5 + 3 * spawn) + 0.05 * len(hosts)
        began = time.monotonic()
        with ThreadPoolExecutor(max_workers=min(16, len(hosts) or 1)) as pool:
            list(pool.map(self._go, hosts, [t0] * len(hosts), [procs.get(h) for h in hosts]))
        self.rows.t0 = self.group.instant = t0
        self.rd.event("postgres", outcome="started", t0=round(t0, 3),
                      start_files_s=round(time.monotonic() - began, 3),
                      late=time.time() > t0)

    def _go(self, host: str, t0: float, procs: str | None) -> None:
        offset = float(self.group.facts.get(host, {}).get("clock_offset_ms") or 0) / 1000
        go = json.dumps({"at": t0 + offset, "seconds": self.plan.total_seconds,
                         **({"procs": procs} if procs else {})}).encode()
        for r in self.remotes:
            if r.host == host:
                try:
                    self._put(host, f"pg-{r.name}.go", go)
                except UserError as e:
                    r.rows.put({"error": f"cannot start pgbench: {e}"})

    def poll(self, now: float, origin: float, final: bool = False) -> list[Sample]:
        """The merged seconds complete so far; each host's own go to its series."""
        return self.rows.poll(now, origin, final)

    def finish(self, now: float, timeout: float = END_GRACE_S) -> list[Sample]:
        """Wait for every pgbench to end (its -T ends with the run), then the last seconds."""
        end = time.monotonic() + timeout
        while any(not r.ended for r in self.remotes) and time.monotonic() < end:
            for r in self.remotes:
                self.rows.drain(r)
            time.sleep(0.1)
        for r in self.remotes:
            if not r.ended:
                self.rows.lose(r, f"pgbench did not end within {timeout:g}s of the run's end")
        return self.poll(now, self.rows.origin or now, final=True)

    def end_now(self) -> None:
        self._signal("stop")

    def stop(self) -> list[Sample]:
        """End every pgbench now (the run stops early); the seconds it measured."""
        self._signal("stop")
        end = time.monotonic() + 10
        while any(not r.ended for r in self.remotes) and time.monotonic() < end:
            for r in self.remotes:
                self.rows.drain(r)
            time.sleep(0.1)
        return self.poll(time.time(), self.rows.origin, final=True) if self.rows.origin else []

    def _signal(self, what: str) -> None:
        def put(r: Remote) -> None:
            if r.proc is not None and r.proc.poll() is None and not self.group.is_lost(r.host):
                with contextlib.suppress(UserError):
                    self._put(r.host, f"pg-{r.name}.{what}", b"")
        if self.remotes:
            with ThreadPoolExecutor(max_workers=min(16, len(self.remotes))) as pool:
                list(pool.map(put, self.remotes))

    def cleanup(self, keep: bool) -> dict[str, Any]:
        """Every database stopped and its copy removed (the agents do it and end; `keep`
        applies to this machine only). An agent that does not end in time has its session
        ended (it removes the copy on SIGTERM); a lost host's is not waited for (cut off,
        its agent ends the load and removes the copy by itself when pgbench's time is up)."""
        self._signal("stop")
        end = time.monotonic() + 60
        for r in self.remotes:
            if r.proc is None:
                continue
            try:
                if self.group.is_lost(r.host):
                    raise subprocess.TimeoutExpired("agent", 0)
                r.proc.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    r.proc.stdin.close()  # the host TERMs the agent (hosts/ssh.py)
                try:
                    r.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    r.proc.kill()
                    r.proc.wait()
            self.rows.drain(r)
        return self.info()

    def running(self) -> bool:
        return any(not r.ended for r in self.remotes)

    def idle_run(self) -> IdleRun:
        # the axis (measured window, steps) starts with pgbench, at T0: not now, seconds
        # before it (the start files' lead), which no database second would grade
        return IdleRun(self, self.rows.t0)  # type: ignore[arg-type]


class OnHosts:
    """A postgres workload's databases on their hosts, as the steps reach them (pg_backup)."""

    def __init__(self, owner: HostDatabases, name: str):
        self.owner, self.name = owner, name

    def servers(self) -> dict[str, DatabaseServer]:
        """Its server on each host still in the run (postgres/servers.py)."""
        o = self.owner
        assert o.plan.cluster is not None
        return {r.host: DatabaseServer(o.group.runners[r.host], r.server["bindir"],
                                       r.server["socket"], int(r.server["port"]),
                                       str(o.plan.cluster.hosts[r.host].host.path))
                for r in o.remotes if r.name == self.name and r.server and not r.lost
                and not o.group.is_lost(r.host)}
