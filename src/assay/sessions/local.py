"""The load on this machine: the platform's target (or a raw device), locked for the run, with
fio in the run's blkio group and the databases and integrity writers beside it."""

from __future__ import annotations

import shutil
from pathlib import Path

from assay.exitcodes import RunAborted, UserError
from assay.hosts import cgroup
from assay.hosts.fingerprint import block_device_facts
from assay.integrity import lifecycle as integrity
from assay.participants.base import Where
from assay.participants.blkio import BlkioGroups
from assay.participants.databases import Databases
from assay.participants.integrity import Integrity
from assay.participants.issuelog import IssueLog
from assay.participants.lags import HostLags
from assay.participants.utilisation import Utilisation
from assay.plan import LOCAL, PREFILL_JOB, RUN_JOB
from assay.plan.model import variables
from assay.platforms.fsbase import FsPlatform
from assay.platforms.lock import TargetLock
from assay.platforms.safety import check_block_device, device_state_dir
from assay.postgres.sidecar import Sidecars
from assay.prefill.files import DataFiles, Run, claim, data_files, read, refuse_foreign
from assay.results.record import parse_record
from assay.results.rundir import RunDir
from assay.run_options import signals_held
from assay.runinfo import initial_record
from assay.runners.base import FioRun, Runner
from assay.runners.local import run_here
from assay.scenario.units import format_size
from assay.sessions.base import Session


class LocalSession(Session):
    runner: Runner | None = None
    lock: TargetLock | None = None  # one run per target
    directory: Path | None = None  # the data files' directory (or a device's manifest)
    files: DataFiles | None = None  # and what its manifest says of them

    def open(self) -> None:
        plan = self.plan
        if plan.hosts != [LOCAL]:
            raise UserError(f"this version runs on the local host only (plan: {plan.hosts})")
        self.directory = directory = self._target()
        direct = self.env["ASSAY_DIRECT"] == "1"
        self.lock = TargetLock(directory).acquire(repr(plan.name))
        device = plan.scenario.target.device
        self.files = files = data_files(plan, LOCAL, str(directory), bool(device))
        read(run_here, files)
        refuse_foreign(files, self.opt.force)
        with signals_held():  # from its first instant, the run directory holds a record
            self.run_dir = rd = RunDir.create(self.opt.results_root, plan.name)
            self.info = initial_record(plan, rd.id, self.platform, directory, direct,
                                       self.opt.parent, self.env)
            rd.write_record(parse_record(self.info))
        rd.write_text("scenario.yaml", plan.resolved.text)
        self.runner = runner = self.opt.runner(LOCAL, rd.host_dir(LOCAL))
        if not device:
            runner.prepare(directory, sorted({w.subdir for w in plan.resolved.workloads.values()
                                              if w.subdir}))
        claim(run_here, files, None if device else shutil.disk_usage(directory).free)
        for name, text in plan.jobfiles[LOCAL].items():
            runner.write_job(name, text)
        databases = Sidecars(plan, rd.path, rd.id, runner)
        complaint = runner.check_job(RUN_JOB, self.env) if plan.jobs else None
        if complaint:
            raise RunAborted(f"fio rejected the job file: {complaint}")
        databases.check()  # PostgreSQL installed, before any IO
        self._warnings(direct)
        # this host's blkio group, as each host of a cluster run has its own
        devices = self.platform.devices() if isinstance(self.platform, FsPlatform) else []
        self.blkio = BlkioGroups.open(plan, rd.id, {LOCAL: runner}, (),
                                      {LOCAL: str(plan.scenario.target.device or directory)},
                                      {LOCAL: str(cgroup.BLKIO_ROOT)}, devices)
        if self.blkio:
            self.info["target"]["blkio_limits"] = self.blkio.in_force()[LOCAL]
        self._participants(databases, directory, direct)
        rd.write_record(parse_record(self.info))

    def _participants(self, databases: Sidecars, directory: Path, direct: bool) -> None:
        """Beside fio, in their start order: the databases first (the clean-up stops them
        whatever fio does), the issue-log reader last (it waits for the logs fio opens)."""
        plan, rd, opt = self.plan, self.run_dir, self.opt
        assert rd and self.runner and self.files
        hashes = self.files.hashes  # what each file holds, as its integrity record says
        if databases:  # the servers join this host's blkio group, as fio does
            self.participants.append(Databases(databases, directory, direct, opt.fresh,
                                               opt.keep, self.platform.temporary,
                                               self._procs(), self.console))
        session = integrity.open_session(plan.resolved, plan.streams, rd.id, directory,
                                         rd.path, direct, lambda f: hashes.get(f, ""))
        if session:
            self.participants.append(Integrity(session, plan.total_seconds))
        lags = HostLags(plan, rd, each_host=False)  # this host's rows are the run's
        if lags.needed(LOCAL):
            self.participants.append(IssueLog(lags, {LOCAL: self.runner}, ()))
        self.participants.append(Utilisation())  # this host's, each second
        self.plug_in(Where(plan, rd, {LOCAL: self.runner}, ()))

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

    def data_files(self) -> dict[str, tuple[Run, DataFiles]]:
        assert self.files
        return {LOCAL: (run_here, self.files)}

    def start_prefill(self, sections: dict[str, list[str]]) -> FioRun:
        assert self.runner
        return self.runner.start(PREFILL_JOB, self.env, sections=sections[LOCAL])

    def start(self) -> FioRun:
        assert self.runner
        self.runner.confine(Path(self.blkio.procs()[LOCAL]) if self.blkio else None)
        return self.runner.start(RUN_JOB, self.env)

    def clock(self) -> float:
        assert self.runner
        return self.runner.clock()

    def fetch_logs(self) -> list[Path]:
        return self.runner.fetch_logs() if self.runner else []

    def close(self) -> None:
        if self.runner:
            self.runner.close()

    def release(self) -> None:
        if self.lock:
            self.lock.release()
