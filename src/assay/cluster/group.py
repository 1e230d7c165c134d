"""The runners of a cluster run, driven as one Runner: the engine's seam does not change.

    group = RunnerGroup.open(plan, factory, run_dir, direct)   # one runner per host, checked
    fio = group.start("run.fio", env)                            # every host at one instant
    for doc in fio.documents(): ...                              # the hosts' dumps, merged

Before any IO, `open` connects to every host (in parallel), measures its clock offset, checks
fio's version (the same on every host, >= 3.33), makes and writes to the target (so an
unwritable target is refused naming the host), keeps the host's job files and has fio parse
them. A phase (prefill, run) starts on every host at one instant T0 on this machine's clock,
each host waiting for T0 + its offset on its own clock; the start each host reports is the
measured skew (run.json: `cluster.skew_ms`).

The merged dumps carry every host's jobs, in host order, so the engine's Sampler adds the
hosts' counts and histogram bins exactly as it adds numjobs clones: cluster percentiles come
from the merged histograms. Each host also has its own Sampler (cluster/hostseries.py).

A host is lost when its fio ends badly (fio or its SSH session died) or when it goes quiet
while another host is heard and does not answer a probe (cluster/liveness.py): the loss is
a timeline event, the host's last dump stays in every merged dump after it (its counters
stop: its data up to the loss is kept and it adds nothing after), and the other hosts go on.
`cluster.ndjson` labels every merged second with the hosts still active.
"""

from __future__ import annotations

import contextlib
import copy
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.cluster import devices
from assay.cluster.duetime import HostLags
from assay.cluster.failover import Failover, ran_ms
from assay.cluster.hostseries import HostSeries
from assay.cluster.liveness import LOSS_S, PROBE_S, Liveness
from assay.cluster.throttle import HostsBlkio
from assay.exitcodes import UserError
from assay.hosts.check import FIO_MIN, fio_version
from assay.plan import RUN_JOB, Plan
from assay.plan.model import variables
from assay.platforms import rbdjobs
from assay.results.rundir import RunDir
from assay.runners.base import CommandResult, Document, FioRun, Runner
from assay.scenario.units import format_size

OVERRUN_S = 3.0  # still running this long after another host ended normally: stopped
_END = object()

RunnerFactory = Callable[[str, Path], Runner]
# $1 the target, then the instances' sub-directories: prints those holding files assay did
# not put there (no .assay-owned mark); marks the others as assay's
OWNED = ('d=$1; shift; for s; do p="$d/$s"; '
         'if [ -d "$p" ] && [ ! -e "$p/.assay-owned" ] && [ -n "$(ls -A -- "$p")" ]; '
         'then echo "$s"; fi; done')
MARK = 'd=$1; shift; for s; do : > "$d/$s/.assay-owned" || exit 3; done'
SPLIT = "assay-owned:"
# the host's facts, one line each ("-" when unknown): kernel, CPUs, memory (an integer: awk
# prints large products in exponent form), the target's filesystem type, its free bytes and
# what the instances' directories already hold there (files a prefill writes over in place)
FACTS = ('p=$1; while [ ! -e "$p" ]; do p=$(dirname -- "$p"); done; '
         'uname -sr; nproc; awk \'/MemTotal/ {printf "%.0f\\n", $2 * 1024}\' /proc/meminfo; '
         'df -PT -- "$p" 2>/dev/null | awk \'NR == 2 {t = $2} END {print (t == "" ? "-" : t)}\'; '
         'df -Pk -- "$p" 2>/dev/null | awk \'NR == 2 {f = $4} END '
         '{if (f == "") print "-"; else printf "%.0f\\n", f * 1024}\'; '
         '( d=$1; shift; u=0; for s; do if [ -d "$d/$s" ]; then '
         'u=$((u + $(du -sk -- "$d/$s" | cut -f1))); fi; done; echo $((u * 1024)) )')
SPACE_MARGIN = 64 << 20  # kept free on each host: a full filesystem misbehaves before full


class RunnerGroup:
    host = "cluster"

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
        self.late: dict[str, int] = {}  # host -> times it was silent but answered a probe
        self.blkio: HostsBlkio | None = None  # each host's blkio group (cluster/throttle.py)
        self.failover = Failover(self)  # lost hosts' instances restarted (cluster/failover.py)
        self._t0 = 0.0
        self.instant: float | None = None  # the next phase's T0, fixed by a participant

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
        try:
            for name in plan.cluster.hosts:
                runners[name] = factory(name, rd.host_dir(name))
            with ThreadPoolExecutor(max_workers=min(16, len(runners))) as pool:
                futures = {h: pool.submit(group._check, h) for h in runners}
            problems = [str(f.exception()) for f in futures.values()
                        if isinstance(f.exception(), UserError)]
            if problems:  # every host's problem at once, each naming its host
                raise UserError("; ".join(problems) if len(problems) == 1 else
                                f"{len(problems)} hosts are not ready:\n  " +
                                "\n  ".join(problems))
            group.facts = {h: f.result() for h, f in futures.items()}
            group._same_fio()
        except BaseException:
            group.close()
            raise
        return group

    def _check(self, name: str) -> dict[str, Any]:
        """One host, before any IO: clock, fio, target, job files (UserError naming it)."""
        assert self.plan.cluster is not None
        runner, hp = self.runners[name], self.plan.cluster.hosts[name]
        facts: dict[str, Any] = {"address": hp.host.address, "target": hp.host.target,
                                 "instances": hp.instances}
        if hasattr(runner, "measure_clock"):
            offset, rtt = runner.measure_clock()
            facts.update(clock_offset_ms=round(offset * 1000, 3), rtt_ms=round(rtt * 1000, 3))
        began = time.monotonic()
        fio = runner.run([str(hp.host.vars.get("assay_fio") or "fio"), "--version"])
        self.spawn_s[name] = time.monotonic() - began  # a remote command's cost, here, now
        if fio.returncode != 0:
            raise UserError(f"{name}: fio is not installed there (or does not run): "
                            f"{_last(fio.stderr)}")
        version = fio_version(fio.stdout)
        facts["fio"] = fio.stdout.strip() or "unknown"
        if version is not None and version < FIO_MIN:
            raise UserError(f"{name}: {fio.stdout.strip()} is older than fio "
                            f"{'.'.join(map(str, FIO_MIN))}, the oldest assay drives")
        if hp.host.device:  # a raw device there: checked as a local one is
            facts.update({k: v for k, v in _facts(runner.run(["sh", "-c", FACTS, "assay-probe",
                                                              "/"])).items()
                          if k in ("kernel", "cpus", "mem_bytes")})
            facts.update(devices.check(name, runner, hp.host.device,
                                       sum(size for _, size in hp.files), self.force))
        else:
            self._check_directory(name, runner, facts)
        for job, text in self.plan.jobfiles[name].items():
            runner.write_job(job, text)
        ping = getattr(runner, "ping", None)  # its session opened now, not when it is needed
        if ping is not None and not ping(30.0):
            raise UserError(f"{name}: does not answer over SSH (a shell echoing a line)")
        complaint = runner.check_job(RUN_JOB, self.envs[name])
        if complaint:
            raise UserError(f"{name}: fio rejected the job file: {complaint}")
        self.duetime.check(name, runner)  # python3 for the agent, when it is needed
        return facts

    def _check_directory(self, name: str, runner: Runner, facts: dict[str, Any]) -> None:
        """A target directory: assay's to write in, writable, with room for the files."""
        assert self.plan.cluster is not None
        hp = self.plan.cluster.hosts[name]
        target = hp.host.path or "/"
        # the host's facts, then what of the instances' directories is not assay's: one trip
        probe = runner.run(["sh", "-c", f"{FACTS}; echo {SPLIT}; {OWNED}", "assay-probe",
                            target, *hp.subdirs])
        head, _, foreign = probe.stdout.partition(f"{SPLIT}\n")
        facts.update(_facts(CommandResult(probe.returncode, head, probe.stderr)))
        if foreign.strip() and not self.force:
            dirs = ", ".join(f"{target}/{d}" for d in foreign.split())
            raise UserError(f"{name}: {dirs} holds files assay did not create there; move "
                            f"them away, or give --force to write over them")
        runner.prepare(Path(target), hp.subdirs)  # unwritable: said before its space
        if not rbdjobs.on_rbd(self.plan.scenario.target):  # RBD images hold no host files
            _space(name, target, facts, sum(size for _, size in hp.files))
        mark = runner.run(["sh", "-c", MARK, "assay-mark", target, *hp.subdirs])
        if mark.returncode != 0:
            raise UserError(f"{name}: cannot write to the target {target}: "
                            f"{_last(mark.stderr)}")

    def _same_fio(self) -> None:
        versions: dict[str, list[str]] = {}
        for name, f in self.facts.items():
            versions.setdefault(str(f.get("fio")), []).append(name)
        if len(versions) > 1:
            most = max(versions.values(), key=len)
            odd = [f"{', '.join(hosts)} ({v})" for v, hosts in versions.items()
                   if hosts is not most]
            raise UserError(f"fio differs between hosts: {'; '.join(odd)} against "
                            f"{[v for v, h in versions.items() if h is most][0]} on "
                            f"{', '.join(most)}: results would not compare; install one "
                            f"version everywhere")

    # -- the Runner protocol ------------------------------------------------------------
    def clock(self) -> float:
        """This machine's clock, following the hosts' progress (a replay runs faster)."""
        run = self.current
        return run.clock() if run is not None else time.time()

    def prepare(self, directory: Path, subdirs: Sequence[str]) -> None:
        """Done per host by `open`."""

    def write_job(self, name: str, text: str) -> Path:
        raise NotImplementedError("a cluster's job files differ per host: see open()")

    def check_job(self, name: str, env: Mapping[str, str]) -> str | None:
        return None  # checked per host by open()

    def confine(self, procs: Path | None) -> None:
        """Each host's fio in its own blkio group there, when the run throttles."""
        for h, path in (self.blkio.procs() if self.blkio else {}).items():
            self.runners[h].confine(Path(path))

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] | Mapping[str, Sequence[str]] = ()) -> ClusterRun:
        """`sections` per host (a Mapping): only the hosts named run, each its own; fio runs
        only where a host has jobs (not where it runs a database alone)."""
        hosts = self.plan.cluster.hosts if self.plan.cluster else {}
        active = [h for h in self.runners if h not in self.lost
                  and (not isinstance(sections, Mapping) or sections.get(h))
                  and any(c.jobs for c in hosts[h].specs)]
        if not active:
            raise UserError("every host of the cluster is lost")
        # time for every host's start command to get there, started one after the other:
        # from what one remote command took when the hosts were checked (a loaded machine
        # starts ssh slowly), never less than 1 s
        spawn = max((self.spawn_s.get(h, 0.0) for h in active), default=0.0)
        lead = min(10.0, max(1.0, 0.3 + 3 * spawn) + 0.05 * len(active))
        if name == RUN_JOB:  # before fio: the agents wait for the issue logs it opens
            self.duetime.start({h: self.runners[h] for h in active})
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

    def fetch_logs(self) -> list[Path]:
        self.duetime.finish(self.lost)  # the hosts' lags, into the run directory
        return []  # no per-IO log comes back

    def run_all(self, argv: Sequence[str], timeout: float = 60.0) -> dict[str, CommandResult]:
        return {h: r.run(argv, timeout) for h, r in self.runners.items() if h not in self.lost}

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        results = self.run_all(argv, timeout)
        bad = {h: r for h, r in results.items() if r.returncode != 0}
        if bad:
            h, r = next(iter(bad.items()))
            return CommandResult(r.returncode, "", f"{h}: {r.stderr}")
        return CommandResult(0, "".join(r.stdout for r in results.values()), "")

    def agent(self, command: str, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
        raise NotImplementedError("the agent runs per host: runners[host].agent()")

    def close(self) -> None:
        """Close every runner (fio stopped, remote directories removed), in parallel."""
        closers = [getattr(r, "abandon", None) if h in self.lost else getattr(r, "close", None)
                   for h, r in self.runners.items()]
        todo = [c for c in closers if c is not None]
        if todo:
            with ThreadPoolExecutor(max_workers=min(16, len(todo))) as pool:
                list(pool.map(_call, todo))

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
                "lost": self.lost, "late": self.late, "failover": self.failover.record()}


class ClusterRun:
    """Every host's fio for one phase (the FioRun protocol), their dumps merged."""

    def __init__(self, group: RunnerGroup, runs: dict[str, FioRun], t0: float, phase: str):
        self.group = group
        self.runs = runs
        self.t0 = t0
        self.phase = phase
        self.measured = phase == Path(RUN_JOB).stem
        self.order = list(runs)
        self.active = list(runs)
        self.ended: dict[str, int] = {}  # host -> fio's exit status
        self.pending: dict[str, list[Document]] = {h: [] for h in runs}
        self.frozen: dict[str, Document] = {}  # each host's newest merged dump
        self.alive = Liveness(runs, group.runners,
                              lambda h: "clock_offset_ms" in group.facts.get(h, {}),
                              max(0.0, t0 - time.time()) + 1.5,
                              lambda h: h not in self.active or h in self.ended)
        self.stopping = False
        self.env: dict[str, str] = {}  # the phase's fio variables (a restart uses them)
        self._last: Document | None = None
        self._jobs_start_ms: float | None = None
        self._first_end: float | None = None
        self._started: dict[str, float] = {}
        self._q: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._verdicts: queue.SimpleQueue[tuple[str, bool, str]] = queue.SimpleQueue()
        for h, run in runs.items():
            threading.Thread(target=self._pump, args=(h, run), daemon=True).start()
        threading.Thread(target=self._listen, daemon=True).start()

    def _pump(self, host: str, run: FioRun) -> None:
        """One host's dumps into the queue, noting when each arrived; then fio's status
        (waited for here: the engine's loop never blocks on one host)."""
        rc = -1
        try:
            for doc in run.documents(poll=0.5):
                if doc is not None:
                    self.alive.dump(host)
                    self._q.put((host, doc))
            rc = run.wait()
        finally:
            self._q.put((host, (_END, rc)))

    # -- time -----------------------------------------------------------------------------
    def _host_start(self, host: str) -> float:
        if host not in self._started:
            self._started[host] = self.runs[host].started
        return self._started[host]

    @property
    def started(self) -> float:
        """T0. Each host's start after T0 is measured (group.skew, ms); the start skew of a
        phase is the spread of those starts."""
        skew: dict[str, float | None] = {}
        for h in self.runs:
            began = self._host_start(h)
            facts = self.group.facts.get(h, {})
            if "clock_offset_ms" in facts:  # a real host: its clock, corrected
                skew[h] = round((began - facts["clock_offset_ms"] / 1000 - self.t0) * 1000, 3)
            else:
                skew[h] = None  # a replay has no instant to measure against
        self.group.skew[self.phase] = skew
        return self.t0

    def clock(self) -> float:
        """Now on this machine's clock, as far as the hosts' dumps have come (the newest)."""
        if self._last is None:
            return time.time() if self.group.facts and any(
                "clock_offset_ms" in f for f in self.group.facts.values()) else self.t0
        ts = float(self._last["timestamp_ms"]) / 1000
        return max(ts, time.time()) if self._real() else ts

    def _real(self) -> bool:
        return any("clock_offset_ms" in f for f in self.group.facts.values())

    # -- the merged stream ----------------------------------------------------------------
    @property
    def last_doc(self) -> Document | None:
        return self._last

    def documents(self, poll: float = 0.2) -> Iterator[Document | None]:
        while True:
            try:
                host, item = self._q.get(timeout=poll)
            except queue.Empty:
                self._watch()
                yield None
                continue
            if isinstance(item, tuple) and item[0] is _END:
                self._ended(host, item[1])
            elif host in self.active:
                self.pending[host].append(item)
            yield from self._merge()
            self._watch()
            if all(h in self.ended for h in self.order):
                yield from self._merge(final=True)
                tail = self.group.failover.settle(self) if self.measured else None
                if tail is not None:  # restarted instances' last seconds (failover.py)
                    self._last = tail
                    yield tail
                return

    def _ended(self, host: str, rc: int) -> None:
        self.ended[host] = rc
        if host in self.active and rc != 0 and not self.stopping:
            self._lose(host, ended_why(self.runs[host], rc))
        elif self._first_end is None and rc == 0:
            self._first_end = time.monotonic()

    def _listen(self) -> None:
        """In a thread of its own, so that a busy engine loop does not delay it: which host
        has gone quiet (cluster/liveness.py); what it decides waits in `_verdicts`, taken by
        the engine's thread at its next turn (`_watch`)."""
        while not self.stopping and any(h not in self.ended for h in self.active):
            waiting = [h for h in self.active if h not in self.ended]
            for h, why in self.alive.check(waiting, len(self.order) == 1, self._answer):
                self._verdicts.put((h, False, why))
            time.sleep(0.1)

    def _answer(self, host: str, ok: bool, silent: float) -> None:
        self._verdicts.put((host, ok, f"no status from fio for {silent:.1f} s and no answer "
                                      f"over SSH within {PROBE_S:g} s (host or network down)"))

    def _watch(self) -> None:
        """Lose the hosts found silent (`_listen`); stop overrunning hosts."""
        while not self._verdicts.empty():
            host, ok, why = self._verdicts.get()
            self.alive.answer(host, ok)
            if ok:
                self.group.late[host] = self.group.late.get(host, 0) + 1
            elif host in self.active and host not in self.ended and not self.stopping:
                self._lose(host, why)
        if self.measured:
            self.group.failover.tick(self)
        now = time.monotonic()
        if self._first_end is not None and now - self._first_end > OVERRUN_S + self._spread():
            for h in [h for h in self.active if h not in self.ended]:
                self._lose(h, "fio still running after the other hosts ended")

    def _spread(self) -> float:
        """How much later than the first a host may end: its instances' stagger."""
        return max((float(w.stagger) * (w.count_per_host * len(self.order) - 1)
                    for w in self.group.plan.resolved.workloads.values()), default=0.0)

    def _lose(self, host: str, reason: str) -> None:
        self.active.remove(host)
        t = self._last_t(host)
        self.group.lost[host] = {"t": t, "phase": self.phase, "reason": reason}
        self.group.rd.event("host_lost", host=host, t=t, phase=self.phase, reason=reason,
                            hosts_active=len(self.active))
        if self.measured:
            self.group.reschedule(host, t)
            self.group.failover.lost(self, host, t)
        if self.measured:  # a timeline event: phases cut at it
            self.group.rd.event("step", name="host_lost", action="host_lost", n=1,
                                t_due=t, t_start=t, t_end=t, seconds=0.0, outcome="detected",
                                output=f"{host}: {reason}", annotate=True, host=host)
        run = self.runs[host]
        end = getattr(run, "abandon", None) or run.stop  # not asking a host that is gone
        threading.Thread(target=_call, args=(end,), daemon=True).start()
        if not self.active and not self.stopping:
            self.stopping = True

    def _last_t(self, host: str) -> float:
        """When the host last reported, on the series' axis: how long its jobs had run."""
        doc = (self.pending[host] or [self.frozen.get(host) or {}])[-1]
        return round(ran_ms(doc.get("jobs", [])) / 1000, 3)

    @property
    def jobs_start_ms(self) -> float | None:
        """When the merged axis starts (epoch ms, this machine's clock), once known."""
        return self._jobs_start_ms

    def _t(self) -> float | None:
        if self._last is None or self._jobs_start_ms is None:
            return None
        return round((float(self._last["timestamp_ms"]) - self._jobs_start_ms) / 1000, 3)

    def _merge(self, final: bool = False) -> Iterator[Document]:
        """One merged dump per round in which every running host has a new one."""
        while True:
            running = [h for h in self.active if h not in self.ended]
            ready = any(self.pending[h] for h in self.order)
            if not ready or (not final and any(not self.pending[h] for h in running)):
                return
            rel: list[float] = []
            fresh: list[str] = []
            for h in self.order:
                if self.pending[h]:
                    doc = self.pending[h].pop(0)
                    self.frozen[h] = doc
                    fresh.append(h)
                    rel.append(float(doc.get("timestamp_ms") or 0) / 1000 - self._host_start(h))
            jobs = [j for h in self.order if h in self.frozen for j in self.frozen[h]["jobs"]]
            if self.measured:  # restarted instances, after every host's (cluster/failover.py)
                jobs += self.group.failover.jobs()
            stamp = (self.t0 + max(rel)) * 1000
            merged: Document = {"timestamp_ms": stamp, "jobs": jobs}
            if self._jobs_start_ms is None:
                runtime = ran_ms(jobs)
                self._jobs_start_ms = max(stamp - runtime, self.t0 * 1000)
            if self.measured:  # each host's second is the merged one: one window, one clock
                for h in fresh:
                    self._feed_host(h, stamp)
            self._last = merged
            if self.measured:
                self.group.rd.append("cluster.ndjson", {
                    "t": self._t(), "hosts_active": len(self.active),
                    "hosts": [h for h in self.order if h in self.active]})
            yield merged

    def _feed_host(self, host: str, stamp: float) -> None:
        """The host's dump to its own series, stamped with the merged dump's time, on the
        merged axis: one window on one clock."""
        assert self._jobs_start_ms is not None
        self.group.series.feed(host, {**self.frozen[host], "timestamp_ms": stamp},
                               self._jobs_start_ms)

    def stop(self) -> None:
        self.stopping = True
        self.group.failover.stop()
        threads = [threading.Thread(target=run.stop, daemon=True)
                   for h, run in self.runs.items() if h not in self.ended and h in self.active]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)

    def wait(self) -> int:
        """0 when every host still active ended well (lost hosts are graded, not fatal)."""
        for h, run in self.runs.items():
            if h not in self.ended and h in self.active:  # a lost one is being ended
                self.ended[h] = run.wait()
        bad = [rc for h, rc in self.ended.items() if h in self.active and rc != 0]
        return bad[0] if bad else (0 if self.active else 1)

    def stderr_tail(self, lines: int = 5) -> str:
        parts = [f"{h}: {self.runs[h].stderr_tail(lines)}" for h, rc in self.ended.items()
                 if rc != 0 and self.runs[h].stderr_tail(lines)]
        if not self.active:
            parts.insert(0, "every host was lost: " + "; ".join(
                f"{h} ({v['reason']})" for h, v in self.group.lost.items()))
        return "\n".join(parts)


def ended_why(run: FioRun, rc: int) -> str:
    """Why a host's fio ended badly: its SSH session ended (ssh's 255, no status from the
    host), or fio's own status, with the last lines it (or ssh) wrote."""
    tail = run.stderr_tail(2)
    if getattr(run, "session_ended", False):
        return "the SSH session ended (ssh exit status 255: connection lost or host " \
               "down) before the host reported fio's end" + (f": {tail}" if tail else "")
    return f"fio ended with status {rc}" + (f": {tail}" if tail else "")


def _call(close: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        close()


def _facts(r: CommandResult) -> dict[str, Any]:
    lines = r.stdout.splitlines() if r.returncode == 0 else []
    keys = ("kernel", "cpus", "mem_bytes", "fs", "free_bytes", "existing_bytes")
    out: dict[str, Any] = {}
    for key, value in zip(keys, lines, strict=False):
        if value.strip() not in ("", "-"):
            out[key] = int(value) if value.isdigit() else value
    return out


def _space(name: str, target: str, facts: dict[str, Any], need: int) -> None:
    """Refuse, before any IO, a host whose target cannot hold its instances' files (the
    prefill would hit ENOSPC on every host at once and read as hosts lost)."""
    existing = int(facts.pop("existing_bytes", 0) or 0)
    free = facts.get("free_bytes")
    more = need - existing
    if isinstance(free, int) and more > free - SPACE_MARGIN:
        raise UserError(f"{name}: not enough free space at {target}: its files need "
                        f"{format_size(need)}" + (f" ({format_size(more)} more than the "
                                                  f"{format_size(existing)} already there)"
                                                  if existing else "") +
                        f", {format_size(free)} is free (assay keeps "
                        f"{format_size(SPACE_MARGIN)}). Lower `dataset` or give the host a "
                        f"larger target")


def _last(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"
