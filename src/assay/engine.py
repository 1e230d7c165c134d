"""One run: plan → runners → sampler → verdict.

The plan is final (its job files are written as they are); a runner per host carries out fio
(runners/); the sampler turns fio's cumulative dumps into per-second samples; the live
verdict grades them as they come and the final verdict at the end (verdict.py).

The run directory is written as the run goes; whatever ends the run (the verdict, Ctrl-C, a
dying fio, a full disk, a failed action) leaves run.json with a status and a reason, and every
second measured so far.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.cluster import run as cluster
from assay.cluster.group import RunnerGroup
from assay.cluster.postgres import HostDatabases
from assay.console import LiveProgress
from assay.exitcodes import AssayError, RunAborted, UserError
from assay.hosts import cgroup
from assay.hosts.cgroup import BlkioGroup
from assay.hosts.fingerprint import block_device_facts
from assay.hosts.utilisation import HostProbe
from assay.integrity import lifecycle as integrity
from assay.metrics.duetime import STREAM, due_latency, due_windows, logged_jobs
from assay.metrics.sampler import Sample, Sampler, stored_line
from assay.plan import LOCAL, RUN_JOB, Plan
from assay.plan.model import variables
from assay.platforms import driver
from assay.platforms.lock import TargetLock
from assay.platforms.safety import check_block_device, check_files, device_state_dir
from assay.postgres.sidecar import Sidecars, fio_specs
from assay.prefill import data_hash, prefill
from assay.progress import live_line
from assay.report.html import write_report
from assay.results.blocklog import (
    BlockLog,
    RunStreams,
    StoredRows,
    directory_bytes,
    read_rows,
)
from assay.results.catalogue import Catalogue
from assay.results.record import parse_record
from assay.results.rundir import RunDir, read_ndjson
from assay.run_options import (
    Interrupted,
    Outcome,
    RunOptions,
    Timeline,
    default_timeline,
    on_signal,
    signals_held,
)
from assay.runinfo import initial_record
from assay.runners import FioRun, Runner
from assay.runners.base import fio_outcome
from assay.runners.issuelog import IssueLogs
from assay.scenario.units import format_size
from assay.thresholds.live import LiveVerdict
from assay.verdict import grade


class Engine:
    def __init__(self, plan: Plan, options: RunOptions, console: Console):
        self.plan = plan
        self.opt = options
        self.console = console
        self.platform = driver(plan.scenario.target.platform)(plan.scenario.target)
        self.run_dir: RunDir | None = None
        self.runner: Runner | None = None
        self.streams: RunStreams | None = None  # samples and series, on disk as they come
        self.info: dict[str, Any] = {}
        self.env: dict[str, str] = {}  # the job files' variables
        self.cgroup: BlkioGroup | None = None  # fio runs in it, so actions can throttle it
        self.lock: TargetLock | None = None  # one run per target
        self.sidecars: Sidecars | HostDatabases | None = None  # databases beside fio
        self.integrity: integrity.AnySession | None = None  # integrity mode's writers, passes

    # -- the run -------------------------------------------------------------------------
    def execute(self) -> Outcome:
        # our own handlers whatever we inherited (a script's `&` leaves SIGINT ignored)
        old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        status, reason = "aborted", ""
        try:
            directory = self._prepare()
            self._prefill(directory)
            status, reason = self._load()
        except (KeyboardInterrupt, Interrupted):
            status, reason = "interrupted", "interrupted by the user"
        except UserError as e:
            if self.run_dir is not None:  # keep the record of what was refused, then say it
                self._finish("aborted", str(e))
            else:
                self._cleanup()
            raise
        except AssayError as e:
            status, reason = "aborted", str(e)
        except OSError as e:
            status, reason = "aborted", f"{e.strerror or e}" + (f": {e.filename}" if
                                                                  e.filename else "")
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
        return self._finish(status, reason)

    def _target(self) -> tuple[Path, bool]:
        """The directory that holds the data files (or a device's manifest), and O_DIRECT."""
        target = self.plan.scenario.target
        device = target.device
        if not device:
            return self.platform.prepare(), self.platform.direct_io()
        check_block_device(device, self.opt.force)
        size = block_device_facts(device).get("size_bytes") or 0
        if size < self.plan.dataset_bytes:
            raise UserError(f"{device} holds {format_size(size)}; the dataset needs "
                            f"{format_size(self.plan.dataset_bytes)}")
        return device_state_dir(device), target.direct is not False

    def _prepare(self) -> Path:
        plan = self.plan
        if plan.cluster is not None:  # one runner per host, driven as one (assay.cluster)
            self.run_dir, self.runner, self.info = cluster.open_run(plan, self.opt,
                                                                    self.platform, self.console)
            self.cgroup = self.runner.blkio  # each host's group, when the run throttles
            self.streams = RunStreams(self.run_dir.path)
            self.integrity = integrity.open_hosts(plan.resolved, plan.streams, self.run_dir.id,
                                                  self.runner,
                                                  plan.scenario.target.direct is not False,
                                                  self.platform)
            self.sidecars = HostDatabases.open(plan, self.runner, self.run_dir)  # on the hosts
            return self.run_dir.path
        if plan.hosts != [LOCAL]:
            raise UserError(f"this version runs on the local host only (plan: {plan.hosts})")
        directory, direct = self._target()
        self.lock = TargetLock(directory).acquire(repr(plan.name))
        if not plan.scenario.target.device:
            check_files(directory, [n for n, _ in plan.files], self.opt.force)
        self.env = variables(directory.resolve(), direct)
        with signals_held():  # from its first instant, the run directory holds a record
            self.run_dir = rd = RunDir.create(self.opt.results_root, plan.name)
            self.info = initial_record(plan, rd.id, self.platform, directory, direct,
                                       self.opt.parent, self.env)
            rd.write_record(parse_record(self.info))
        rd.write_text("scenario.yaml", plan.resolved.text)
        self.streams = RunStreams(rd.path)
        self.runner = runner = self.opt.runner(LOCAL, rd.host_dir(LOCAL))
        if not plan.scenario.target.device:
            runner.prepare(directory, sorted({w.subdir for w in plan.resolved.workloads.values()
                                              if w.subdir}))
        for name, text in plan.jobfiles[LOCAL].items():
            runner.write_job(name, text)
        self.sidecars = Sidecars(plan, rd.path, rd.id)
        complaint = runner.check_job(RUN_JOB, self.env) if plan.jobs else None
        if complaint:
            raise RunAborted(f"fio rejected the job file: {complaint}")
        self.sidecars.check()  # PostgreSQL installed, before any IO
        if not direct:
            self._warn("the target does not support O_DIRECT: IO goes through the page cache "
                       "and results flatter the storage")
        if 0 < self.info["target"].get("dataset_to_ram", 0) < 1 and not direct:
            self._warn("the dataset fits in RAM and IO is buffered: you are measuring memory")
        if plan.warmup > plan.duration:
            self._warn(f"the warm-up ({plan.warmup:g}s) is longer than the measured time "
                       f"({plan.duration:g}s): most of the run is not graded")
        if plan.scenario.target.throttle and not cgroup.available():
            raise UserError("target.throttle needs cgroup v1 blkio (root, mounted at "
                            f"{cgroup.BLKIO_ROOT})")
        if cgroup.available():
            self.cgroup = BlkioGroup(f"assay/{rd.id}").create()
            self.platform.apply_limits(self.cgroup)
            self.info["target"]["blkio_limits"] = self.cgroup.limits()
        self.integrity = integrity.open_session(plan.resolved, plan.streams, rd.id, directory,
                                                rd.path, direct, lambda f: data_hash(plan, f))
        rd.write_record(parse_record(self.info))
        return directory

    def _warn(self, text: str) -> None:
        self.info.setdefault("warnings", []).append(text)
        self.console.print(f"[yellow]warning:[/] {text}")

    def _prefill(self, directory: Path) -> None:
        assert self.run_dir and self.runner
        if self.integrity:
            self.integrity.prefill()
        if isinstance(self.runner, RunnerGroup):
            if self.plan.files:  # a database-only run has no fio files
                self.info["prefill"] = cluster.prefill(self.plan, self.runner, self.run_dir,
                                                       self.console, self.opt.fresh)
            return self._databases(directory, self.plan.scenario.target.direct is not False)
        if self.plan.files:  # a database-only run has no fio files
            self.info["prefill"] = prefill(self.plan, directory, self.runner, self.run_dir,
                                           self.console, fresh=self.opt.fresh, env=self.env,
                                           device=self.plan.scenario.target.device)
        self._databases(directory, self.env.get("ASSAY_DIRECT") == "1")

    def _databases(self, directory: Path, direct: bool) -> None:
        if self.sidecars:
            self.info["postgres"] = self.sidecars.prepare(
                directory, self.opt.fresh, self.console, direct, self.platform.temporary)
            for text in self.sidecars.warnings():
                self._warn(text)

    def _load(self) -> tuple[str, str]:
        assert self.run_dir and self.runner
        rd, runner, plan = self.run_dir, self.runner, self.plan
        # a cluster's schedule follows its active hosts (RunnerGroup.specs)
        sampler = Sampler([c for c in getattr(runner, "specs", None) or [] if c.jobs]
                          or fio_specs(plan), warmup_s=plan.warmup)
        side = self.sidecars or Sidecars(plan, rd.path, rd.id)
        live = LiveVerdict(plan.thresholds, plan.components, plan.warmup, plan.total_seconds)
        timeline = (self.opt.timeline or default_timeline)(plan, self.platform, rd, self.cgroup)
        if isinstance(runner, RunnerGroup) and hasattr(timeline, "watch"):
            timeline.watch = runner  # type: ignore[union-attr]  # host_fail confirms a loss
        if hasattr(timeline, "databases"):  # pg_backup reaches them through its context
            timeline.databases = side.databases  # type: ignore[union-attr]
        runner.confine(self.cgroup.path / "cgroup.procs" if self.cgroup else None)
        if self.opt.watcher:
            self.opt.watcher.opened(rd.path, live)
        rd.event("load", outcome="started")
        side.start(self.cgroup)  # first: the clean-up stops it whatever fio does
        if self.integrity:
            self.integrity.start()
        issue_logs = self._issue_logs()  # before fio: it waits for the logs fio opens
        try:
            fio = runner.start(RUN_JOB, self.env) if plan.jobs else side.idle_run()
            return self._drive(fio, side, sampler, live, timeline)
        finally:
            if issue_logs:
                issue_logs.finish()

    def _drive(self, fio: FioRun, side: Sidecars | HostDatabases, sampler: Sampler,
               live: LiveVerdict, timeline: Timeline | None) -> tuple[str, str]:
        assert self.run_dir and self.runner
        rd, runner, plan, probe = self.run_dir, self.runner, self.plan, HostProbe()
        sampler.start(fio.started * 1000)
        if timeline:
            timeline.start(runner.clock())
        stop: str | None = None
        try:
            with LiveProgress(self.console, "run", plan.total_seconds) as bar:
                for doc in fio.documents():
                    # the time axis starts when fio's jobs do (known from the first dump)
                    start = sampler.jobs_start_ms or fio.started * 1000
                    t = runner.clock() - start / 1000
                    if timeline:
                        timeline.tick(t)
                    live.add(self._record(side.poll(runner.clock(), start / 1000)))
                    if doc is None:
                        bar.update(t)
                        continue
                    fresh = sampler.feed(doc, runner.clock() * 1000)
                    live.add(self._record(fresh))
                    if fresh:
                        self._host(probe, fresh[0].t)
                    if fresh and fresh[0].dt >= 0.5:  # not fio's closing stub
                        bar.update(t, " | ".join(x for x in (live_line(fresh),
                                                             live.summary()) if x))
                    stop = live.failure() if self.opt.stop_early else None
                    if stop:
                        break
        except BaseException:
            self._stop(fio, sampler, timeline)
            raise
        if stop:  # the verdict is already certain: do not spend the rest of the run
            self._stop(fio, sampler, timeline)
            rd.event("load", outcome="stopped early", reason=stop)
            return "failed", f"stopped early: {stop}"
        rc = fio.wait()
        live.add(self._record(side.finish(runner.clock()) if rc == 0 else side.stop()))
        if timeline:
            timeline.finish()
        rd.event("load", outcome="ended", exit_code=rc)
        if self.integrity:
            self.info["integrity"] = self.integrity.finish(plan.total_seconds)
        failure = getattr(timeline, "failure", None)  # a step that failed as the load ended
        if failure:
            return "aborted", failure
        return fio_outcome(rc, fio)

    def _issue_logs(self) -> IssueLogs | None:
        """The agent reads the fixed-rate jobs' issue logs beside fio, here as on a cluster's
        hosts (runners/issuelog.py); its rows are the run's `lags` stream."""
        assert self.run_dir and self.runner
        if isinstance(self.runner, RunnerGroup):
            return None  # each host's own (cluster/duetime.py)
        jobs = logged_jobs(self.plan.jobfiles.get(LOCAL, {}).get(RUN_JOB, ""))
        if not jobs:
            return None
        store = BlockLog(self.run_dir.path, STREAM)
        return IssueLogs(self.runner, [j.spec() for j in jobs],
                         lambda row: store.append([row]), store.close).start()

    def _stop(self, fio: FioRun, sampler: Sampler, timeline: Timeline | None) -> None:
        """Stop fio and the timeline, keeping the seconds fio reported on its way out."""
        fio.stop()
        with contextlib.suppress(Exception):
            self._record(self.sidecars.stop() if self.sidecars else [])
        try:
            for doc in fio.documents(poll=0.5):
                if doc is None:
                    break
                self._record(sampler.feed(doc, self.runner.clock() * 1000 if self.runner
                                          else None))
        except Exception:  # noqa: S110 - best effort while stopping
            pass
        fio.wait()
        if timeline:
            timeline.finish()

    def _record(self, samples: list[Sample]) -> list[dict[str, Any]]:
        """Append a second's samples to the run directory; returns them as stored."""
        assert self.streams
        out = [s.record() for s in samples]
        series = [s.row() for s in samples]
        self.streams.append(series, [stored_line(r) for r in out])
        if self.opt.watcher and series:
            self.opt.watcher.rows("series", series)
            self.opt.watcher.rows("samples", out)
        return out

    def _host(self, probe: HostProbe, t: float) -> None:
        """This host's utilisation over the second just measured (hosts.ndjson)."""
        assert self.run_dir
        assert self.streams
        rows = [{"t": round(t, 3), "host": LOCAL, **probe.sample()}]
        self.streams.hosts.append(rows)
        if self.opt.watcher:
            self.opt.watcher.rows("hosts", rows)

    # -- the verdict ----------------------------------------------------------------------
    def _finish(self, status: str, reason: str) -> Outcome:
        rd = self.run_dir
        if self.integrity:  # before the cleanup, which may remove a temporary target
            self.info["integrity"] = integrity.close(self.integrity, status)
        self._cleanup()
        if rd is None:  # failed before a run directory existed
            raise RunAborted(reason) if status == "aborted" else Interrupted()
        steps = [e for e in read_ndjson(rd.path / "events.ndjson") if e.get("kind") == "step"]
        try:
            logs = self.runner.fetch_logs() if self.runner else []
        except OSError:
            logs = []
        close = getattr(self.runner, "close", None)
        if close is not None:  # nothing left running on any host
            close()
        try:
            measured = self.streams.close() if self.streams else 0
        except OSError as e:  # the last seconds could not be written: a full results disk
            measured = self.streams.samples.rows if self.streams else 0
            status, reason = "aborted", self._unwritten(reason, e, rd.path)
        samples = StoredRows(rd.path, "samples", measured)  # read back, not held in memory
        group = self.runner if isinstance(self.runner, RunnerGroup) else None
        v = grade(cluster.survivors(self.plan, group), samples, steps, logs,
                  read_rows(rd.path, "hosts"),
                  due_latency(rd.path, due_windows(self.plan)), self.info.get("integrity"),
                  ended_early=status != "done")
        if group is not None:
            self.info["cluster"] = cluster.finish(group, steps)
        if steps:
            self.info["events"] = steps
            self.info.update(v.phases.to_json())
        if status == "done" and not v.coverage.complete:  # no verdict on unmeasured seconds
            status, reason = "incomplete", v.coverage.reason()
            v.ungraded()
        elif status == "done" and not v.results and not self.info.get("cluster"):
            status = "completed"  # nothing to grade: not a pass
        elif status == "done":
            status = "passed" if v.passed and self.info.get("cluster", {}).get("passed", True) \
                else "failed"
            reason = reason or cluster.failure(self.info.get("cluster"))
        elif measured and v.results:
            self.info.setdefault("warnings", []).append(
                f"the run was {status} and graded on the {measured} samples it "
                f"measured: the verdict covers part of the run only")
        self.info.setdefault("warnings", []).extend(v.warnings)
        ended = time.time()
        self.info.update({
            "status": status, "reason": reason, "ended": ended,
            "elapsed_s": round(ended - self.info.get("started", ended), 2),
            "measured_window_s": [self.plan.warmup,
                                  self.plan.warmup + v.coverage.measured_s],
            **v.to_json(),
        })
        cluster.count(self.info)  # each host's and the cluster's own thresholds count too
        try:
            rd.event("run", outcome=status, reason=reason)
            rd.write_record(parse_record(self.info))
        except OSError as e:  # a full or read-only results disk ends the run, said plainly
            status, reason = "aborted", self._unwritten(reason, e, rd.path)
        finally:
            with contextlib.suppress(OSError):
                rd.close()
        try:
            Catalogue(self.opt.results_root).record(rd.path)
        except Exception as e:  # the run is kept whatever happens to the index
            self.console.print(f"[yellow]warning:[/] could not update the catalogue: {e}")
        try:
            write_report(rd.path)
        except Exception as e:  # a report is rebuilt any time with `assay report`; keep the run
            self.console.print(f"[yellow]warning:[/] could not write report.html: {e}")
        self.console.print(f"run directory: {format_size(directory_bytes(rd.path))} ({rd.path})")
        return Outcome(status, rd.path, reason, v.stats, v.results)

    def _unwritten(self, reason: str, e: OSError, path: Path) -> str:
        said = f"could not write the results: {e.strerror or e}: {e.filename or path}"
        if said in reason:
            return reason
        reason = (f"{reason}; " if reason else "") + said
        self.console.print(f"[red]error:[/] {reason}")
        return reason

    def _cleanup(self) -> None:
        if self.sidecars:  # before the lock, the target and the cgroup go: its server runs there
            self.info["postgres"] = self.sidecars.cleanup(self.opt.keep)
        if self.lock:
            self.lock.release()
        try:
            d = self.platform.directory
            if d and self.platform.temporary and not self.opt.keep:
                shutil.rmtree(d, ignore_errors=True)
                self.info.setdefault("target", {})["removed"] = True
        finally:
            if self.cgroup:
                self.cgroup.remove()
            self.platform.cleanup(self.opt.keep)
