"""The load on an inventory's hosts over SSH: a RunnerGroup (cluster/group.py) opened and
checked before any IO (each host's target locked for the run there, as a local one is:
cluster/hostcheck.py hold_target), every host prefilled at once, the merged series graded as
one and each host on its own (run.json: `cluster`)."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.actions.context import HostWatch
from assay.cluster.group import RunnerGroup
from assay.cluster.postgres import HostDatabases
from assay.hosts import cgroup
from assay.integrity import lifecycle as integrity
from assay.metrics.counters import Parsed
from assay.metrics.sampler import ComponentSpec
from assay.participants.base import Where
from assay.participants.blkio import BlkioGroups
from assay.participants.databases import Databases
from assay.participants.integrity import Integrity
from assay.participants.issuelog import IssueLog
from assay.participants.utilisation import Utilisation
from assay.plan import PREFILL_JOB, RUN_JOB, Plan
from assay.platforms import platformstate
from assay.prefill.files import DataFiles, Run
from assay.results.record import parse_record
from assay.results.rundir import RunDir
from assay.run_options import signals_held
from assay.runinfo import initial_record
from assay.runners import LocalRunner
from assay.runners.base import FioRun, HostLoss
from assay.runners.ssh import ssh_runner
from assay.sessions.base import Session


class HostsSession(Session):
    group: RunnerGroup | None = None

    def open(self) -> None:
        """The run directory, every host checked and ready (RunnerGroup.open), run.json's
        start; then each host's integrity writers and databases, checked there."""
        plan = self.plan
        assert plan.cluster is not None
        self.run_dir, self.group, self.info = _open_run(self)
        self.blkio = self.group.blkio  # each host's group, when the run throttles
        self._participants(self.group, self.run_dir)

    def _participants(self, group: RunnerGroup, rd: RunDir) -> None:
        """Beside fio on the hosts, in their start order (as on one host: sessions/local.py),
        each checked there before any IO."""
        plan, opt = self.plan, self.opt
        direct = plan.scenario.target.direct is not False
        databases = HostDatabases.open(plan, group, rd)  # on the hosts
        if databases:
            self.participants.append(Databases(databases, rd.path, direct, opt.fresh, opt.keep,
                                               self.platform.temporary, self._procs(),
                                               self.console))
        session = integrity.open_hosts(plan.resolved, plan.streams, rd.id, group, direct,
                                       self.platform)
        if session:
            self.participants.append(Integrity(session, plan.total_seconds))
        if any(group.duetime.needed(h) for h in group.runners):
            self.participants.append(IssueLog(group.duetime, group.runners, group.lost))
        self.participants.append(Utilisation(group.runners, group.lost))  # and the controller's
        self.plug_in(Where(plan, rd, group.runners, group.lost))

    def data_files(self) -> dict[str, tuple[Run, DataFiles]]:
        assert self.group
        return {h: (self.group.runners[h].run, files) for h, files in self.group.files.items()}

    def start_prefill(self, sections: dict[str, list[str]]) -> FioRun:
        assert self.group
        fio = self.group.start(PREFILL_JOB, {}, sections=sections)
        fio.started  # noqa: B018 - records the skew of the prefill phase
        return fio

    @property
    def lost(self) -> Mapping[str, Any]:
        return self.group.lost if self.group else {}

    def start(self) -> FioRun:
        assert self.group
        self.group.confine()
        return self.group.start(RUN_JOB, self.env)

    def clock(self) -> float:
        assert self.group
        return self.group.clock()

    def fetch_logs(self) -> list[Path]:
        return []  # no per-IO log comes back: each host's lags are rows (IssueLog)

    def close(self) -> None:
        if self.group:
            self.group.close()

    def route_losses(self, route: Callable[[HostLoss], None]) -> None:
        assert self.group
        self.group.on_loss = route

    def reschedule(self, host: str, t: float) -> None:
        assert self.group
        self.group.reschedule(host, t)

    def specs(self) -> list[ComponentSpec]:
        """A lost host's share leaves the schedule (RunnerGroup.reschedule)."""
        assert self.group
        return [c for c in self.group.specs if c.jobs] or super().specs()

    def parsed(self) -> Parsed | None:
        assert self.group
        return self.group.series.parsed

    @property
    def watch(self) -> HostWatch | None:
        return self.group

    def graded_plan(self) -> Plan:
        """After a host is lost, each component's target is the hosts' still active
        (RunnerGroup.reschedule), so a window's target, its percentage and the warnings are
        the survivors' (docs/hosts.md)."""
        steps = {s.component: s.target_steps for s in self.group.specs if s.target_steps} \
            if self.group is not None else {}
        if not steps:
            return self.plan
        streams = [replace(st, components=[replace(c, target_steps=steps.get(c.component, ()))
                                           for c in st.components]) for st in self.plan.streams]
        return replace(self.plan, streams=streams)

    def grade_hosts(self, steps: Sequence[dict[str, Any]],
                    until: float | None = None) -> dict[str, Any] | None:
        return finish(self.group, steps, until) if self.group is not None else None


def _open_run(s: HostsSession) -> tuple[RunDir, RunnerGroup, dict[str, Any]]:
    plan, opt, platform = s.plan, s.opt, s.platform
    assert plan.cluster is not None
    direct = plan.scenario.target.direct is not False
    factory = opt.runner
    if factory is LocalRunner:  # the default: the inventory's hosts over SSH
        factory = functools.partial(ssh_runner, [hp.host for hp in plan.cluster.hosts.values()])
    rd = RunDir.create(opt.results_root, plan.name)
    rd.write_text("scenario.yaml", plan.resolved.text)
    for host, files in plan.jobfiles.items():  # kept before any host is reached
        for name, text in files.items():
            rd.write_text(f"hosts/{host}/{name}", text)
    s.console.print(f"cluster: checking {len(plan.cluster.hosts)} hosts "
                    f"({', '.join(plan.cluster.hosts)})")
    try:
        group = RunnerGroup.open(plan, factory, rd, direct, opt.force)
        for h, facts in group.facts.items():  # followed, as a local --path is
            if facts.get("path_resolved"):
                s.console.print(f"{h}: assay_path {plan.cluster.hosts[h].host.path} is a "
                                f"symbolic link: the run uses {facts['path_resolved']}")
        try:  # the platform's own preparation (Ceph: the run's images) and fio's variables
            extra = platform.open_hosts(plan.name, [f for hp in plan.cluster.hosts.values()
                                                    for f in hp.files], opt.force)
            for env in group.envs.values():
                env.update(extra)
            # each host's blkio group with target.throttle in force (participants/blkio.py)
            group.blkio = BlkioGroups.open(
                plan, rd.id, group.runners, group.lost,
                {h: str(hp.host.target or "/") for h, hp in plan.cluster.hosts.items()},
                {h: str(hp.host.vars.get("assay_blkio_root") or cgroup.ROOT)
                 for h, hp in plan.cluster.hosts.items()})
        except BaseException:
            group.close()
            raise
    except BaseException:
        rd.close()
        shutil.rmtree(rd.path, ignore_errors=True)  # nothing ran: no run to keep
        raise
    try:
        with signals_held():  # the hosts are ready: the run directory gets its record
            info = initial_record(plan, rd.id, platform, rd.path, direct, opt.parent, {})
            info["target"] = {"platform": "hosts", "direct_io": direct,
                              "dataset_bytes": plan.dataset_bytes,
                              "hosts": {h: hp.host.target for h, hp in plan.cluster.hosts.items()},
                              "driver": platform.facts()}  # e.g. the images a crash leaves
            if group.blkio is not None:  # the caps in force on each host, as it reports them
                for h, caps in group.blkio.in_force().items():
                    group.facts[h]["blkio_limits"] = caps
            info["cluster"] = group.record()
            rd.write_record(parse_record(info))
    except BaseException:
        if group.blkio is not None:
            group.blkio.remove()
        group.close()
        raise
    return rd, group, info


def finish(group: RunnerGroup, steps: Sequence[dict[str, Any]],
           until: float | None = None) -> dict[str, Any]:
    """run.json's `cluster`: hosts, skew, losses, and each host graded on its own (up to
    `until` when the timeline ended the load early)."""
    assert group.plan.cluster is not None
    out = group.record()
    group.series.close()  # every host's samples are in
    out["graded"] = group.series.grade(steps, group.lost, group.duetime.host_figures, until)
    out["due_time"] = group.duetime.record()
    out["thresholds"] = []
    limit = group.plan.cluster.skew_limit_ms
    if limit is not None:  # the measured phase's worst skew (prefill is not graded)
        run = [v for v in (group.skew.get("run") or {}).values() if v is not None]
        worst = round(max(run) - min(run), 3) if run else None  # the spread of the starts
        out["thresholds"].append({
            "expr": f"start_skew < {limit:g}ms", "component": "cluster", "metric": "start_skew",
            "observed": worst, "bound": limit, "passed": worst is not None and worst < limit,
            "note": "" if worst is not None else "no start measured"})
    out["thresholds"] += failover_graded(out.get("failover") or [])
    # the platform's own state (platform.recovery_s, ...: platforms/platformstate.py)
    out["thresholds"] += platformstate.grade(group.plan.scenario.thresholds, group.rd.path)
    out["passed"] = all(g["passed"] for g in out["graded"].values()) and \
        all(t["passed"] for t in out["thresholds"])
    return out


def failover_graded(restarts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each restart (cluster/failover.py) did IO again: the gap from the loss to its first
    IO is its figure (X-Ray's time the application was gone)."""
    out = []
    for r in restarts:
        if "why" in r:
            out.append({"expr": f"{r['from']}'s instances restarted on {r['to']}",
                        "component": "cluster", "metric": "failover", "observed": None,
                        "unit": "s", "passed": False, "note": r["why"]})
            continue
        did = int(r.get("ios") or 0) > 0 and not r.get("error")
        out.append({"expr": f"{', '.join(r['instances'])} "
                            f"{'restarted on' if r['kind'] == 'failover' else 'back on'} "
                            f"{r['host']} did IO", "component": "cluster",
                    "metric": "failover_gap_s", "observed": r.get("gap_s"), "unit": "s",
                    "passed": did, "note": "" if did else
                    (r.get("error") or "no IO after the restart")})
    return out
