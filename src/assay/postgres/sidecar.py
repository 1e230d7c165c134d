"""Database workloads beside fio: prepared before the load, started with it, polled for
per-second samples on the run's time axis, stopped and removed whatever ends the run.

The engine knows them through `Sidecars` only: `prepare` (tools, load, working cluster),
`start` (pgbench; the server's processes join the run's blkio group so `throttle` reaches
them), `poll` (samples; RunAborted when the postmaster or pgbench dies), `finish`, `stop`,
`cleanup`. A scenario without fio workloads runs on `IdleRun`, a stand-in for fio's process
that ends when pgbench does, so the engine needs no fio at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from assay.exitcodes import RunAborted, UserError
from assay.hosts.cgroup import BlkioGroup
from assay.metrics.sampler import ComponentSpec, Sample
from assay.postgres.cluster import Cluster, account, bindir, kill_all, processes, reachable
from assay.postgres.dataset import SCRIPTS, ensure_loaded, loaded_paths, tpcc_file, working_copy
from assay.postgres.txlog import Components, TxLog
from assay.runners.base import FioRunBase
from assay.scenario.models import ResolvedScenario
from assay.scenario.units import format_size
from assay.workloads.postgres import MIX, Params

KIND = "postgres"
MIN_SHARED_BUFFERS = 16 << 20
STATE = "postgres"  # run directory sub-directory: per workload, its cluster's state and logs



class Planned(Protocol):
    """What the sidecars read of a plan (plan/model.py's Plan), without importing plan."""

    @property
    def resolved(self) -> ResolvedScenario: ...
    @property
    def specs(self) -> Sequence[ComponentSpec]: ...
    @property
    def warmup(self) -> float: ...
    @property
    def total_seconds(self) -> float: ...


def fio_specs(plan: Planned) -> list[ComponentSpec]:
    """The components fio's dumps feed (database components come from their sidecar)."""
    return [c for c in plan.specs if c.jobs]


def settings(p: Params, dataset: int, direct: bool, backup: bool) -> dict[str, str]:
    """The server's configuration: shared_buffers against the dataset, durable commits. With
    no backup stream and a target that takes O_DIRECT, the WAL is written with O_DIRECT
    (wal_level minimal + open_datasync), so a blkio throttle, which sees only direct IO under
    cgroup v1, reaches the commits."""
    sb = p.shared_buffers or max(MIN_SHARED_BUFFERS, int(dataset * p.cache))
    out = {"shared_buffers": f"{sb // 1024}kB", "max_connections": str(p.clients + 10),
           "fsync": "on", "synchronous_commit": "on", "full_page_writes": "on",
           "log_checkpoints": "on", "max_wal_size": "1GB"}
    if backup:
        out.update({"wal_level": "replica", "max_wal_senders": "4"})
    elif direct:
        out.update({"wal_level": "minimal", "max_wal_senders": "0",
                    "wal_sync_method": "open_datasync"})
    out.update({k: str(v) for k, v in p.settings.items()})
    return out


def caching(name: str, database: int, shared_buffers: int) -> list[str]:
    """Warnings that teach: a database its caches hold is not read from the storage."""
    out = []
    if shared_buffers >= database:
        out.append(f"{name}: the database ({format_size(database)}) fits in shared_buffers "
                   f"({format_size(shared_buffers)}): its reads never reach the storage")
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if database < ram / 2:
        out.append(f"{name}: the database ({format_size(database)}) fits in the page cache "
                   f"({format_size(ram)} RAM): reads come mostly from memory; commits (WAL) "
                   f"and checkpoints still reach the storage")
    return out


@dataclass
class PostgresLoad:
    """One postgres workload of a run."""

    name: str
    p: Params
    state: Path  # its directory in the run directory
    run_id: str
    backup: bool = False  # a pg_backup step needs replication connections
    cluster: Cluster | None = None
    work: Path | None = None
    waldir: Path | None = None
    pgbench: subprocess.Popen[bytes] | None = None
    log: TxLog | None = None
    info: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def prepare(self, directory: Path, fresh: bool, console: Console, direct: bool) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        base = directory / self.p.subdir if self.p.subdir else directory
        base.mkdir(parents=True, exist_ok=True)
        wal = Path(self.p.wal_path) if self.p.wal_path else None
        for d in (base, *([wal] if wal else [])):
            d.mkdir(parents=True, exist_ok=True)
            problem = reachable(d)
            if problem:
                raise UserError(f"workload {self.name}: {problem}")
        bins = bindir()
        version = subprocess.run([str(bins / "postgres"), "--version"], capture_output=True,
                                 text=True).stdout.strip()
        dataset = ensure_loaded(self.name, self.p, base, self.state, fresh, console, version)
        golden, _ = loaded_paths(base, self.name)
        self.work = base / f"pg-{self.name}.run"
        self.waldir = wal / f"pg-{self.name}.wal" if wal else None
        self._remember()  # before any process exists: `assay clean` finds what to remove
        working_copy(golden, self.work, self.waldir)
        conf = settings(self.p, dataset["database_bytes"], direct, self.backup)
        self.cluster = Cluster(self.work, self.state / "server.log")
        self.cluster.start(conf)
        sb = int(conf["shared_buffers"].removesuffix("kB")) * 1024
        self.info = {"server_version": version, "driver": self.p.driver,
                     "size": self.p.size, "clients": self.p.clients, "threads": self.p.threads,
                     "rate": self.p.rate, "data_directory": str(self.work),
                     "wal_directory": str(self.waldir or self.work / "pg_wal"),
                     "settings": conf, "dataset": dataset,
                     "cache_to_dataset": round(sb / max(dataset["database_bytes"], 1), 3)}
        self._remember()
        self.warnings = caching(self.name, dataset["database_bytes"], sb)

    def _remember(self) -> None:
        # whole or not at all: a later run cleaning up after a crash reads it
        tmp = self.state / "cluster.json.tmp"
        tmp.write_text(json.dumps(
            {"data": str(self.work), "wal": str(self.waldir) if self.waldir else None,
             "pid": self.cluster.pid if self.cluster else None,
             "socket": str(self.cluster.socket_dir) if self.cluster and self.cluster.socket_dir
             else None}, indent=1) + "\n")
        tmp.replace(self.state / "cluster.json")

    def argv(self) -> list[str]:
        assert self.cluster is not None
        p = self.p
        out = [str(self.cluster.bin / "pgbench"), "-n", "-c", str(p.clients), "-j",
               str(p.threads), "-P", "1", "-l", f"--log-prefix={self.state / 'tx'}"]
        if p.rate:
            out += ["-R", f"{p.rate:g}"]
        if p.latency_limit:
            out += [f"--latency-limit={p.latency_limit * 1000:g}"]
        if p.tries > 1:
            out += [f"--max-tries={p.tries}"]
        if p.driver == "pgbench":
            out += ["-b", p.script]
        else:
            out += ["-D", f"warehouses={p.size}"]
            out += [f"-f{tpcc_file(s)}@{MIX[s]}" for s in SCRIPTS]
        return [*out, "postgres"]

    def start(self, seconds: float, group: BlkioGroup | None) -> None:
        assert self.cluster is not None and self.work is not None
        if group is not None:  # the postmaster's later children inherit the group
            for pid in processes(self.work):
                with contextlib.suppress(OSError):
                    group.join(pid)
        argv = [*self.argv()[:-1], "-T", str(max(1, round(seconds))), "postgres"]
        self.info["pgbench"] = " ".join(argv)
        streams = {i: s for i, s in enumerate(SCRIPTS)} if self.p.driver == "tpcc" else {}
        started = time.time()
        with open(self.state / "pgbench.txt", "ab") as out:
            self.pgbench = subprocess.Popen(argv, env=self.cluster.env(), stdout=out,
                                            stderr=subprocess.STDOUT, cwd=self.state,
                                            start_new_session=True)
        self.log = TxLog(self.state / "tx", Components(self.name, streams, self.p.rate), started)

    def check(self) -> None:
        """RunAborted when the server or pgbench died before its time."""
        assert self.cluster is not None
        if not self.cluster.alive():
            server = self.cluster.server_reason()
            raise RunAborted(f"workload {self.name}: {self.cluster.death()}"
                             + (f"; the server: {server}" if server else ""))
        if self.pgbench is not None and self.pgbench.poll() not in (None, 0):
            server = self.cluster.server_reason()  # pgbench only saw its sessions fail
            raise RunAborted(f"workload {self.name}: "
                             + (f"the server: {server}; " if server else "")
                             + f"pgbench exited with status {self.pgbench.returncode}: "
                             f"{self.pgbench_tail()}")

    def pgbench_tail(self, lines: int = 3) -> str:
        with contextlib.suppress(OSError):
            text = (self.state / "pgbench.txt").read_text(errors="replace").splitlines()
            errors = [x for x in text if not x.startswith("progress:")]
            return " | ".join(errors[-lines:])
        return ""

    def stop_pgbench(self) -> None:
        """End pgbench so that it writes out its transaction logs: they are buffered (a few
        KiB per thread, seconds of transactions) and a signal would lose them. Its server
        sessions are ended (or the server is gone), its clients abort and it exits; SIGINT,
        then SIGKILL, only if it does not within 5 s."""
        if self.pgbench is None or self.pgbench.poll() is not None:
            return
        if self.cluster is not None and self.cluster.alive():
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                  "WHERE application_name = 'pgbench'", check=False, timeout=5)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.pgbench.wait(5)
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgbench.pid, signal.SIGINT)
        try:
            self.pgbench.wait(5)
        except subprocess.TimeoutExpired:
            self.pgbench.kill()
            self.pgbench.wait()

    def cleanup(self, keep: bool) -> None:
        self.stop_pgbench()
        if self.cluster is not None:
            self.cluster.stop()
        if self.log is not None:
            self.info["transactions"] = self.log.totals
        if keep or self.work is None:
            return
        for d in (self.work, self.waldir):
            if d is not None:
                kill_all(d)
                shutil.rmtree(d, ignore_errors=True)
        self.info["removed"] = True


class Sidecars:
    """The run's database workloads."""

    def __init__(self, plan: Planned, run_dir: Path, run_id: str):
        backup = any(s.action == "pg_backup" for s in plan.resolved.steps)  # plan-checked
        self.loads = [PostgresLoad(n, w, run_dir / STATE / n, run_id, backup)
                      for n, w in plan.resolved.workloads.items()
                      if isinstance(w, Params)]
        self.warmup = plan.warmup
        self.seconds = plan.total_seconds
        self.origin: float | None = None
        self.databases: dict[str, PostgresLoad] = {}  # running, for actions (pg_backup)

    def __bool__(self) -> bool:
        return bool(self.loads)

    def check(self) -> None:
        """UserError naming the package when PostgreSQL or its user is missing."""
        if self.loads:
            bindir()
            account()

    def prepare(self, directory: Path, fresh: bool, console: Console, direct: bool,
                temporary: bool = False) -> dict[str, Any]:
        if not self.loads:
            return {}
        if temporary:  # our own temporary target: the server's user must reach into it
            directory.chmod(0o711)
        for load in self.loads:
            load.prepare(directory, fresh, console, direct)
            self.databases[load.name] = load
        return self.info()

    def warnings(self) -> list[str]:
        return [w for load in self.loads for w in load.warnings]

    def info(self) -> dict[str, Any]:
        return {load.name: load.info for load in self.loads}

    def start(self, group: BlkioGroup | None) -> None:
        for load in self.loads:
            load.start(self.seconds, group)

    def poll(self, now: float, origin: float, final: bool = False) -> list[Sample]:
        """The finished seconds of every database; RunAborted if one died."""
        # fio's t=0 (its jobs' start) is known from its first dump, before the first
        # database second is emitted (GRACE_S later): both series share one axis
        self.origin = origin
        out: list[Sample] = []
        for load in self.loads:
            if load.log is None:
                continue
            if not final:
                load.check()
            out += load.log.poll(now, self.origin, self.warmup, final)
        return out

    def finish(self, now: float, timeout: float = 30.0) -> list[Sample]:
        """Wait for pgbench to end (its -T ends with the run), then the last seconds."""
        end = time.monotonic() + timeout
        for load in self.loads:
            while load.pgbench is not None and load.pgbench.poll() is None \
                    and time.monotonic() < end:
                load.check()
                time.sleep(0.1)
            load.stop_pgbench()
            load.check()
        return self.poll(now, self.origin or now, final=True)

    def stop(self) -> list[Sample]:
        for load in self.loads:
            load.stop_pgbench()
        return self.poll(time.time(), self.origin or time.time(), final=True) \
            if self.origin else []

    def cleanup(self, keep: bool) -> dict[str, Any]:
        """Stop and remove every database (best effort: each one whatever the others do)."""
        self.databases.clear()
        for load in self.loads:
            try:
                load.cleanup(keep)
            except Exception as e:  # noqa: BLE001 - the run must still end with a record
                load.info["cleanup_error"] = f"{type(e).__name__}: {e}"
        return self.info()

    def running(self) -> bool:
        return any(x.pgbench is not None and x.pgbench.poll() is None for x in self.loads)

    def idle_run(self) -> IdleRun:
        return IdleRun(self)


class IdleRun(FioRunBase):
    """fio's place in a run without fio workloads: no documents, ends when pgbench does."""

    def __init__(self, sidecars: Sidecars):
        self.sidecars = sidecars
        self.started = time.time()
        self.last_doc: dict[str, Any] | None = None
        self._stopped = False

    def documents(self, poll: float = 0.2) -> Iterator[dict[str, Any] | None]:
        while not self._stopped and self.sidecars.running():
            time.sleep(poll)
            yield None

    def stop(self) -> None:
        self._stopped = True

    def wait(self) -> int:
        return 0

    def stderr_tail(self, lines: int = 5) -> str:
        return ""


def describe(info: dict[str, Any]) -> str:
    """One line per database for the console."""
    return "; ".join(f"{n}: {i.get('driver')} size {i.get('size')}, dataset "
                     f"{format_size(i.get('dataset', {}).get('database_bytes', 0))}"
                     for n, i in info.items())
