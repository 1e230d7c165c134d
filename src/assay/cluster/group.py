"""The hosts of a cluster run, driven as one: opened and checked, each phase started on
every host at one instant, a lost host's share taken out of the schedule.

    group = RunnerGroup.open(plan, factory, run_dir, direct)   # one runner per host, checked
    fio = group.start("run.fio", env)                            # every host at one instant
    for doc in fio.documents(): ...                              # the hosts' dumps, merged

Before any IO, `open` connects to every host (in parallel) and checks it (cluster/hostcheck.py:
clock offset, fio's version, the same on every host, the target, the job files). A phase
(prefill, run) starts on every host at one instant T0 on this machine's clock, each host
waiting for T0 + its offset on its own clock; the start each host reports is the measured
skew (run.json: `cluster.skew_ms`). The phase's dumps are merged, and hosts found lost, in
cluster/merge.py.
"""

from __future__ import annotations

import copy
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.cluster.failover import Failover
from assay.cluster.hostcheck import check_host, same_fio
from assay.cluster.hostseries import HostSeries
from assay.cluster.liveness import LOSS_S, PROBE_S, Lag
from assay.cluster.merge import ClusterRun, call_quietly
from assay.exitcodes import UserError
from assay.participants.blkio import BlkioGroups
from assay.participants.lags import HostLags
from assay.plan import Plan
from assay.plan.model import variables
from assay.prefill.files import DataFiles
from assay.results.rundir import RunDir
from assay.runners.base import FioRun, HostLoss, Runner

RunnerFactory = Callable[[str, Path], Runner]


class RunnerGroup:
    def __init__(self, plan: Plan, runners: dict[str, Runner], envs: dict[str, dict[str, str]],
                 run_dir: RunDir):
        assert plan.cluster is not None
        self.plan = plan
        self.runners = runners
        self.envs = envs
        self.rd = run_dir
        self.facts: dict[str, dict[str, Any]] = {}  # per host, for run.json
        self.skew: dict[str, dict[str, float | None]] = {}  # phase -> host -> ms after T0
        self.lost: dict[str, dict[str, Any]] = {}  # host -> when and why
        self.series = HostSeries(plan, run_dir)
        self.duetime = HostLags(plan, run_dir)  # the agents reading fio's issue logs
        # the merged series' schedule: a lost host's share leaves it (reschedule)
        self.specs = copy.deepcopy(plan.specs)
        self.current: ClusterRun | None = None
        self.force = False  # write into instance directories holding files not assay's
        self.spawn_s: dict[str, float] = {}  # how long one remote command took per host
        self.files: dict[str, DataFiles] = {}  # per host, as its check read and claimed them
        self.late: dict[str, int] = {}  # host -> times it was silent but answered a probe
        self.blkio: BlkioGroups | None = None  # each host's blkio group (participants/blkio.py)
        self.lag = Lag()  # how far the controller fell behind the hosts' dumps (liveness.py)
        self.failover = Failover(self)  # lost hosts' instances restarted (cluster/failover.py)
        self._t0 = 0.0
        self.instant: float | None = None  # the next phase's T0, fixed by a participant
        self.on_loss: Callable[[HostLoss], None] = lambda loss: None  # the engine's route

    # -- opening: everything checked before any IO ----------------------------------------
    @classmethod
    def open(cls, plan: Plan, factory: RunnerFactory, rd: RunDir, direct: bool,
             force: bool = False) -> RunnerGroup:
        assert plan.cluster is not None
        runners: dict[str, Runner] = {}
        envs: dict[str, dict[str, str]] = {}
        for name, hp in plan.cluster.hosts.items():
            if not hp.host.target:
                raise UserError(f"{name}: give the host's target in the inventory "
                                f"({hp.host.source or 'inventory'}): assay_path or "
                                f"assay_device")
            # a device's job files name it (and offsets on it): no directory is used there
            envs[name] = variables(Path(hp.host.path or "/"), direct)
        group = cls(plan, runners, envs, rd)
        group.force = force
        more_files()
        try:
            for name in plan.cluster.hosts:
                runners[name] = factory(name, rd.host_dir(name))
            with ThreadPoolExecutor(max_workers=min(16, len(runners))) as pool:
                futures = {h: pool.submit(check_host, plan, h, runners[h], envs[h], force,
                                      group.duetime) for h in runners}
            problems = [str(f.exception()) for f in futures.values()
                        if isinstance(f.exception(), UserError)]
            if problems:  # every host's problem at once, each naming its host
                raise UserError("; ".join(problems) if len(problems) == 1 else
                                f"{len(problems)} hosts are not ready:\n  " +
                                "\n  ".join(problems))
            for h, f in futures.items():
                group.facts[h], group.spawn_s[h], group.files[h] = f.result()
            same_fio(group.facts)
        except BaseException:
            group.close()
            raise
        return group

    # -- what the session drives -----------------------------------------------------------
    def clock(self) -> float:
        """This machine's clock, following the hosts' progress (a replay runs faster)."""
        run = self.current
        return run.clock() if run is not None else time.time()

    def confine(self) -> None:
        """Each host's fio in its own blkio group there, when the run throttles."""
        for h, path in (self.blkio.procs() if self.blkio else {}).items():
            self.runners[h].confine(Path(path))

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] | Mapping[str, Sequence[str]] = ()) -> ClusterRun:
        """`sections` per host (a Mapping): only the hosts named run, each its own; fio runs
        only where a host has jobs (not where it runs a database alone)."""
        active = [h for h in self.active()
                  if not isinstance(sections, Mapping) or sections.get(h)]
        if not active:
            raise UserError("every host of the cluster is lost")
        # time for every host's start command to get there, started one after the other:
        # from what one remote command took when the hosts were checked (a loaded machine
        # starts ssh slowly), never less than 1 s
        spawn = max((self.spawn_s.get(h, 0.0) for h in active), default=0.0)
        lead = min(10.0, max(1.0, 0.3 + 3 * spawn) + 0.05 * len(active))
        planned, self.instant = self.instant, None  # cluster/postgres.py: pgbench's too
        t0 = at if at is not None else planned if planned and planned > time.time() + 0.2 \
            else time.time() + lead
        runs: dict[str, FioRun] = {}
        for h in active:
            offset = float(self.facts.get(h, {}).get("clock_offset_ms") or 0) / 1000
            runs[h] = self.runners[h].start(name, {**env, **self.envs[h]}, at=t0 + offset,
                                            sections=sections[h] if isinstance(
                                                sections, Mapping) else sections)
        self.current = ClusterRun(self, runs, t0, Path(name).stem)
        self.current.env = dict(env)
        return self.current

    def active(self) -> list[str]:
        """The hosts not lost that run fio jobs (not only a database)."""
        assert self.plan.cluster is not None
        return [h for h in self.runners if h not in self.lost
                and any(c.jobs for c in self.plan.cluster.hosts[h].specs)]

    def close(self) -> None:
        """Close every runner (fio stopped, remote directories removed), in parallel."""
        todo = [r.abandon if h in self.lost else r.close for h, r in self.runners.items()]
        if todo:
            with ThreadPoolExecutor(max_workers=min(16, len(todo))) as pool:
                list(pool.map(call_quietly, todo))

    def report(self, loss: HostLoss) -> None:
        """A host lost, as the merge step found it: to whoever routes losses (the engine)."""
        self.on_loss(loss)

    def reschedule(self, host: str, t: float) -> None:
        """From `t` on, the cluster's fixed rates are those of the hosts still active: each
        component's target loses the lost host's share (its schedule, staggered instances
        and all) from `t`; the IOs due up to `t` stay due (the Sampler's `behind` stays
        continuous)."""
        assert self.plan.cluster is not None
        share = {c.component: c for c in self.plan.cluster.hosts[host].specs}
        for spec in self.specs:
            lost = share.get(spec.component)
            if lost is None or not (lost.target_iops or lost.target_steps):
                continue
            edges = sorted({t, *(x for x, _ in (*spec.target_steps, *lost.target_steps)
                                 if x > t), *([lost.start_s] if lost.start_s > t else [])})
            steps = [(x, v) for x, v in spec.target_steps if x < t]
            for x in edges:
                left = (spec.rate_at(x) or 0.0) - \
                    ((lost.rate_at(x) or 0.0) if x >= lost.start_s else 0.0)
                steps.append((x, round(left, 6) if left > 1e-6 else None))
            spec.target_steps = tuple(steps)

    # -- the hosts as they report (actions.context.HostWatch) -----------------------------
    loss_s = LOSS_S + PROBE_S  # the longest a cut host goes undetected after its last dump

    def rejoin(self, host: str) -> str:
        return self.failover.rejoin(host)

    def is_lost(self, host: str) -> bool:
        return host in self.lost

    def silence(self, host: str) -> float:
        run = self.current
        if run is None or host not in run.runs:
            return 0.0
        return run.alive.silence(host)

    # -- what run.json records ------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        assert self.plan.cluster is not None
        spreads = [max(v) - min(v) for v in (
            [x for x in phase.values() if x is not None] for phase in self.skew.values()) if v]
        return {"hosts": self.facts, "placement": self.plan.cluster.to_json(),
                "variables": self.envs, "skew_ms": self.skew,
                "worst_skew_ms": round(max(spreads), 3) if spreads else None,
                "lost": self.lost, "late": self.late, "failover": self.failover.record(),
                "controller_lag": self.lag.record()}


def more_files() -> None:
    """Each host holds its sessions' pipes and its stream files open all run: a few hundred
    hosts pass the usual soft limit of 1,024 open files. It is raised to the hard limit, as
    a server that holds a connection per client does."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if resource.RLIM_INFINITY not in (soft, hard) and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
