"""One run: plan → session → sampler → verdict.

The plan is final (its job files are written as they are); the session is where the load runs,
this machine or an inventory's hosts (sessions/), driven the same way; the sampler turns
fio's cumulative dumps into per-second samples; the live verdict grades them as they come and
the final verdict at the end (verdict.py).

The run directory is written as the run goes; whatever ends the run (the verdict, Ctrl-C, a
dying fio, a full disk, a failed action) leaves run.json with a status and a reason, and every
second measured so far.
"""

from __future__ import annotations

import contextlib
import signal
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.console import LiveProgress
from assay.exitcodes import AssayError, RunAborted, UserError
from assay.metrics.duetime import due_latency, due_windows
from assay.metrics.sampler import Sample, Sampler, stored_line
from assay.participants.base import Traits
from assay.plan import Plan
from assay.plan.tally import tally
from assay.platforms import driver
from assay.progress import live_line
from assay.report.html import write_report
from assay.results.blocklog import RunStreams, StoredRows, directory_bytes, read_rows
from assay.results.catalogue import Catalogue
from assay.results.record import parse_record
from assay.results.rundir import read_ndjson
from assay.run_options import (
    Interrupted,
    Outcome,
    RunOptions,
    Timeline,
    default_timeline,
    on_signal,
)
from assay.runners import FioRun
from assay.runners.base import HostLoss, fio_outcome
from assay.scenario.units import format_size
from assay.sessions import open_session
from assay.thresholds.live import LiveVerdict
from assay.timeline import Reach
from assay.verdict import cluster_thresholds, count_all, grade, hosts_failure


class Engine:
    def __init__(self, plan: Plan, options: RunOptions, console: Console):
        self.plan = plan
        self.opt = options
        self.console = console
        self.platform = driver(plan.scenario.target.platform)(plan.scenario.target)
        self.session = open_session(plan, options, self.platform, console)  # no IO yet
        self.streams: RunStreams | None = None  # samples and series, on disk as they come
        self.ended_at: float | None = None  # where the timeline's `end` ended the load
        self.ended_to: float | None = None  # ... and the end of fio's interval holding it

    @property
    def info(self) -> dict[str, Any]:
        return self.session.info

    # -- the run -------------------------------------------------------------------------
    def execute(self) -> Outcome:
        # our own handlers whatever we inherited (a script's `&` leaves SIGINT ignored)
        old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        status, reason = "aborted", ""
        try:
            self.session.open()
            assert self.session.run_dir
            self.session.route_losses(self._lost)  # from the prefill on
            self.streams = RunStreams(self.session.run_dir.path)
            self.session.prefill()
            status, reason = self._load()
        except (KeyboardInterrupt, Interrupted):
            status, reason = "interrupted", "interrupted by the user"
        except UserError as e:
            if self.session.run_dir is not None:  # keep the record of what was refused
                self._finish("aborted", str(e))
            else:
                self.session.collect("aborted")
                self.session.cleanup()
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

    def _load(self) -> tuple[str, str]:
        session, plan = self.session, self.plan
        rd = session.run_dir
        assert rd
        sampler = Sampler(session.specs(), warmup_s=plan.warmup, parsed=session.parsed())
        live = LiveVerdict(plan.thresholds, plan.components, plan.warmup, plan.total_seconds,
                           total=tally(plan).total)
        # what the steps act on: fio's blkio groups, the hosts, the running participants
        reach = Reach(session.blkio, session.watch, session.databases(), session.verifier())
        timeline = (self.opt.timeline or default_timeline)(plan, self.platform, rd, reach)
        if self.opt.watcher:
            self.opt.watcher.opened(rd.path, live)
        rd.event("load", outcome="started")
        for p in session.participants:  # in their order: each ready before fio starts
            p.start()
        fio = session.start() if plan.jobs else session.alone()
        return self._drive(fio, sampler, live, timeline)

    def _lost(self, loss: HostLoss) -> None:
        """A host lost, reported by the merge step: recorded; in the measured phase, a
        timeline event (phases cut at it) and the host's share out of the schedule."""
        rd = self.session.run_dir
        assert rd
        rd.event("host_lost", host=loss.host, t=loss.t, phase=loss.phase, reason=loss.reason,
                 hosts_active=loss.hosts_active)
        if loss.measured:
            self.session.reschedule(loss.host, loss.t)
            rd.event("step", name="host_lost", action="host_lost", n=1, t_due=loss.t,
                     t_start=loss.t, t_end=loss.t, seconds=0.0, outcome="detected",
                     output=f"{loss.host}: {loss.reason}", annotate=True, host=loss.host)

    def _rows(self, now: float, origin: float) -> list[Sample]:
        """The participants' seconds finished since the last turn, graded beside fio's."""
        return [s for p in self.session.participants if Traits.ROWS in p.traits
                for s in p.rows(now, origin)]

    def _drive(self, fio: FioRun, sampler: Sampler, live: LiveVerdict,
               timeline: Timeline | None) -> tuple[str, str]:
        rd, runner, plan = self.session.run_dir, self.session, self.plan
        assert rd
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
                        if self.ended_at is None and (why := timeline.ended(t)):
                            self._end(fio, t, why)
                    live.add(self._record(self._rows(runner.clock(), start / 1000)))
                    behind = fio.lag_note  # a cluster's controller lagging behind its hosts
                    if doc is None:
                        bar.update(t, behind or None)
                        continue
                    fresh = sampler.feed(doc, runner.clock() * 1000)
                    live.add(self._record(fresh))
                    if fresh:
                        self._hosts(fresh[0].t, start / 1000)
                    if fresh and fresh[0].dt >= 0.5:  # not fio's closing stub
                        now = live_line(fresh, sampler.components)
                        bar.update(t, " | ".join(x for x in (now, live.summary(), behind)
                                                 if x))
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
        if timeline:
            timeline.finish()
        rd.event("load", outcome="ended", exit_code=rc)
        for p in self.session.participants:  # their last seconds; integrity's final pass
            live.add(self._record(p.finish(runner.clock(), rc)))
        if timeline and timeline.failure:  # a step that failed as the load ended
            return "aborted", timeline.failure
        return fio_outcome(rc, fio, asked_to_end=self.ended_at is not None)

    def _end(self, fio: FioRun, t: float, why: str) -> None:
        """The scenario's `timeline.end`: the load ends now, as at the end of `duration`
        (fio writes its last dumps, the participants their last seconds, integrity its
        final pass), graded up to the end of fio's interval that holds `t` (Plan.ending)."""
        assert self.session.run_dir
        self.ended_at = t
        self.info["timeline_end"] = {"t": round(t, 3), "reason": why}
        self.session.run_dir.event("load", outcome="ending", t=round(t, 3),
                                   reason=f"the timeline's end: {why}")
        for p in self.session.participants:
            p.end(t)
        fio.stop()

    def _stop(self, fio: FioRun, sampler: Sampler, timeline: Timeline | None) -> None:
        """Stop fio and the timeline, keeping the seconds fio reported on its way out."""
        fio.stop()
        for p in self.session.participants:
            with contextlib.suppress(Exception):
                self._record(p.stop())
        try:
            for doc in fio.documents(poll=0.5):
                if doc is None:
                    break
                self._record(sampler.feed(doc, self.session.clock() * 1000))
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
        if self.ended_at is not None and self.ended_to is None:
            # fio stops a moment after it is asked: its interval holding `ended_at` is the
            # load's last, measured whole (not cut in two, its IOs ungraded)
            self.ended_to = min((s.t for s in samples if s.t >= self.ended_at), default=None)
        self.streams.append(series, [stored_line(r) for r in out])
        if self.opt.watcher and series:
            self.opt.watcher.rows("series", series)
            self.opt.watcher.rows("samples", out)
        return out

    def _hosts(self, t: float, origin: float) -> None:
        """The hosts' utilisation over the second just measured (hosts.ndjson)."""
        assert self.streams
        rows = [r for p in self.session.participants if Traits.HOSTS in p.traits
                for r in p.host_rows(t, origin)]
        self.streams.hosts.append(rows)
        if self.opt.watcher:
            self.opt.watcher.rows("hosts", rows)

    # -- the verdict ----------------------------------------------------------------------
    def _finish(self, status: str, reason: str) -> Outcome:
        session = self.session
        rd = session.run_dir
        try:
            session.collect(status)  # the participants' sections, all they ran ended
        except Exception as e:  # noqa: BLE001 - the run still ends, with a record that says so
            status = "aborted"
            reason = "; ".join(x for x in (reason, f"a participant could not end: "
                                                   f"{type(e).__name__}: {e}") if x)
        session.cleanup()
        if rd is None:  # failed before a run directory existed
            raise RunAborted(reason) if status == "aborted" else Interrupted()
        steps = [e for e in read_ndjson(rd.path / "events.ndjson") if e.get("kind") == "step"]
        try:
            logs = session.fetch_logs()
        except OSError:
            logs = []
        session.close()  # nothing left running on any host
        try:
            measured = self.streams.close() if self.streams else 0
        except OSError as e:  # the last seconds could not be written: a full results disk
            measured = self.streams.samples.rows if self.streams else 0
            status, reason = "aborted", self._unwritten(reason, e, rd.path)
        samples = StoredRows(rd.path, "samples", measured)  # read back, not held in memory
        until = self.ended_to if self.ended_to is not None else self.ended_at
        v = grade(session.graded_plan().ending(until), samples, steps, logs,
                  read_rows(rd.path, "hosts"),
                  due_latency(rd.path, due_windows(self.plan.ending(until))),
                  self.info.get("integrity"), ended_early=status != "done")
        hosts = session.grade_hosts(steps, until)
        if hosts is not None:
            self.info["cluster"] = hosts
        if steps:
            self.info["events"] = steps
            self.info.update(v.phases.to_json())
        if status == "done" and not v.coverage.complete:  # no verdict on unmeasured seconds
            status, reason = "incomplete", v.coverage.reason()
            v.ungraded()
        elif status == "done" and not v.results and not cluster_thresholds(hosts) \
                and (hosts or {}).get("passed", True):
            status = "completed"  # nothing to grade, on one host or many: not a pass
        elif status == "done":
            status = "passed" if v.passed and self.info.get("cluster", {}).get("passed", True) \
                else "failed"
            reason = reason or hosts_failure(self.info.get("cluster"))
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
        count_all(self.info)  # each host's and the cluster's own thresholds count too
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
