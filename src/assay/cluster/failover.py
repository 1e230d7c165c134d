"""A lost host's instances started again on the survivors (`failover`), a recovered host's
started again on it (`host_recover`), while the run goes on.

    lost n3 at 8.0 s --(loss detected, then failover.after)--> n3's instances on n1 and n2
    host_recover n3 ------------------------------------------> n3's other instances on n3

Each restart is a fio of its own on the host that takes the instances (a "rider"): their job
files (plan/failover.py) from their schedule's current point to their own end. A rider's
dumps ride along at the end of every merged dump (the Sampler keys jobs by their place, so a
rider keeps its place from its first dump on), and the merged target steps up by the
instances' rates from their restart: they are graded from there. run.json's
`cluster.failover` records each rider: its instances, the loss, the restart, its first IO and
the gap from the loss to it (X-Ray's "how long the application was gone").
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.metrics.sampler import ComponentSpec
from assay.plan.failover import Instance, restart_text
from assay.runners.base import Document, FioRun


class ClusterRun(Protocol):
    """What a restart reads of the phase it joins (cluster/merge.py's ClusterRun)."""

    @property
    def env(self) -> dict[str, str]: ...
    @property
    def frozen(self) -> dict[str, Document]: ...
    @property
    def jobs_start_ms(self) -> float | None: ...
    @property
    def last_doc(self) -> Document | None: ...
    @property
    def measured(self) -> bool: ...
    @property
    def order(self) -> list[str]: ...
    @property
    def stopping(self) -> bool: ...
    def clock(self) -> float: ...


class RunnerGroup(Protocol):
    """What failover uses of the cluster's hosts (cluster/group.py's RunnerGroup)."""

    @property
    def current(self) -> Any: ...
    @property
    def envs(self) -> dict[str, dict[str, str]]: ...
    @property
    def facts(self) -> dict[str, dict[str, Any]]: ...
    @property
    def lost(self) -> dict[str, dict[str, Any]]: ...
    @property
    def plan(self) -> Any: ...
    @property
    def rd(self) -> Any: ...
    @property
    def runners(self) -> dict[str, Any]: ...
    @property
    def specs(self) -> list[ComponentSpec]: ...

WRITE_S = 0.5  # about what writing a rider's job file there takes: its runtime is cut by it
RECONNECT_S = 20.0  # a recovered host's SSH may take this long to answer again
SETTLE_S = 5.0  # riders still running this long after every host ended are stopped


@dataclass
class Rider:
    """One fio started mid-run: `kind` failover (a lost host's instances on a survivor) or
    rejoin (a recovered host's own)."""

    kind: str
    host: str
    source: str
    instances: list[Instance]
    loss_t: float | None
    restart_t: float  # its start instant on the run's axis
    offset_s: float  # the host's clock minus this machine's
    jobs_start_s: float  # the axis' zero, this machine's clock
    run: FioRun | None = None
    last: Document | None = None
    slot: int | None = None  # its place among the riders' jobs, from its first dump on
    merged: Document | None = None  # its dump in the newest merged one
    first_io_t: float | None = None
    ended: int | None = None
    lost_t: float | None = None  # its host was lost while it ran
    error: str = ""
    added: list[tuple[str, float, float, float]] = field(default_factory=list)
    on_start: Callable[[Rider], None] | None = None  # its first IO: the target steps up

    def pump(self) -> None:
        assert self.run is not None
        with contextlib.suppress(Exception):
            for doc in self.run.documents(poll=0.5):
                if doc is not None:
                    self.last = doc
                    if self.first_io_t is None:
                        self.first_io_t = self._first_io(doc)
                        if self.first_io_t is not None and self.on_start is not None:
                            self.on_start(self)
        self.ended = self.run.wait()

    def _first_io(self, doc: Document) -> float | None:
        """When its first IO was issued, on the run's axis: the dump's time less the run time
        of the longest-running job that did IO (a paced job issues its first IO at once)."""

        if not self.ios(doc):
            return None
        t = float(doc["timestamp_ms"]) / 1000 - self.offset_s - ran_ms(doc["jobs"]) / 1000
        return round(t - self.jobs_start_s, 2)

    def ios(self, doc: Document | None = None) -> int:
        jobs = (doc or self.last or {}).get("jobs", [])
        return sum(int(((j.get(d) or {}).get("lat_ns") or {}).get("N") or 0)
                   for j in jobs for d in ("read", "write"))

    def record(self) -> dict[str, Any]:
        gap = None if self.first_io_t is None or self.loss_t is None else \
            round(self.first_io_t - self.loss_t, 2)
        return {"kind": self.kind, "host": self.host, "from": self.source,
                "instances": [f"{i.workload}@{i.host}.{i.k}" for i in self.instances],
                "lost_at_s": self.loss_t, "restart_s": round(self.restart_t, 2),
                "first_io_s": self.first_io_t, "gap_s": gap, "ios": self.ios(),
                "exit": self.ended, "host_lost_s": self.lost_t,
                **({"error": self.error} if self.error else {})}


class Failover:
    """The riders of one cluster run (RunnerGroup.failover)."""

    def __init__(self, group: RunnerGroup):
        self.group = group
        self.riders: list[Rider] = []
        self.waiting: list[tuple[float, str, str, float]] = []  # (due, source, to, loss t)
        self.refused: list[dict[str, Any]] = []  # restarts that could not be made
        self._slots = 0
        self._lock = threading.Lock()

    # -- the ClusterRun's hooks -------------------------------------------------------------
    def lost(self, run: ClusterRun, host: str, t: float) -> None:
        """`host` was lost at `t`: its failover instances wait for their survivors; the
        riders on it are lost with it (their rates leave the target)."""
        assert self.group.plan.cluster is not None
        for r in self.riders:
            if r.host == host and r.lost_t is None:
                r.lost_t = t
                for component, rate, a, b in r.added:
                    self._step(component, -rate, max(a, t), b)
        now = run.clock()  # the run's clock: a replay's runs faster than this machine's
        for m in self.group.plan.cluster.moves.get(host, []):
            key = (now + m.after, host, m.to, t)
            if key not in self.waiting:
                self.waiting.append(key)

    def tick(self, run: ClusterRun) -> None:
        """Start the restarts that are due (each in a thread: SSH takes its time)."""
        now = run.clock()
        due = [w for w in self.waiting if w[0] <= now]
        for w in due:
            self.waiting.remove(w)
            _, source, to, loss_t = w
            moves = [m for m in self.group.plan.cluster.moves.get(source, [])
                     if m.to == to]
            if to in self.group.lost:
                self.refused.append({"from": source, "to": to, "why": f"{to} is lost too"})
                continue
            threading.Thread(target=self._start, daemon=True, args=(
                run, "failover", to, source, [(m.instance, m.text) for m in moves],
                loss_t, f"failover-{source}.fio")).start()

    def rejoin(self, host: str) -> str:
        """`host_recover`: the recovered host's instances that were not moved start again on
        it, at their schedule's current point; its pending moves are cancelled."""
        run = self.group.current
        assert self.group.plan.cluster is not None
        if run is None or not run.measured or host not in self.group.lost:
            return ""
        self.waiting = [w for w in self.waiting if w[1] != host]
        moved = {id(i) for r in self.riders if r.source == host and r.kind == "failover"
                 for i in r.instances}
        own = [(i, i.text) for i in self.group.plan.cluster.instances.get(host, [])
               if id(i) not in moved]
        if not own:
            return f"{host}: its instances run on the survivors (failover): none rejoins"
        n = sum(1 for r in self.riders if r.host == host and r.kind == "rejoin")
        rider = self._start(run, "rejoin", host, host, own,
                            float(self.group.lost[host]["t"]), f"rejoin{n or ''}.fio")
        if rider is None or rider.run is None:
            return f"{host}: could not rejoin the load: {rider.error if rider else 'no run'}"
        return f"{host} rejoined the load at {rider.restart_t:.1f}s ({len(own)} instances)"

    def jobs(self) -> list[dict[str, Any]]:
        """The riders' jobs, in their places, for the merged dump."""
        with self._lock:
            for r in self.riders:
                if r.slot is None and r.last is not None:
                    r.slot, self._slots = self._slots, self._slots + 1
            placed = sorted((r for r in self.riders if r.slot is not None),
                            key=lambda r: r.slot or 0)
        for r in placed:
            r.merged = r.last
        return [j for r in placed for j in (r.last or {}).get("jobs", [])]

    def settle(self, run: ClusterRun) -> Document | None:
        """Every host ended: the riders end with them (a late start's seconds past the run's
        end are not the run's); a last merged dump when a rider's last seconds came after
        the hosts' (none else), within a second of theirs."""
        self.stop()
        began = time.monotonic()
        while any(r.run is not None and r.ended is None for r in self.riders) and \
                time.monotonic() - began < SETTLE_S:
            time.sleep(0.1)
        late = [r for r in self.riders if r.last is not None and r.last is not r.merged]
        last = run.last_doc
        if not late or last is None:
            return None
        newest = max(float(r.last["timestamp_ms"]) - r.offset_s * 1000 for r in late if r.last)
        jobs = [j for h in run.order if h in run.frozen for j in run.frozen[h]["jobs"]]
        stamp = float(last["timestamp_ms"])
        return {"timestamp_ms": min(max(stamp + 100, newest), stamp + 1000),
                "jobs": jobs + self.jobs()}

    def stop(self) -> None:
        for r in list(self.riders):
            if r.run is not None and r.ended is None:
                with contextlib.suppress(Exception):
                    r.run.stop()

    def record(self) -> list[dict[str, Any]]:
        return [r.record() for r in self.riders] + self.refused

    # -- starting a rider -------------------------------------------------------------------
    def _start(self, run: ClusterRun, kind: str, host: str, source: str,
               todo: list[tuple[Instance, str]], loss_t: float, name: str) -> Rider | None:
        group = self.group
        start_ms = run.jobs_start_ms
        if start_ms is None or run.stopping:
            return None
        offset = float(group.facts.get(host, {}).get("clock_offset_ms") or 0) / 1000
        rider = Rider(kind, host, source, [i for i, _ in todo], loss_t, 0.0, offset,
                      start_ms / 1000)
        runner = group.runners[host]
        began = time.monotonic()
        while True:  # a recovered host's network and sshd take a moment
            # started as soon as its job file is there (`at` is now: nothing to wait for, no
            # host to start with it); its first IO says when it really began
            t = run.clock() + WRITE_S - start_ms / 1000
            texts = [(i, x) for i, text in todo
                     if (x := restart_text(text, i.window, t)) is not None]
            if not texts:
                return None
            try:
                runner.write_job(name, "\n".join(x for _, x in texts))
                break
            except Exception as e:  # noqa: BLE001 - said in run.json, the run goes on
                if kind != "rejoin" or time.monotonic() - began > RECONNECT_S:
                    rider.error = f"could not write its job file: {e}"
                    self.riders.append(rider)
                    return rider
                time.sleep(1.0)
        now = run.clock()
        rider.restart_t = now - start_ms / 1000
        rider.instances = [i for i, _ in texts]
        rider.on_start = self._started
        rider.run = runner.start(name, {**run.env, **group.envs[host]}, at=now + offset)
        self.riders.append(rider)
        group.rd.event("failover" if kind == "failover" else "rejoin", host=host,
                       source=source, t=round(rider.restart_t, 2), loss_t=loss_t,
                       instances=len(rider.instances))
        threading.Thread(target=rider.pump, daemon=True).start()
        return rider

    def _started(self, rider: Rider) -> None:
        """A rider's first IO: its instances' rates join the target from then (graded from
        their restart; the wait before it is the gap, not a lag)."""
        assert self.group.plan.cluster is not None and rider.first_io_t is not None
        last = max((i.window[1] for every in self.group.plan.cluster.instances.values()
                    for i in every), default=math.inf)
        for inst in rider.instances:  # an instance ending with the run keeps its rate to the end
            a = max(rider.first_io_t, inst.window[0])
            b = inst.window[1] if inst.window[1] < last else math.inf
            for c in inst.components:
                if c.target_iops:
                    rider.added.append((c.component, c.target_iops, a, b))
                    self._step(c.component, c.target_iops, a, b)

    def _step(self, component: str, rate: float, a: float, b: float) -> None:
        for spec in self.group.specs:
            if spec.component == component:
                add_window(spec, rate, a, b)


def add_window(spec: ComponentSpec, rate: float, a: float, b: float = math.inf) -> None:
    """`rate` more IO/s (less, when negative) in the component's target from `a` to `b`; the
    IOs due before `a` stay due."""
    edges = sorted({a, *([b] if math.isfinite(b) else []),
                    *(x for x, _ in spec.target_steps if x > a)})
    steps = [(x, v) for x, v in spec.target_steps if x < a]
    for x in edges:
        value = (spec.rate_at(x) or 0.0) + (rate if a <= x < b else 0.0)
        steps.append((x, round(value, 6) if value > 1e-6 else None))
    spec.target_steps = tuple(steps)


def ran_ms(jobs: Sequence[Document]) -> float:
    """How long the jobs have run (ms): the longest-running job that did IO. A staggered
    instance's job in its startdelay or ramp_time reports a job_runtime that is not its
    load's (longer than its neighbours'), and would start the axis too early."""
    did = [j for j in jobs if any(int(((j.get(d) or {}).get("lat_ns") or {}).get("N") or 0)
                                  for d in ("read", "write"))]
    return max((float(j.get("job_runtime") or 0) for j in did or jobs), default=0.0)
