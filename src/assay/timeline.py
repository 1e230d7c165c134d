"""The scenario timeline: platform actions at times, at intervals, or after other steps.

The engine calls `tick(t)` several times a second with the seconds since the load started
(the `t` axis of series.ndjson). A due step starts in its own thread, so a long action (a
rebuild) never stalls the load's sampling; `tick` writes the step's events from the engine's
thread when it starts and ends. Each occurrence becomes one `kind: "step"` event in
events.ndjson with `t_start`, `t_end`, `outcome` (ok, failed, timeout, unfinished) and its
output. A failed or timed-out step aborts the run: `tick` raises RunAborted, and the engine
stops fio and keeps what was measured.

When steps run: `at` is seconds after the measured start (after warm-up), default 0;
`every` repeats (`count` times, or until the load ends); `after: NAME` starts the step each
time an occurrence of step NAME ends well (once, if the step also has `every`).
With `end: after NAME + 10s` the load ends 10 s after step NAME's last occurrence ends well,
rather than at the end of `duration` (its longest): `ended(t)` tells the engine when.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.actions import action_module
from assay.actions.command import render
from assay.actions.context import ActionContext, HostWatch, Stopped, Throttles
from assay.exitcodes import RunAborted
from assay.integrity.session import Verifies
from assay.plan import Plan
from assay.platforms.base import Platform
from assay.platforms.fsbase import ActionFailed, StepTimeout
from assay.results.rundir import RunDir
from assay.scenario.models import StepBase, step_names

OUTPUT_LIMIT = 2000  # characters of a step's output kept in its event
GRACE_S = 5.0  # a step thread stuck this long past its timeout is given up on
JOIN_S = 15.0  # at the end of the run, how long to wait for steps to notice the stop


@dataclass
class Occurrence:
    step: StepBase
    name: str
    n: int
    due: float  # load seconds
    ctx: ActionContext | None = None
    thread: threading.Thread | None = None
    t_start: float = 0.0
    t_end: float | None = None
    outcome: str = ""
    output: str = ""
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class Series:
    """Pending occurrences of one step, triggered by `at` or by another step's end."""

    step: StepBase
    name: str
    next_due: float
    left: int | None  # None: until the load ends
    fired: int = 0


@dataclass
class Reach:
    """What the run's steps act on beside the platform: fio's blkio group (each host's), the
    hosts as they report (host_fail confirms a loss), the running participants: databases
    (pg_backup) and integrity's writers (verify)."""

    group: Throttles | None = None
    watch: HostWatch | None = None
    databases: Mapping[str, Any] = field(default_factory=dict)
    verifier: Verifies | None = None  # integrity mode's writers (verify)


class TimelineRunner:
    def __init__(self, plan: Plan, platform: Platform, run_dir: RunDir,
                 reach: Reach | None = None):
        reach = reach or Reach()
        self.plan = plan
        self.platform = platform
        self.run_dir = run_dir
        self.group = reach.group
        self.steps = list(plan.resolved.steps)
        self.names = step_names(self.steps)
        self.t0 = 0.0
        self.offset = 0.0  # the engine's `t` axis minus our monotonic clock since start
        self.stop = threading.Event()
        self.series: list[Series] = []
        self.running: list[Occurrence] = []
        self.counts: dict[str, int] = {}
        self.triggered: set[str] = set()  # `after` steps with `every` start only once
        self.records: list[dict[str, Any]] = []
        self.failure: str | None = None
        self.watch = reach.watch
        self.databases = reach.databases
        self.verifier = reach.verifier
        self.end_rule = plan.scenario.timeline.end_rule
        self.end_due: float | None = None  # when the load ends by `end_rule`, once known

    # -- the Timeline protocol ------------------------------------------------------------
    def start(self, t0: float) -> None:
        self.t0 = t0
        for step, name in zip(self.steps, self.names, strict=True):
            if step.after is None:
                self.series.append(Series(step, name, self.plan.warmup + (step.at or 0.0),
                                          _repeats(step)))

    def tick(self, t: float) -> None:
        self.offset = t - (time.monotonic() - self.t0)
        self._reap(t)
        for s in self.series:
            while s.left != 0 and s.next_due <= t and not self.stop.is_set():
                self._launch(s, t)
        self.series = [s for s in self.series if s.left != 0]
        if self.failure:
            raise RunAborted(self.failure)

    def ended(self, t: float) -> str | None:
        """Why the load ends now by the scenario's `timeline.end`, or None."""
        if self.end_rule is None or self.end_due is None or t < self.end_due:
            return None
        rule = self.end_rule
        return f"{rule.step} ended" + (f" {rule.delay:g}s before" if rule.delay else "")

    def finish(self) -> None:
        """Stop what still runs (undoing throttles), wait a little, record the rest."""
        self.stop.set()
        end = time.monotonic() + JOIN_S
        for occ in self.running:
            if occ.thread:
                occ.thread.join(max(0.0, end - time.monotonic()))
        self._reap(self._now(), final=True)

    # -- internals ------------------------------------------------------------------------
    def _now(self) -> float:
        """Seconds on the engine's axis (series.ndjson `t`), also from the step threads."""
        return time.monotonic() - self.t0 + self.offset

    def _launch(self, s: Series, t: float) -> None:
        s.fired += 1
        if s.left is not None:
            s.left -= 1
        due = s.next_due
        s.next_due += s.step.every or 0.0
        if not s.step.every:
            s.left = 0
        n = self.counts[s.name] = self.counts.get(s.name, 0) + 1
        occ = Occurrence(s.step, s.name, n, due, t_start=t)
        occ.ctx = ActionContext(
            platform=self.platform, group=self.group, step=s.step, step_name=s.name, n=n, t=t,
            run_id=self.run_dir.id, stop=self.stop,
            deadline=time.monotonic() + s.step.timeout if s.step.timeout else None,
            hosts={h: hp.host for h, hp in self.plan.cluster.hosts.items()}
            if self.plan.cluster else {}, watch=self.watch, databases=self.databases,
            verifier=self.verifier)
        self.run_dir.event("step.start", name=s.name, action=s.step.action, n=n,
                           t_start=round(t, 3), t_due=round(due, 3))
        occ.thread = threading.Thread(target=self._perform, args=(occ,), daemon=True,
                                      name=f"assay-step-{s.name}-{n}")
        self.running.append(occ)
        occ.thread.start()

    def _perform(self, occ: Occurrence) -> None:
        """In the step's thread: the action, then its `wait_until` condition."""
        assert occ.ctx is not None
        ctx, step = occ.ctx, occ.step
        outputs: list[str] = []
        try:
            outputs.append(action_module(step.action).run(step, ctx) or "")
            if step.wait_until:
                outputs.append(_wait(step, ctx))
            occ.outcome = "ok"
        except Stopped:
            occ.outcome = "unfinished"
            outputs.append("the load ended first")
        except StepTimeout as e:
            occ.outcome = "timeout"
            outputs.append(str(e))
        except ActionFailed as e:
            occ.outcome = "failed"
            outputs.append(str(e))
        except Exception as e:  # a bug in an action must still end the step and the run
            occ.outcome = "failed"
            outputs.append(f"{type(e).__name__}: {e}")
        occ.output = "\n".join(o for o in outputs if o)
        occ.t_end = self._now()
        occ.done.set()

    def _reap(self, t: float, final: bool = False) -> None:
        still: list[Occurrence] = []
        for occ in self.running:
            deadline = occ.ctx.deadline if occ.ctx else None
            stuck = deadline is not None and time.monotonic() > deadline + GRACE_S
            if not occ.done.is_set() and not stuck and not final:
                still.append(occ)
                continue
            if not occ.done.is_set():  # its thread ignores us; record it and move on
                occ.outcome = "timeout" if stuck else "unfinished"
                occ.output = occ.output or "did not finish"
                occ.t_end = t
            self._record(occ)
        self.running = still

    def _record(self, occ: Occurrence) -> None:
        assert occ.t_end is not None
        step = occ.step
        output = occ.output if len(occ.output) <= OUTPUT_LIMIT else \
            occ.output[:OUTPUT_LIMIT // 2] + "\n...\n" + occ.output[-OUTPUT_LIMIT // 2:]
        record = {"name": occ.name, "action": step.action, "n": occ.n,
                  "t_due": round(occ.due, 3), "t_start": round(occ.t_start, 3),
                  "t_end": round(occ.t_end, 3), "seconds": round(occ.t_end - occ.t_start, 3),
                  "outcome": occ.outcome, "output": output, "annotate": step.annotate,
                  **(occ.ctx.details if occ.ctx else {})}
        self.run_dir.event("step", **record)
        self.records.append(record)
        if occ.outcome in ("failed", "timeout") and self.failure is None:
            self.failure = (f"step {occ.name!r} ({step.action}) {occ.outcome} at "
                            f"{occ.t_start:.0f}s: {output.splitlines()[-1] if output else ''}")
        if occ.outcome == "ok" and not self.stop.is_set():
            self._trigger_after(occ.name, occ.t_end)
            rule = self.end_rule
            if rule is not None and occ.name == rule.step and occ.n == (step.count or 1):
                self.end_due = occ.t_end + rule.delay

    def _trigger_after(self, name: str, t: float) -> None:
        for step, child in zip(self.steps, self.names, strict=True):
            if step.after != name or (step.every and child in self.triggered):
                continue
            self.triggered.add(child)
            self.series.append(Series(step, child, t, _repeats(step)))


def _repeats(step: StepBase) -> int | None:
    if not step.every:
        return 1
    return step.count


def _wait(step: StepBase, ctx: ActionContext) -> str:
    cond = step.wait_until
    assert cond is not None
    started = time.monotonic()
    checks = 0
    while True:
        checks += 1
        if cond.done:
            if not ctx.fs.busy(ctx, cond.done):
                break
        else:
            assert cond.command is not None
            try:
                ctx(render(cond.command, ctx.variables))
                break
            except StepTimeout:
                raise
            except ActionFailed:
                pass
        ctx.sleep(cond.poll)
    waited = time.monotonic() - started
    ctx.details["waited_s"] = round(waited, 3)
    what = f"{cond.done} done" if cond.done else "condition held"
    return f"{what} after {waited:.1f}s ({checks} checks)"


def build(plan: Plan, platform: Platform, run_dir: RunDir,
          reach: Reach) -> TimelineRunner | Together | None:
    """The engine's timeline factory: a runner when the scenario has steps, beside the
    platform's own state series when the platform reports one (Ceph)."""
    steps = TimelineRunner(plan, platform, run_dir, reach) if plan.resolved.steps else None
    watch = platform.watch(run_dir.path)
    return steps if watch is None else Together(steps, watch)


class Together:
    """The steps and the platform's watch on one clock (the Timeline protocol)."""

    def __init__(self, steps: TimelineRunner | None, watch: Any):
        self.parts = [p for p in (watch, steps) if p is not None]
        self.steps = steps

    @property
    def failure(self) -> str | None:
        return self.steps.failure if self.steps else None

    def ended(self, t: float) -> str | None:
        return self.steps.ended(t) if self.steps else None

    def start(self, t0: float) -> None:
        for p in self.parts:
            p.start(t0)

    def tick(self, t: float) -> None:
        for p in self.parts:
            p.tick(t)

    def finish(self) -> None:
        for p in self.parts:
            p.finish()
