"""The load on this machine: the platform's target (or a raw device), locked for the run, with
fio in the run's blkio group and the databases and integrity writers beside it."""

from __future__ import annotations

from pathlib import Path

from assay.exitcodes import RunAborted, UserError
from assay.hosts import cgroup
from assay.hosts.cgroup import BlkioGroup
from assay.hosts.fingerprint import block_device_facts
from assay.integrity import lifecycle as integrity
from assay.metrics.duetime import STREAM, logged_jobs
from assay.plan import LOCAL, RUN_JOB
from assay.plan.model import variables
from assay.platforms.lock import TargetLock
from assay.platforms.safety import check_block_device, check_files, device_state_dir
from assay.postgres.sidecar import Sidecars
from assay.prefill import data_hash, prefill
from assay.results.blocklog import BlockLog
from assay.results.record import parse_record
from assay.results.rundir import RunDir
from assay.run_options import signals_held
from assay.runinfo import initial_record
from assay.runners.base import FioRun, Runner
from assay.runners.issuelog import IssueLogs
from assay.scenario.units import format_size
from assay.sessions.base import Session


class LocalSession(Session):
    runner: Runner | None = None
    lock: TargetLock | None = None  # one run per target
    directory: Path | None = None  # the data files' directory (or a device's manifest)

    def open(self) -> None:
        plan = self.plan
        if plan.hosts != [LOCAL]:
            raise UserError(f"this version runs on the local host only (plan: {plan.hosts})")
        self.directory = directory = self._target()
        direct = self.env["ASSAY_DIRECT"] == "1"
        self.lock = TargetLock(directory).acquire(repr(plan.name))
        if not plan.scenario.target.device:
            check_files(directory, [n for n, _ in plan.files], self.opt.force)
        with signals_held():  # from its first instant, the run directory holds a record
            self.run_dir = rd = RunDir.create(self.opt.results_root, plan.name)
            self.info = initial_record(plan, rd.id, self.platform, directory, direct,
                                       self.opt.parent, self.env)
            rd.write_record(parse_record(self.info))
        rd.write_text("scenario.yaml", plan.resolved.text)
        self.runner = runner = self.opt.runner(LOCAL, rd.host_dir(LOCAL))
        if not plan.scenario.target.device:
            runner.prepare(directory, sorted({w.subdir for w in plan.resolved.workloads.values()
                                              if w.subdir}))
        for name, text in plan.jobfiles[LOCAL].items():
            runner.write_job(name, text)
        self.databases = Sidecars(plan, rd.path, rd.id)
        complaint = runner.check_job(RUN_JOB, self.env) if plan.jobs else None
        if complaint:
            raise RunAborted(f"fio rejected the job file: {complaint}")
        self.databases.check()  # PostgreSQL installed, before any IO
        self._warnings(direct)
        if plan.scenario.target.throttle and not cgroup.available():
            raise UserError("target.throttle needs cgroup v1 blkio (root, mounted at "
                            f"{cgroup.BLKIO_ROOT})")
        if cgroup.available():
            self.blkio = BlkioGroup(f"assay/{rd.id}").create()
            self.platform.apply_limits(self.blkio)
            self.info["target"]["blkio_limits"] = self.blkio.limits()
        self.integrity = integrity.open_session(plan.resolved, plan.streams, rd.id, directory,
                                                rd.path, direct, lambda f: data_hash(plan, f))
        rd.write_record(parse_record(self.info))

    def _target(self) -> Path:
        """The directory that holds the data files (or a device's manifest); fio's variables."""
        target = self.plan.scenario.target
        device = target.device
        if not device:
            directory, direct = self.platform.prepare(), self.platform.direct_io()
        else:
            check_block_device(device, self.opt.force)
            size = block_device_facts(device).get("size_bytes") or 0
            if size < self.plan.dataset_bytes:
                raise UserError(f"{device} holds {format_size(size)}; the dataset needs "
                                f"{format_size(self.plan.dataset_bytes)}")
            directory, direct = device_state_dir(device), target.direct is not False
        self.env = variables(directory.resolve(), direct)
        return directory

    def _warnings(self, direct: bool) -> None:
        plan = self.plan
        if not direct:
            self.warn("the target does not support O_DIRECT: IO goes through the page cache "
                      "and results flatter the storage")
        if 0 < self.info["target"].get("dataset_to_ram", 0) < 1 and not direct:
            self.warn("the dataset fits in RAM and IO is buffered: you are measuring memory")
        if plan.warmup > plan.duration:
            self.warn(f"the warm-up ({plan.warmup:g}s) is longer than the measured time "
                      f"({plan.duration:g}s): most of the run is not graded")

    def prefill(self) -> None:
        assert self.run_dir and self.runner and self.directory
        if self.integrity:
            self.integrity.prefill()
        if self.plan.files:  # a database-only run has no fio files
            self.info["prefill"] = prefill(self.plan, self.directory, self.runner, self.run_dir,
                                           self.console, fresh=self.opt.fresh, env=self.env,
                                           device=self.plan.scenario.target.device)
        self.prepare_databases(self.directory, self.env.get("ASSAY_DIRECT") == "1")

    def start(self) -> FioRun:
        assert self.runner
        self.runner.confine(self.blkio.path / "cgroup.procs" if self.blkio else None)
        return self.runner.start(RUN_JOB, self.env)

    def clock(self) -> float:
        assert self.runner
        return self.runner.clock()

    def issue_logs(self) -> IssueLogs | None:
        """The agent reads the fixed-rate jobs' issue logs beside fio (runners/issuelog.py);
        its rows are the run's `lags` stream."""
        assert self.run_dir and self.runner
        jobs = logged_jobs(self.plan.jobfiles.get(LOCAL, {}).get(RUN_JOB, ""))
        if not jobs:
            return None
        store = BlockLog(self.run_dir.path, STREAM)
        return IssueLogs(self.runner, [j.spec() for j in jobs],
                         lambda row: store.append([row]), store.close).start()

    def fetch_logs(self) -> list[Path]:
        return self.runner.fetch_logs() if self.runner else []

    def close(self) -> None:
        if self.runner:
            self.runner.close()

    def release(self) -> None:
        if self.lock:
            self.lock.release()
