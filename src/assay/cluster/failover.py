"""A lost host's instances started again on the survivors (`failover`), a recovered host's
started again on it (`host_recover`), while the run goes on.

    lost n3 at 8.0 s --(loss detected, then failover.after)--> n3's instances on n1 and n2
    host_recover n3 ------------------------------------------> n3's other instances on n3

Each restart is a fio of its own on the host that takes the instances (a "rider",
cluster/rider.py): their job files (plan/failover.py) from their schedule's current point to
their own end. A rider's dumps ride along at the end of every merged dump (the Sampler keys
jobs by their place, so a rider keeps its place from its first dump on), and the merged
target steps up by the instances' rates from their restart: they are graded from there.
run.json's `cluster.failover` records each rider: its instances, the loss, the restart, its
first IO and the gap from the loss to it (X-Ray's "how long the application was gone").

Here: the Failover (the run's riders: started, placed in the merged dumps, stopped,
recorded) and `add_window`, a step of a component's target.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from typing import Any, Protocol

from assay.cluster.rider import Rider
from assay.metrics.sampler import ComponentSpec
from assay.plan.failover import Instance, restart_text
from assay.runners.base import Document


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
END_S = 2.0  # riders still running this long after every host ended are stopped
SETTLE_S = 7.0  # and are waited for this long


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
        many = f"{len(own)} instance" + ("s" if len(own) != 1 else "")
        return f"{host} rejoined the load at {rider.restart_t:.1f}s ({many})"

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
        began = time.monotonic()
        for wait_s, stop in ((END_S, False), (SETTLE_S, True)):
            if stop:
                self.stop()
            while any(r.run is not None and r.ended is None for r in self.riders) and \
                    time.monotonic() - began < wait_s:
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
                r.stopped = True
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
        # at the instant its job file was cut for, so that it ends with the run's hosts (a
        # write slower than WRITE_S starts it late: it then ends as late)
        now = max(run.clock(), start_ms / 1000 + t)
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
