"""One phase's fio on every host, their dumps merged into one stream (the FioRun protocol).

The merged dumps carry every host's jobs, in host order, so the engine's Sampler adds the
hosts' counts and histogram bins exactly as it adds numjobs clones: cluster percentiles come
from the merged histograms. Each host also has its own series (cluster/hostseries.py).

A lost host (cluster/liveness.py says when, and why) is a timeline event: its last dump stays
in every merged dump after it (its counters stop: its data up to the loss is kept and it adds
nothing after), and the other hosts go on. `cluster.ndjson` labels every merged second with
the hosts whose IO is in it: those still active, and a lost one for its seconds before the
loss (they may arrive after its end is known: the other hosts' dumps come when they come).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from assay.cluster.failover import Failover
from assay.cluster.hostseries import HostSeries
from assay.cluster.liveness import LAG_ABORT_S, PROBE_S, Lag, Liveness, ended_why
from assay.cluster.rider import ran_ms
from assay.exitcodes import RunAborted
from assay.plan import RUN_JOB, Plan
from assay.results.rundir import RunDir
from assay.runners.base import SIGINT_STATUS, Document, FioRun, FioRunBase, HostLoss, Runner

OVERRUN_S = 3.0  # still running this long after another host ended normally: stopped
_END = object()


class Group(Protocol):
    """What a phase uses of its cluster (cluster/group.py's RunnerGroup)."""

    plan: Plan
    rd: RunDir
    runners: dict[str, Runner]
    facts: dict[str, dict[str, Any]]
    skew: dict[str, dict[str, float | None]]
    lost: dict[str, dict[str, Any]]
    late: dict[str, int]
    series: HostSeries
    failover: Failover
    lag: Lag

    def report(self, loss: HostLoss) -> None: ...


class ClusterRun(FioRunBase):
    """Every host's fio for one phase (the FioRun protocol), their dumps merged."""

    # dumps read and not yet merged: unbounded, as a host that waited to hand its dump over
    # would look lost; a synthetic host in compressed time (bench/long_run.py) is bounded
    QUEUED = 0

    def __init__(self, group: Group, runs: dict[str, FioRun], t0: float, phase: str):
        self.group = group
        self.runs = runs
        self.t0 = t0
        self.phase = phase
        self.measured = phase == Path(RUN_JOB).stem
        self.order = list(runs)
        # a dict for its order and its look-up: `h in self.active` is asked per host per
        # dump, and a list's scan of 1,024 hosts made each second's merge quadratic
        self.active: dict[str, None] = dict.fromkeys(runs)
        self.ended: dict[str, int] = {}  # host -> fio's exit status
        self.pending: dict[str, list[Document]] = {h: [] for h in runs}
        self.frozen: dict[str, Document] = {}  # each host's newest merged dump
        self.alive = Liveness(runs, group.runners,
                              lambda h: "clock_offset_ms" in group.facts.get(h, {}),
                              max(0.0, t0 - time.time()) + 1.5,
                              lambda h: h not in self.active or h in self.ended, group.lag)
        self.lag = group.lag
        # each host's items put (by its pump) and taken (by the engine's thread): one writer
        # each, so no lock; what is put and not taken waits in the queue
        self._put: dict[str, int] = dict.fromkeys(runs, 0)
        self._taken: dict[str, int] = dict.fromkeys(runs, 0)
        self.stopping = False
        self.env: dict[str, str] = {}  # the phase's fio variables (a restart uses them)
        self._last: Document | None = None
        self._jobs_start_ms: float | None = None
        self._first_end: float | None = None
        self._started: dict[str, float] = {}
        self._q: queue.Queue[tuple[str, Any, float]] = queue.Queue(self.QUEUED)
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
                    sent = self._sent(host, doc)
                    self.alive.dump(host, sent)
                    self._put[host] += 1
                    self._q.put((host, doc, sent))
            rc = run.wait()
        finally:
            self._put[host] += 1
            self._q.put((host, (_END, rc), time.time()))

    def _sent(self, host: str, doc: Document) -> float:
        """When the host sent the dump, on this machine's clock: its time after its fio's
        start (both on the host's clock), after T0."""
        ts = float(doc.get("timestamp_ms") or 0) / 1000
        return self.t0 + ts - self._host_start(host) if ts else time.time()

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
                host, item, sent = self._q.get(timeout=poll)
            except queue.Empty:
                self.lag.seen(0.0)  # everything read: caught up
                self._watch()
                yield None
                continue
            self._taken[host] += 1
            self.lag.seen(time.time() - sent)
            if self.lag.now_s > LAG_ABORT_S and not self.stopping:  # stopping: drained
                raise RunAborted(
                    f"the controller fell {self.lag.now_s:.0f} s behind the hosts' dumps "
                    f"(more than {LAG_ABORT_S:g} s; {len(self.order)} hosts): it cannot "
                    f"keep up with this many hosts, no host was lost")
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
        elif self._first_end is None and rc == 0 and host in self.active:
            # a host lost and then stopped ends well too, but not with the others: only an
            # active host's end starts the others' overrun
            self._first_end = self.alive.position()  # on the hosts' clock

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
        # judged on the hosts' clock, as far as the controller has read them: a host whose
        # dumps (or end) wait in the queue unread is not overrunning, the controller is late
        now = self.alive.position()
        if self._first_end is not None and now - self._first_end > OVERRUN_S + self._spread():
            for h in [h for h in self.active
                      if h not in self.ended and self._put[h] == self._taken[h]]:
                self._lose(h, "fio still running after the other hosts ended")

    @property
    def lag_note(self) -> str:
        """While the controller lags behind the hosts: how far (the console's line)."""
        return self.lag.note()

    def _spread(self) -> float:
        """How much later than the first a host may end: its instances' stagger."""
        return max((float(w.stagger) * (w.count_per_host * len(self.order) - 1)
                    for w in self.group.plan.resolved.workloads.values()), default=0.0)

    def _lose(self, host: str, reason: str) -> None:
        del self.active[host]
        t = self._last_t(host)
        self.group.lost[host] = {"t": t, "phase": self.phase, "reason": reason}
        # reported to the engine at once, on its thread: the timeline and the schedule
        self.group.report(HostLoss(host, t, self.phase, reason, len(self.active)))
        if self.measured:
            self.group.failover.lost(self, host, t)
        run = self.runs[host]
        # not asking a host that is gone
        threading.Thread(target=call_quietly, args=(run.abandon,), daemon=True).start()
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
            # asked at every dump taken: each test stops at its first answer, not a list of
            # every host built each time (quadratic in hosts a second)
            ready = any(self.pending[h] for h in self.order)
            if not ready or (not final and any(not self.pending[h] for h in self.active
                                               if h not in self.ended)):
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
            self.group.series.parsed.turn()  # a new merged dump: its jobs are read once
            if self.measured:  # each host's second is the merged one: one window, one clock
                for h in fresh:
                    self._feed_host(h, stamp)
            self._last = merged
            if self.measured:  # a lost host's second that arrives late still had it
                hosts = [h for h in self.order if h in self.active or h in fresh]
                self.group.rd.append("cluster.ndjson", {
                    "t": self._t(), "hosts_active": len(hosts), "hosts": hosts})
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
        """0 when every host still active ended well (lost hosts are graded, not fatal); a
        host's fio asked to end (`stop`) ended well with its SIGINT status."""
        for h, run in self.runs.items():
            if h not in self.ended and h in self.active:  # a lost one is being ended
                self.ended[h] = run.wait()
        bad = [rc for h, rc in self.ended.items() if h in self.active and rc != 0
               and not (self.stopping and rc == SIGINT_STATUS)]
        return bad[0] if bad else (0 if self.active else 1)

    def stderr_tail(self, lines: int = 5) -> str:
        parts = [f"{h}: {self.runs[h].stderr_tail(lines)}" for h, rc in self.ended.items()
                 if rc != 0 and self.runs[h].stderr_tail(lines)]
        if not self.active:
            parts.insert(0, "every host was lost: " + "; ".join(
                f"{h} ({v['reason']})" for h, v in self.group.lost.items()))
        return "\n".join(parts)


def call_quietly(close: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        close()
