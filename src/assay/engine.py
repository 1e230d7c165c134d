"""One run, end to end on the local host: preflight → prefill → load (+ timeline) → verdict.

The run directory is written as the run goes; whatever ends the run (the verdict, Ctrl-C, a
dying fio, a full disk, a failed action) leaves run.json with a status and a reason, and every
second measured so far.
"""

from __future__ import annotations

import glob
import hashlib
import json
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from assay.console import LiveProgress
from assay.exitcodes import AssayError, ExitCode, RunAborted, UserError
from assay.fio.process import FioProcess, parse_only
from assay.hosts import cgroup
from assay.hosts.cgroup import BlkioGroup
from assay.hosts.fingerprint import block_device_facts, host_facts, target_facts
from assay.metrics.advice import advise
from assay.metrics.intended import MAX_LOGGED_IOS, component_intended
from assay.metrics.phases import analyse
from assay.metrics.sampler import Sample, Sampler
from assay.metrics.summary import Stats, aggregate
from assay.plan import Plan
from assay.platforms import driver
from assay.platforms.base import Platform
from assay.platforms.safety import (
    check_block_device,
    check_files,
    device_state_dir,
)
from assay.prefill import prefill
from assay.report.html import write_report
from assay.results.catalogue import Catalogue
from assay.results.rundir import RunDir, read_ndjson
from assay.scenario.units import format_latency_ms, format_size
from assay.thresholds.evaluate import Result, evaluate


class Timeline(Protocol):
    """Timeline steps run beside the load; `tick` is called several times a second."""

    def start(self, t0: float) -> None: ...
    def tick(self, t: float) -> None: ...
    def finish(self) -> None: ...


# (plan, platform, run directory, the run's blkio group or None) -> a timeline or None
TimelineFactory = Callable[[Plan, Platform, RunDir, BlkioGroup | None], Timeline | None]


def default_timeline(plan: Plan, platform: Platform, rd: RunDir,
                     group: BlkioGroup | None) -> Timeline | None:
    """The scenario's own `timeline.steps` (assay.timeline), so no caller can forget them."""
    from assay.timeline import build

    return build(plan, platform, rd, group)


@dataclass
class RunOptions:
    results_root: Path
    keep: bool = False
    fresh: bool = False
    force: bool = False
    json_mode: bool = False
    parent: str | None = None  # a search or sweep this run belongs to
    timeline: TimelineFactory | None = None
    # called each second with the samples so far; a reason ends the run early as failed
    should_stop: Callable[[list[dict[str, Any]]], str | None] | None = None


@dataclass
class Outcome:
    status: str  # passed / failed / aborted / interrupted
    run_dir: Path
    reason: str = ""
    stats: dict[str, Stats] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        return {"passed": ExitCode.PASSED, "failed": ExitCode.FAILED,
                "aborted": ExitCode.ABORTED, "interrupted": ExitCode.INTERRUPTED}[self.status]


class Interrupted(Exception):
    pass


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Interrupted()


class Engine:
    def __init__(self, plan: Plan, options: RunOptions, console: Console):
        self.plan = plan
        self.opt = options
        self.console = console
        self.platform = driver(plan.scenario.target.platform)(plan.scenario.target)
        self.run_dir: RunDir | None = None
        self.samples: list[dict[str, Any]] = []
        self.info: dict[str, Any] = {}
        self.cgroup: BlkioGroup | None = None  # fio runs in it, so actions can throttle it
        self.device: str | None = None  # a raw block device target
        self.intended_note = "not computed: no even-paced fixed-rate component"

    # -- the run -------------------------------------------------------------------------
    def execute(self) -> Outcome:
        old = signal.signal(signal.SIGTERM, _on_sigterm)
        status, reason = "aborted", ""
        try:
            directory = self._prepare()
            self._prefill(directory)
            status, reason = self._load(directory)
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
            signal.signal(signal.SIGTERM, old)
        return self._finish(status, reason)

    def _prepare(self) -> Path:
        target = self.plan.scenario.target
        device = self.device = target.device
        if device:
            check_block_device(device, self.opt.force)
            size = block_device_facts(device).get("size_bytes") or 0
            if size < self.plan.dataset_bytes:
                raise UserError(f"{device} holds {format_size(size)}; the dataset needs "
                                f"{format_size(self.plan.dataset_bytes)}")
            directory = device_state_dir(device)  # the manifest of what assay wrote there
        else:
            directory = self.platform.prepare()
        for w in self.plan.resolved.workloads.values():
            if w.subdir:  # a driver may have made it already (a btrfs subvolume)
                (directory / w.subdir).mkdir(exist_ok=True)
        if not device:
            check_files(directory, [n for n, _ in self.plan.files], self.opt.force)
        direct = self.platform.direct_io() if not device else target.direct is not False
        self.run_dir = rd = RunDir.create(self.opt.results_root, self.plan.name)
        rd.write_text("scenario.yaml", self.plan.resolved.text)
        host = rd.host_dir("local")
        self._log_due_times()
        jobfile = host / "run.fio"
        jobfile.write_text(self.plan.jobfile(str(directory.resolve()), direct, device),
                           encoding="utf-8")
        complaint = parse_only(jobfile)
        if complaint:
            raise RunAborted(f"fio rejected the job file: {complaint}")
        self.info = {
            "id": rd.id,
            "status": "running",
            "started": time.time(),
            "scenario": {"name": self.plan.name, "file": self.plan.resolved.file,
                         "description": self.plan.scenario.description,
                         "sha256": hashlib.sha256(self.plan.resolved.text.encode()).hexdigest(),
                         "seed": self.plan.scenario.seed},
            "plan": {"duration_s": self.plan.duration, "warmup_s": self.plan.warmup,
                     "workloads": {n: w.model_dump(mode="json")
                                   for n, w in self.plan.resolved.workloads.items()},
                     "streams": [{"key": s.key, "description": s.description,
                                  "transactional": s.transactional, "jobs": len(s.jobs),
                                  "files": [f.name for f in s.files]}
                                 for s in self.plan.streams],
                     "thresholds": [t.text for t in self.plan.thresholds]},
            "components": {c.name: {"target_iops": c.target_iops, "poisson": c.poisson,
                                    "start_s": c.start_s, "end_s": c.end_s,
                                    "transactional": c.transactional, "jobs": c.jobs}
                           for c in self.plan.components},
            "target": {**self.plan.scenario.target.model_dump(mode="json"),
                       "path": str(directory), "temporary": self.platform.temporary,
                       **self.platform.facts(),
                       **(target_facts(str(directory), self.plan.dataset_bytes, direct)
                          if not device else {"backing": block_device_facts(device),
                                              "dataset_bytes": self.plan.dataset_bytes,
                                              "direct_io": direct})},
            "environment": host_facts(),
            "parent": self.opt.parent,
            "intended_latency": self.intended_note,
        }
        if not direct:
            self._warn("the target does not support O_DIRECT: IO goes through the page cache "
                       "and results flatter the storage")
        if self.info["target"].get("dataset_to_ram", 0) and \
                self.info["target"]["dataset_to_ram"] < 1 and not direct:
            self._warn("the dataset fits in RAM and IO is buffered: you are measuring memory")
        if self.plan.scenario.target.throttle and not cgroup.available():
            raise UserError("target.throttle needs cgroup v1 blkio (root, mounted at "
                            f"{cgroup.BLKIO_ROOT})")
        if cgroup.available():
            self.cgroup = BlkioGroup(f"assay/{rd.id}").create()
            self.platform.apply_limits(self.cgroup)
            self.info["target"]["blkio_limits"] = self.cgroup.limits()
        rd.write_json("run.json", self.info)
        return directory

    def _warn(self, text: str) -> None:
        self.info.setdefault("warnings", []).append(text)
        self.console.print(f"[yellow]warning:[/] {text}")

    def _prefill(self, directory: Path) -> None:
        assert self.run_dir
        direct = self.platform.direct_io() if not self.device else True
        self.info["prefill"] = prefill(self.plan, directory, self.run_dir, self.console,
                                       fresh=self.opt.fresh, direct=direct, device=self.device)

    def _load(self, directory: Path) -> tuple[str, str]:
        assert self.run_dir
        rd = self.run_dir
        host = rd.host_dir("local")
        sampler = Sampler(self.plan.specs, warmup_s=self.plan.warmup)
        timeline = (self.opt.timeline or default_timeline)(self.plan, self.platform, rd,
                                                           self.cgroup)
        fio = FioProcess(host / "run.fio", host, name="run",
                         cgroup_procs=self.cgroup.path / "cgroup.procs" if self.cgroup else None)
        rd.event("load", outcome="started")
        fio.start()
        sampler.start(fio.started_ms)
        t0 = time.monotonic()
        if timeline:
            timeline.start(t0)
        total = self.plan.total_seconds
        stop: str | None = None
        try:
            with LiveProgress(self.console, "run", total) as bar:
                for doc in fio.documents():
                    # the time axis starts when fio's jobs do (known from the first dump)
                    start = sampler.jobs_start_ms
                    t = time.time() - start / 1000 if start else time.monotonic() - t0
                    if timeline:
                        timeline.tick(t)
                    if doc is None:
                        bar.update(t)
                        continue
                    fresh = sampler.feed(doc)
                    self._record(fresh)
                    if fresh and fresh[0].dt >= 0.5:  # not fio's closing stub
                        bar.update(t, live_line(fresh, self.plan.warmup))
                    stop = self.opt.should_stop(self.samples) if self.opt.should_stop else None
                    if stop:
                        break
        except BaseException:
            fio.stop()
            fio.wait()
            self._drain(fio, sampler)
            if timeline:
                timeline.finish()
            raise
        if stop:  # the verdict is already certain: do not spend the rest of the run
            fio.stop()
            fio.wait()
            if timeline:
                timeline.finish()
            rd.event("load", outcome="stopped early", reason=stop)
            return "failed", f"stopped early: {stop}"
        rc = fio.wait()
        if timeline:
            timeline.finish()
        rd.event("load", outcome="ended", exit_code=rc)
        failure = getattr(timeline, "failure", None)  # a step that failed as the load ended
        if failure:
            return "aborted", failure
        if rc != 0:
            tail = fio.stderr_tail()
            if "No space left on device" in tail:
                return "aborted", f"the target ran out of space during the run: {tail}"
            return "aborted", f"fio exited with status {rc}: {tail}"
        errors = _job_errors(fio.last_doc)
        if errors:
            return "aborted", f"fio reported IO errors: {errors}"
        return "done", ""

    def _drain(self, fio: FioProcess, sampler: Sampler) -> None:
        """After a stop: keep the seconds fio reported on its way out."""
        try:
            for doc in fio.documents(poll=0.5):
                if doc is None:
                    break
                self._record(sampler.feed(doc))
        except Exception:  # noqa: S110 - best effort while stopping
            pass

    def _record(self, samples: list[Sample]) -> None:
        assert self.run_dir
        for s in samples:
            row = s.row()
            self.run_dir.append("series.ndjson", row)
            rec = {"t": row["t"], "dt": row["dt"], "c": s.component, "ios": s.ios,
                   "bytes": s.bytes, "lat_sum_ns": s.lat_sum_ns, "lat_max_ns": s.lat_max_ns,
                   "behind_s": row["behind_s"]}
            bins = json.dumps(s.hist.to_json(), separators=(",", ":"))
            self.run_dir.append_text("samples.ndjson",
                                     json.dumps(rec, separators=(",", ":"))[:-1]
                                     + f',"bins":{bins}}}')
            self.samples.append({**rec, "bins_json": bins})  # text: see sample_bins

    # -- the verdict ----------------------------------------------------------------------
    def _finish(self, status: str, reason: str) -> Outcome:
        rd = self.run_dir
        self._cleanup()
        if rd is None:  # failed before a run directory existed
            raise RunAborted(reason) if status == "aborted" else Interrupted()
        start, end = self.plan.warmup, self.plan.total_seconds
        stats = {c.name: aggregate(c, self.samples, start, end) for c in self.plan.components}
        self._intended(stats, rd.host_dir("local"), start, end)
        steps = [e for e in read_ndjson(rd.path / "events.ndjson") if e.get("kind") == "step"]
        phase_report = analyse(self.plan.components, self.samples, steps, start, end)
        results = evaluate(self.plan.thresholds, self.plan.components, stats, phase_report) \
            if self.samples else []
        if steps:
            self.info["events"] = steps
            self.info.update(phase_report.to_json())
        if status == "done":
            status = "passed" if all(r.passed for r in results) else "failed"
        series = [{"t": s["t"], "dt": s["dt"], "c": s["c"],
                   "iops": s["ios"] / s["dt"] if s["dt"] else 0.0} for s in self.samples]
        ratios = {n: (w.data.compressibility, w.data.dedupe)
                  for n, w in self.plan.resolved.workloads.items()}
        windows = {c.name: (max(start, c.start_s), min(end, c.end_s) if c.end_s else end)
                   for c in self.plan.components}
        for text in advise(stats, series, windows, ratios) if self.samples else []:
            self.info.setdefault("warnings", []).append(text)
        elapsed = time.time() - self.info.get("started", time.time())
        self.info.update({
            "status": status, "reason": reason, "elapsed_s": round(elapsed, 2),
            "ended": time.time(),
            "measured_window_s": [start, end],
            "stats": {k: v.to_json() for k, v in stats.items()},
            "thresholds": [r.to_json() for r in results],
            "verdict": {"passed": sum(r.passed for r in results),
                        "failed": sum(not r.passed for r in results)},
        })
        rd.event("run", outcome=status, reason=reason)
        rd.write_json("run.json", self.info)
        rd.close()
        try:
            Catalogue(self.opt.results_root).record(rd.path)
        except Exception as e:  # the run is kept whatever happens to the index
            self.console.print(f"[yellow]warning:[/] could not update the catalogue: {e}")
        try:
            write_report(rd.path)
        except Exception as e:  # a report is rebuilt any time with `assay report`; keep the run
            self.console.print(f"[yellow]warning:[/] could not write report.html: {e}")
        return Outcome(status, rd.path, reason, stats, results)

    def _log_due_times(self) -> None:
        """Per-IO latency logs for even-paced jobs, when they fit in fio's memory."""
        even = [j for s in self.plan.streams for j in s.jobs
                if j.options.get("rate_process") == "linear" and j.options.get("rate")]
        due = sum(c.target_iops or 0 for c in self.plan.components if not c.poisson)
        if not even or due * self.plan.total_seconds > MAX_LOGGED_IOS:
            if even:
                self.intended_note = (f"not computed: over {MAX_LOGGED_IOS:,} IOs would be "
                                      f"logged; the schedule-lag check applies")
            return
        for job in even:
            job.options["write_lat_log"] = job.name
        self.intended_note = "from fio's per-IO logs of even-paced jobs"

    def _intended(self, stats: dict[str, Stats], host: Path, start: float, end: float) -> None:
        jobs = {j.name: j for s in self.plan.streams for j in s.jobs}
        for spec in self.plan.specs:
            if spec.component not in stats or not spec.jobs or \
                    any("write_lat_log" not in jobs[n].options for n in spec.jobs):
                continue
            try:
                # fio names the log <name>_lat.<job number>.log
                logs = [(next(host.glob(f"{glob.escape(n)}_lat.*.log"), host / "missing"),
                         float(jobs[n].options["rate"] or 0)) for n in spec.jobs]
                # log times count from the job's own start (after any startdelay)
                lo = max(start, spec.start_s) - spec.start_s
                hi = (min(end, spec.end_s) if spec.end_s is not None else end) - spec.start_s
                stats[spec.component].intended = component_intended(logs, lo, hi)
            except OSError:
                continue
        for extra in (*host.glob("*_clat.*.log"), *host.glob("*_slat.*.log")):
            extra.unlink(missing_ok=True)  # only the total latency is used

    def _cleanup(self) -> None:
        try:
            d = self.platform.directory
            if d and self.platform.temporary and not self.opt.keep:
                shutil.rmtree(d, ignore_errors=True)
                self.info.setdefault("target", {})["removed"] = True
        finally:
            if self.cgroup:
                self.cgroup.remove()
            self.platform.cleanup(self.opt.keep)


def _job_errors(doc: dict[str, Any] | None) -> str:
    if not doc:
        return ""
    errs = [f"{j.get('jobname')}: error {j.get('error')}" for j in doc.get("jobs", [])
            if j.get("error")]
    return "; ".join(errs[:3])


def live_line(samples: list[Sample], warmup: float) -> str:
    """`mail 242 IO/s 1.2ms p99 3.4ms | db ...` — per workload, this second."""
    by_wl: dict[str, list[Sample]] = {}
    for s in samples:
        by_wl.setdefault(s.component.split(".")[0], []).append(s)
    parts = []
    for wl, ss in by_wl.items():
        ios = sum(s.ios for s in ss)
        dt = max((s.dt for s in ss), default=1.0)
        lat = sum(s.lat_sum_ns for s in ss) / ios / 1e6 if ios else None
        p99 = max((s.hist.percentile(99) or 0 for s in ss), default=0) / 1e6 or None
        tag = " (warm-up)" if ss and ss[0].phase == "warmup" else ""
        parts.append(f"{wl} {ios / dt:,.0f} IO/s {format_latency_ms(lat)} "
                     f"p99 {format_latency_ms(p99)}{tag}")
    return " | ".join(parts)


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, default=str)
