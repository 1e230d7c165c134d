"""One postgres workload of a run (`PostgresLoad`): its server's configuration, its working
cluster prepared from the loaded dataset, pgbench started beside fio and checked each second,
then stopped and removed. The run's set of them is `Sidecars` (postgres/sidecar.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.agent import pgserver
from assay.agent.pgfold import Fold
from assay.exitcodes import RunAborted, UserError
from assay.metrics.sampler import ComponentSpec, Sample
from assay.postgres.cluster import Cluster, bindir, processes, reachable
from assay.postgres.dataset import SCRIPTS, discard, ensure_loaded, tpcc_file, working_copy
from assay.postgres.hostrows import Names, rates
from assay.postgres.servers import DatabaseServer
from assay.runners.base import Runner
from assay.scenario.units import format_size
from assay.workloads.postgres import MIX, Params

MIN_SHARED_BUFFERS = 16 << 20


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
    host: str = "local"  # where it runs: this machine, the run's one host
    runner: Runner | None = None  # that host's, for the agent's pgbackup (pg_backup)
    directory: Path | None = None  # the target directory it is in
    cluster: Cluster | None = None
    work: Path | None = None
    waldir: Path | None = None
    pgbench: subprocess.Popen[bytes] | None = None
    fold: Fold | None = None  # its transaction log, folded as a host's agent folds it
    ended: bool = False  # asked to end before its -T (the timeline's `end`)
    info: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def prepare(self, directory: Path, fresh: bool, console: Console, direct: bool) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        base = directory / self.p.subdir if self.p.subdir else directory
        base.mkdir(parents=True, exist_ok=True)
        wal = Path(self.p.wal_path) if self.p.wal_path else None
        for d in (base, *([wal] if wal else [])):
            d.mkdir(parents=True, exist_ok=True)
            problem = reachable(d)
            if problem:
                raise UserError(f"workload {self.name}: {problem}")
        bins = bindir()
        version = pgserver.version(bins)
        dataset = ensure_loaded(self.name, self.p, base, self.state, fresh, console, bins)
        self.work = base / f"pg-{self.name}.run"
        self.waldir = wal / f"pg-{self.name}.wal" if wal else None
        self._remember()  # before any process exists: `assay clean` finds what to remove
        working_copy(base, self.name, self.waldir)
        conf = settings(self.p, dataset["database_bytes"], direct, self.backup)
        self.cluster = Cluster(self.work, self.state / "server.log", bins)
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
        return [str(self.cluster.bin / "pgbench"), "-P", "1",
                *pgbench_options(self.p, str(self.state / "tx"), lambda s: str(tpcc_file(s))),
                "postgres"]

    def servers(self) -> dict[str, DatabaseServer]:
        """Its server while it runs, on the run's one host (postgres/servers.py)."""
        c = self.cluster
        if c is None or c.socket_dir is None or self.runner is None or self.directory is None:
            return {}
        return {self.host: DatabaseServer(self.runner, str(c.bin), str(c.socket_dir), c.port,
                                          str(self.directory))}

    def start(self, seconds: float, procs: str | None) -> None:
        """pgbench for `seconds`; the server's processes first join the run's blkio group at
        `procs` (its cgroup.procs), as fio does (the postmaster's later children inherit it)."""
        assert self.cluster is not None and self.work is not None
        if procs:
            for pid in processes(self.work):
                with contextlib.suppress(OSError):
                    Path(procs).write_text(str(pid))
        argv = [*self.argv()[:-1], "-T", str(max(1, round(seconds))), "postgres"]
        self.info["pgbench"] = " ".join(argv)
        started = time.time()
        with open(self.state / "pgbench.txt", "ab") as out:
            self.pgbench = subprocess.Popen(argv, env=self.cluster.env(), stdout=out,
                                            stderr=subprocess.STDOUT, cwd=self.state,
                                            start_new_session=True)
        self.fold = self.folding(started)

    def folding(self, started: float) -> Fold:
        """Its transaction log from pgbench's launch (epoch s), folded as a host's agent folds
        it: second k is [started+k, started+k+1)."""
        return Fold(self.state / "tx", started, dict(enumerate(Names.of(self.name, self.p).types)),
                    bool(self.p.rate))

    def seconds(self, now: float, origin: float, warmup: float,
                specs: dict[str, ComponentSpec], final: bool = False) -> list[Sample]:
        """Its seconds finished by `now` (epoch s; all of them when `final`) on the run's time
        axis (`origin`: its t=0, epoch s), as a host's rows are made samples."""
        if self.fold is None:
            return []
        names = Names.of(self.name, self.p)
        out: list[Sample] = []
        for row in self.fold.rows(now, final):
            t = self.fold.start + row["s"] + 1 - origin
            phase = "warmup" if t - 0.5 < warmup else "run"
            out += names.samples(row["streams"], t, phase, rates(specs, t))
        return out

    def check(self) -> None:
        """RunAborted when the server or pgbench died before its time."""
        assert self.cluster is not None
        if not self.cluster.alive():
            raise RunAborted(f"workload {self.name}: {self.cluster.death()}")
        if self.pgbench is not None and not self.ended and self.pgbench.poll() not in (None, 0):
            server = self.cluster.reason()  # pgbench only saw its sessions fail
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

    def end(self) -> None:
        """The load ends before pgbench's -T: its clients aborted by that are its end."""
        self.ended = True
        self.stop_pgbench()

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
        if self.fold is not None:
            self.info["transactions"] = self.fold.totals
        if keep or self.work is None:
            return
        discard(self.work, self.waldir)
        self.info["removed"] = True


def pgbench_options(p: Params, log_prefix: str, script: Callable[[str], str]) -> list[str]:
    """pgbench's options for a workload, here or on a host: where its per-transaction log
    and the TPC-C-like scripts (`script(name)`) are is the caller's."""
    out = ["-n", "-c", str(p.clients), "-j", str(p.threads), "-l", f"--log-prefix={log_prefix}"]
    if p.rate:
        out += ["-R", f"{p.rate:g}"]
    if p.latency_limit:
        out += [f"--latency-limit={p.latency_limit * 1000:g}"]
    if p.tries > 1:
        out += [f"--max-tries={p.tries}"]
    if p.driver == "pgbench":
        return [*out, "-b", p.script]
    return [*out, "-D", f"warehouses={p.size}",
            *[f"-f{script(s)}@{MIX[s]}" for s in SCRIPTS]]
