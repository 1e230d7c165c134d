"""Each host's own per-second series, beside the cluster's merged one, and its grading.

A host's dumps go through a Sampler of its own (its components' targets scaled to its
instances): the `series` and `samples` streams of the host's own directory, `hosts/<host>/`,
as the run's own (one row per component and second: the charts' figures, and counts and
histogram bins for exact re-aggregation), sealed into compressed blocks as the run goes
(results/blocklog.py). At the end each host is graded on its own samples, read back from
that stream (nothing of a host's seconds is held in memory: a day-long run of many hosts
grades as a short one does), against the `each_host.` thresholds, and a host whose jobs did
no IO at all fails the run by name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from assay import verdict
from assay.metrics.counters import Parsed
from assay.metrics.sampler import Sample, Sampler, stored_line
from assay.plan import Plan
from assay.plan.tally import AFTER_LOSS, host_view
from assay.results.blocklog import BlockLog, StoredRows
from assay.results.rundir import RunDir
from assay.thresholds.evaluate import Result
from assay.thresholds.grammar import Threshold

SERIES, SAMPLES = "series", "samples"  # in each host's directory, as the run's own
HELD = 4096  # a host's samples graded from one reading up to this many (a few MB)


class HostSeries:
    def __init__(self, plan: Plan, rd: RunDir):
        assert plan.cluster is not None
        self.plan = plan
        self.rd = rd
        self.parsed = Parsed()  # each job read once for its host's series and the merged one
        self.samplers = {h: Sampler([c for c in hp.specs if c.jobs], warmup_s=plan.warmup,
                                    parsed=self.parsed)
                         for h, hp in plan.cluster.hosts.items()}  # fio's: databases add()
        self.counts = dict.fromkeys(plan.cluster.hosts, 0)  # samples stored per host
        self.ios = dict.fromkeys(plan.cluster.hosts, 0)
        self.failures: dict[str, list[Result]] = {}  # a participant's own (a lost database)
        self.logs: dict[str, tuple[BlockLog, BlockLog]] = {}  # each host's series and samples

    def feed(self, host: str, doc: dict[str, Any], jobs_start_ms: float) -> None:
        """A host's dump stamped with the merged dump's time, on an axis that starts where the
        merged one does: every host's seconds are the cluster's seconds."""
        sampler = self.samplers[host]
        if sampler.jobs_start_ms is None:
            sampler.pin(jobs_start_ms)
        self.add(host, sampler.feed(doc))

    def add(self, host: str, samples: list[Sample]) -> None:
        """A host's samples, from its fio or another participant (cluster/postgresrows.py)."""
        if not samples:
            return
        logs = self.logs.get(host)
        if logs is None:
            d = self.rd.host_dir(host)
            logs = self.logs[host] = (BlockLog(d, SERIES), BlockLog(d, SAMPLES))
        logs[0].append([s.row() for s in samples])
        logs[1].append([stored_line(s.record()) for s in samples])
        self.counts[host] += len(samples)
        self.ios[host] += sum(s.ios for s in samples)

    def samples(self, host: str) -> Collection[dict[str, Any]]:
        """A host's samples, read back from its stream: once, when they are few (the verdict
        walks them several times), or at each pass (a long run's)."""
        rows = StoredRows(self.rd.host_dir(host), SAMPLES, self.counts[host])
        return list(rows) if self.counts[host] <= HELD else rows

    def close(self) -> None:
        """Every host's samples are in: the streams end (their rows stay readable)."""
        logs, self.logs = self.logs, {}
        for pair in logs.values():
            for log in pair:
                log.close()

    def host_plan(self, host: str) -> Plan:
        """The plan as one host sees it: its components, its targets, the each_host
        thresholds."""
        return host_view(self.plan, host)

    def grade(self, steps: Sequence[dict[str, Any]], lost: dict[str, dict[str, Any]],
              due: Callable[[str, Plan, Collection[dict[str, Any]]], Any] | None = None,
              until: float | None = None) -> dict[str, Any]:
        """Per host: its statistics and results (run.json `cluster.hosts_graded`); `due`
        gives a host's latency from the due time (participants/lags.py); `until`: where the
        load ended when the timeline ended it early (Plan.ending)."""
        out: dict[str, Any] = {}
        for host in self.counts:
            samples = self.samples(host)
            plan = self.host_plan(host).ending(until)
            skipped: list[str] = []
            if host in lost:  # a lost host is not graded on what came after its loss
                skipped = [t.text for t in plan.thresholds if t.phase_kind in AFTER_LOSS]
                plan = replace(plan, thresholds=[t for t in plan.thresholds
                                                 if t.text not in skipped])
            v = verdict.grade(plan, samples, steps, [],
                              due=due(host, plan, samples) if due else None)
            results = list(v.results)
            ios = self.ios[host]
            if ios == 0:
                why = f"lost at {lost[host]['t']}s" if host in lost else "its fio ran"
                results.append(no_io(host, why))
            results += self.failures.get(host, [])
            out[host] = {"stats": {k: s.to_json() for k, s in v.stats.items()},
                         "thresholds": [r.to_json() for r in results],
                         "passed": all(r.passed for r in results), "ios": ios,
                         "not_graded": [f"{t} (lost at {lost[host]['t']}s)" for t in skipped]}
        return out


def no_io(host: str, why: str) -> Result:
    t = Threshold(selector=(host,), metric="ios", op=">", value=0.0,
                  text=f"{host}: its jobs did IO", source="cluster")
    return Result(t, host, 0.0, 0.0, False, note=f"{host} did no IO ({why}): nothing was "
                                                  f"measured there")
