#!/usr/bin/env python3
"""Benchmark: what does a day-long run cost? (goals for 24 h x 16 series: peak RSS <= 256 MB,
stored samples <= 50 MB, report <= 20 s)

Synthetic (default): drives the engine through a synthetic fio (runners/synthetic.py) that
reports 86,400 one-second json+ dumps for four Exchange workloads (16 series, about 4,200
IO/s) in compressed time: the sampler, live verdict, run directory, final verdict and report
all run as in a real run. Side by side it prints what the same seconds would take as plain
NDJSON, the store before this change.

Cost (`--cost [HOURS ...]`, default 2 6 24): the engine's CPU seconds per simulated hour for
runs of each length, which must not grow with the length. CPU time of this process, not wall
time: the figure holds on a loaded machine. The synthetic fio's own CPU is left out.

Cluster (`--cost [HOURS ...] --hosts N`): the same for a cluster run of N synthetic hosts,
an OLTP workload on each (each host's series, the merged one, each host's grading), each
length in a process of its own: its peak RSS, which must not grow with the length either.

Real (`--real MINUTES`): a real fio run at 6,400 IO/s (OLTP, even pacing) on a temporary
directory, printing assay's RSS every minute: it must stay flat after the second minute.

    .venv/bin/python bench/long_run.py [--hours 24] [--keep]
    .venv/bin/python bench/long_run.py --cost 2 6 24
    .venv/bin/python bench/long_run.py --cost 1 2 4 --hosts 4
    .venv/bin/python bench/long_run.py --real 30
    .venv/bin/python bench/long_run.py --quick

`--quick`: a 6-minute synthetic run and the cost of a 3-minute one (1 minute of warm-up), the
same code paths, to show the benchmark still runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.cluster.merge import ClusterRun
from assay.engine import Engine, RunOptions
from assay.hosts import inventory
from assay.metrics.phases import analyse
from assay.plan.build import plan_text
from assay.report.html import write_report
from assay.results.blocklog import StoredRows, directory_bytes, read_rows, stored_bytes
from assay.runners.base import Document, Powers
from assay.runners.synthetic import SyntheticRun, SyntheticRunner
from assay.verdict import closed_loop

SYNTHETIC = """\
name: day-long
description: four Exchange servers for a day (synthetic fio)
workloads:
{workloads}
timeline: {{warmup: {warmup}m, duration: {minutes}m}}
thresholds:
  srv1: jetstress
"""
# a run that measured every second: `passed`, or `completed` when nothing is graded; a
# failed, incomplete, aborted or interrupted run ends the benchmark
MEASURED = ("passed", "completed")
EXCHANGE = "  srv{i}: {{kind: exchange, mailboxes: 7600, databases: 1, dataset: 64MiB}}"

REAL = """\
name: rss-flat
description: OLTP at 6,400 IO/s, even pacing, to watch assay's memory
target: {{path: {path}}}
workloads:
  db: {{kind: oltp, data_iops: 6000, log_iops: 400, read_pct: 70, data_files: 2,
       log_files: 1, dataset: 512MiB, load: {{pacing: even}}}}
timeline: {{warmup: 0s, duration: {minutes}m}}
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic(hours: float, keep: bool, warmup: int = 10) -> None:
    seconds = int(hours * 3600)
    text = SYNTHETIC.format(workloads="\n".join(EXCHANGE.format(i=i) for i in range(1, 5)),
                            warmup=warmup, minutes=seconds // 60 - warmup)
    plan = plan_text(text, "day-long.yaml")
    root = Path(tempfile.mkdtemp(prefix="assay-bench-long-"))
    try:
        before = rss_mb()
        runner = functools.partial(SyntheticRunner, seconds)
        t0 = time.perf_counter()
        out = Engine(plan, RunOptions(root / "results", runner=runner),
                     Console(file=io.StringIO())).execute()
        wall = time.perf_counter() - t0
        if out.status not in MEASURED:
            raise SystemExit(f"synthetic run {out.status}: {out.reason}")
        peak = peak_mb()
        d = out.run_dir
        stored = (stored_bytes(d, "samples") + stored_bytes(d, "series")) / 1e6
        rows = sum(1 for _ in read_rows(d, "samples"))
        t1 = time.perf_counter()
        write_report(d)
        report_s = time.perf_counter() - t1
        # phases around a snapshot every hour, as an X-Ray snapshot-impact run has them
        events = [{"kind": "step", "name": "snap", "action": "snapshot", "t_start": h * 3600.0,
                   "t_end": h * 3600.0 + 3} for h in range(1, seconds // 3600 + 1)]
        t2 = time.perf_counter()
        phases = analyse(closed_loop(plan), StoredRows(d, "samples"), events, plan.warmup,
                         plan.total_seconds)
        phases_s = time.perf_counter() - t2
        peak = max(peak, peak_mb())
        # the same seconds as plain NDJSON, as every run stored them before the block store
        plain = sum(len(line) + 1 for name in ("samples", "series") for line in _lines(d, name))
        print(f"synthetic run: {seconds:,} s x {len(plan.components)} series ({rows:,} samples) "
              f"in {wall:.0f} s wall ({seconds / wall:,.0f}x real time); status {out.status}")
        print(f"peak RSS {peak:.0f} MB (at start {before:.0f} MB; goal <= 256 MB)")
        print(f"stored samples+series {stored:.1f} MB (goal <= 50 MB); as NDJSON "
              f"{plain / 1e6:.0f} MB")
        print(f"run directory {directory_bytes(d) / 1e6:.1f} MB")
        print(f"report built in {report_s:.1f} s (goal <= 20 s)")
        print(f"phases around {len(events)} hourly snapshots ({len(phases.windows)} windows, "
              f"recoveries) in {phases_s:.1f} s; peak RSS after report and phases {peak:.0f} MB")
        print(f"ratio NDJSON / stored samples+series: {plain / 1e6 / stored:.1f}x smaller; "
              f"to the goals: RSS {peak / 256:.2f}, store {stored / 50:.2f}, "
              f"report {report_s / 20:.2f} (for {hours:g} h)")
        if keep:
            print(f"kept: {d}")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


class TimedSynthetic(SyntheticRunner):
    """The synthetic fio, its CPU time counted apart: it is the load, not the engine."""

    fio_cpu = 0.0

    def start(self, *args: Any, **kwargs: Any) -> SyntheticRun:
        run = super().start(*args, **kwargs)
        second = run._second

        def timed(t: int) -> Document:
            c = time.process_time()
            try:
                return second(t)
            finally:
                TimedSynthetic.fio_cpu += time.process_time() - c

        run._second = timed
        return run


def engine_cpu(hours: float, warmup: int = 10) -> tuple[float, float]:
    """(engine CPU s, synthetic fio CPU s) of a whole run of `hours` (`warmup` minutes)."""
    seconds = int(hours * 3600)
    text = SYNTHETIC.format(workloads="\n".join(EXCHANGE.format(i=i) for i in range(1, 5)),
                            warmup=warmup, minutes=seconds // 60 - warmup)
    return timed_run(plan_text(text, "day-long.yaml"), functools.partial(TimedSynthetic, seconds))


def timed_run(plan: Any, runner: Any) -> tuple[float, float]:
    """(engine CPU s, synthetic fio CPU s) of one whole run: sampler, live verdict, store,
    final verdict, phases and report, as Engine.execute does them."""
    root = Path(tempfile.mkdtemp(prefix="assay-bench-cost-"))
    try:
        TimedSynthetic.fio_cpu = 0.0
        c0 = time.process_time()
        out = Engine(plan, RunOptions(root / "results", runner=runner),
                     Console(file=io.StringIO())).execute()
        total = time.process_time() - c0
        if out.status not in MEASURED:
            raise SystemExit(f"synthetic run {out.status}: {out.reason}")
        return total - TimedSynthetic.fio_cpu, TimedSynthetic.fio_cpu
    finally:
        shutil.rmtree(root, ignore_errors=True)


CLUSTER = """\
name: day-long-cluster
description: OLTP on every host (synthetic fio)
workloads:
  db: {{kind: oltp, data_iops: 2000, dataset: 64MiB}}
timeline: {{warmup: 10m, duration: {minutes}m}}
thresholds:
  - rate
  - each_host.db.data.read.iops >= 95% target
"""


class SyntheticHost(TimedSynthetic):
    """A cluster host whose fio is synthetic: its clock is this machine's."""

    powers = Powers.CLOCK | Powers.SESSION

    def measure_clock(self) -> tuple[float, float]:
        return 0.0, 0.0001

    def ping(self, timeout: float) -> bool:
        return True


def cluster_cpu(hours: float, hosts: int) -> dict[str, float]:
    """A cluster run of `hosts` synthetic hosts for `hours`, in this process: engine CPU s,
    synthetic fio CPU s, peak RSS MB."""
    seconds = int(hours * 3600)
    with tempfile.TemporaryDirectory(prefix="assay-bench-hosts-") as tmp:
        lines = []
        for i in range(hosts):
            (Path(tmp) / f"n{i}").mkdir()
            lines.append(f"n{i} ansible_host=192.0.2.{i + 1} assay_path={Path(tmp) / f'n{i}'}")
        inv = inventory.parse("\n".join(lines) + "\n", "inventory.ini")
        plan = plan_text(CLUSTER.format(minutes=seconds // 60 - 10), "cluster.yaml", hosts=inv)
        # the hosts make their dumps in no time: a few seconds ahead of the merge, not hours
        ClusterRun.QUEUED = 4 * hosts
        before = rss_mb()
        engine, fio = timed_run(plan, functools.partial(SyntheticHost, seconds))
        return {"engine": engine, "fio": fio, "rss_mb": peak_mb() - before}


def cluster_cost(lengths: list[float], hosts: int) -> None:
    print(f"cluster of {hosts} synthetic hosts: engine CPU per simulated hour and peak RSS")
    first: float | None = None
    for hours in lengths:
        got = json.loads(subprocess.run(
            [sys.executable, __file__, "--one", str(hours), str(hosts)], check=True,
            capture_output=True, text=True).stdout)
        per_hour = got["engine"] / hours
        first = first or per_hour
        print(f"  {hours:g} h run: {per_hour:6.2f} CPU s per simulated hour "
              f"(x{per_hour / first:.2f} of the {lengths[0]:g} h run; engine "
              f"{got['engine']:.0f} s, synthetic fio {got['fio']:.0f} s); peak RSS "
              f"{got['rss_mb']:.0f} MB over the process's start", flush=True)


def cost(lengths: list[float], warmup: int = 10) -> None:
    print("engine CPU per simulated hour (CPU time of this process, synthetic fio left out)")
    first: float | None = None
    for hours in lengths:
        engine, fio = engine_cpu(hours, warmup)
        per_hour = engine / hours
        first = first or per_hour
        print(f"  {hours:g} h run: {per_hour:6.2f} CPU s per simulated hour "
              f"(x{per_hour / first:.2f} of the {lengths[0]:g} h run; engine {engine:.0f} s, "
              f"synthetic fio {fio:.0f} s)", flush=True)


def _lines(d: Path, name: str):  # noqa: ANN202 - a generator of JSON lines
    for row in read_rows(d, name):
        yield json.dumps(row, separators=(",", ":"))


def real(minutes: float) -> None:
    root = Path(tempfile.mkdtemp(prefix="assay-bench-rss-", dir="/var/tmp"))
    stop = threading.Event()
    samples: list[tuple[float, float]] = []

    def watch() -> None:
        t0 = time.monotonic()
        while not stop.wait(60):
            samples.append(((time.monotonic() - t0) / 60, rss_mb()))
            print(f"  minute {samples[-1][0]:5.1f}: RSS {samples[-1][1]:6.1f} MB", flush=True)

    try:
        plan = plan_text(REAL.format(path=root / "data", minutes=minutes), "rss-flat.yaml")
        print(f"real run: {minutes:g} min at 6,400 IO/s; RSS at start {rss_mb():.1f} MB")
        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        out = Engine(plan, RunOptions(root / "results"), Console(file=io.StringIO())).execute()
        stop.set()
        print(f"status {out.status}; achieved "
              f"{sum(s.iops for s in out.stats.values()):,.0f} IO/s; run directory "
              f"{directory_bytes(out.run_dir) / 1e6:.1f} MB")
        after2 = [mb for m, mb in samples if m >= 2]
        if len(after2) >= 2:
            print(f"RSS after minute 2: {min(after2):.1f} .. {max(after2):.1f} MB "
                  f"(growth {max(after2) - after2[0]:+.1f} MB over {len(after2) - 1} min)")
    finally:
        stop.set()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--keep", action="store_true", help="keep the synthetic run directory")
    ap.add_argument("--real", type=float, metavar="MINUTES", help="a real fio run instead")
    ap.add_argument("--cost", type=float, nargs="*", metavar="HOURS",
                    help="engine CPU s per simulated hour for runs of these lengths "
                         "(default 2 6 24)")
    ap.add_argument("--hosts", type=int, help="--cost of a cluster run of this many hosts")
    ap.add_argument("--one", nargs=2, metavar=("HOURS", "HOSTS"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true",
                    help="a 6-minute synthetic run and the cost of another: check that the "
                         "benchmark runs (not judged)")
    args = ap.parse_args()
    if args.quick:
        synthetic(0.1, args.keep, warmup=1)
        cost([0.05], warmup=1)
    elif args.one:
        print(json.dumps(cluster_cpu(float(args.one[0]), int(args.one[1]))))
    elif args.cost is not None and args.hosts:
        cluster_cost(args.cost or [1, 2, 4], args.hosts)
    elif args.cost is not None:
        cost(args.cost or [2, 6, 24])
    elif args.real:
        real(args.real)
    else:
        synthetic(args.hours, args.keep)


if __name__ == "__main__":
    main()
