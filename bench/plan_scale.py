#!/usr/bin/env python3
"""Benchmark: how long does `assay plan` take at production sizes? Goals: 1,024 hosts with
fio's check <= 30 s, 20,000 fio jobs <= 5 s (without the check), each cost linear.

Hosts: `assay plan oltp-cluster --hosts INV` (X-Ray's OLTP on every host, one instance each)
on inventories of N hosts that exist nowhere (none is contacted), fio's check included
(`fio --parse-only` of every host's job files). Jobs: `assay plan` of a checkpoint every
interval over a week (8 streams, a save and a restore job each per checkpoint), sized to M
jobs, `--no-check`. Both run the command in this process, as a user runs it (the plan, the
table it prints, every job file printed), after one small plan that pays the imports.

Wall time is what the goals judge; CPU time (this process's and the fios') is what a loaded
machine moves less, and what the figures per host and per job use: each size's, and what
each host (job) added since the size before (the fixed cost, fio's start and the scenario's,
weighs on the first at a small size, not on the second). The ratio line is what a host (a
job) adds between the two largest sizes over what it adds between the two smallest: flat is
1.0; a cost quadratic in hosts (jobs) grows it with the sizes' ratio.

    .venv/bin/python bench/plan_scale.py [--hosts 64 256 1024] [--jobs 1000 5000 20000]
    .venv/bin/python bench/plan_scale.py --quick

`--quick`: 16, 32 and 64 hosts, 500, 1,000 and 2,000 jobs, the same code path, to show the
benchmark still runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from assay.cli.plan import command

GOAL_HOSTS, GOAL_HOSTS_S = 1024, 30.0
GOAL_JOBS, GOAL_JOBS_S = 20_000, 5.0
STREAMS = 8
WEEK_S = 7 * 24 * 3600


def checkpoints(jobs: int) -> str:
    """A week of checkpoints, as many as make `jobs` fio jobs (a save and a restore job per
    stream and checkpoint)."""
    saves = max(1, jobs // (2 * STREAMS))
    every = WEEK_S / saves
    return f"""\
name: plan-scale-jobs
workloads:
  ckpt: {{kind: checkpoint, size: 8GiB, fraction: 0.1, streams: {STREAMS}, every: {every:.3f}s}}
timeline: {{duration: 7d}}
thresholds: {{ckpt.save_s: "< 20s"}}
"""


def cpu() -> float:
    """CPU seconds of this process and of its children ended (the fios)."""
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def plan(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one `assay plan ARGS`, which must succeed."""
    t0, c0 = time.monotonic(), cpu()
    r = CliRunner().invoke(command, args)
    spent, used = time.monotonic() - t0, cpu() - c0
    if r.exit_code != 0:
        raise SystemExit(f"assay plan {' '.join(args)} ended {r.exit_code}:\n"
                         f"{r.output[-2000:]}")
    return spent, used


def hosts_run(tmp: Path, n: int) -> tuple[float, float]:
    inv = tmp / f"hosts-{n}.ini"
    inv.write_text("".join(f"n{i} ansible_host=192.0.2.{i % 250 + 1} assay_path=/mnt/n{i}\n"
                           for i in range(n)))
    return plan(["oltp-cluster", "--hosts", str(inv)])


def jobs_run(tmp: Path, m: int) -> tuple[tuple[float, float], int]:
    scenario = tmp / f"jobs-{m}.yaml"
    scenario.write_text(checkpoints(m))
    made = (m // (2 * STREAMS)) * 2 * STREAMS
    return plan([str(scenario), "--no-check"]), made


def added(rows: list[tuple[int, float]], i: int) -> float:
    """Seconds each unit added from size i-1 to size i."""
    (n0, t0), (n1, t1) = rows[i - 1], rows[i]
    return (t1 - t0) / (n1 - n0)


def ratio(rows: list[tuple[int, float]]) -> float:
    """What a unit adds between the two largest sizes over what it adds between the two
    smallest. A loaded machine can make the small sizes' increment nought or less: it is
    taken as at least a quarter of the whole range's (a cost quadratic in the sizes keeps
    its own: larger than that)."""
    (n0, t0), (n1, t1) = rows[0], rows[-1]
    first = max(added(rows, 1), (t1 - t0) / (n1 - n0) / 4, 1e-9)
    return max(added(rows, len(rows) - 1), 0.0) / first


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--jobs", type=int, nargs="+", default=[1000, 5000, 20_000])
    ap.add_argument("--quick", action="store_true",
                    help="16, 32, 64 hosts, 500, 1,000, 2,000 jobs: check that the benchmark runs "
                         "(not judged)")
    a = ap.parse_args()
    if a.quick:
        a.hosts, a.jobs = [16, 32, 64], [500, 1000, 2000]
    if len(set(a.hosts)) < 3 or len(set(a.jobs)) < 3:
        ap.error("give three sizes or more of each: the ratio compares increments")
    with tempfile.TemporaryDirectory(prefix="assay-plan-scale-") as d:
        tmp = Path(d)
        hosts_run(tmp, 2)  # the imports and fio's first start, paid once
        print("hosts  with fio's check: wall s  CPU s  CPU ms/host  added CPU ms/host",
              flush=True)
        by_hosts: list[tuple[int, float]] = []  # hosts, CPU s
        walls: dict[str, list[tuple[int, float]]] = {"hosts": [], "jobs": []}
        for n in sorted(set(a.hosts)):
            wall, used = hosts_run(tmp, n)
            by_hosts.append((n, used))
            walls["hosts"].append((n, wall))
            more = f"{1000 * added(by_hosts, len(by_hosts) - 1):17.2f}" if by_hosts[1:] else ""
            print(f"{n:5d}  {wall:22.2f}  {used:5.2f}  {1000 * used / n:11.2f}  {more}",
                  flush=True)
        print("jobs   without the check: wall s  CPU s  CPU us/job  added CPU us/job",
              flush=True)
        by_jobs: list[tuple[int, float]] = []
        for m in sorted(set(a.jobs)):
            (wall, used), made = jobs_run(tmp, m)
            by_jobs.append((made, used))
            walls["jobs"].append((made, wall))
            more = f"{1e6 * added(by_jobs, len(by_jobs) - 1):16.1f}" if by_jobs[1:] else ""
            print(f"{made:5d}  {wall:24.2f}  {used:5.2f}  {1e6 * used / made:10.1f}  {more}",
                  flush=True)
    judged = not a.quick
    for what, goal_n, goal_s in (("hosts", GOAL_HOSTS, GOAL_HOSTS_S),
                                 ("jobs", GOAL_JOBS, GOAL_JOBS_S)):
        at = [s for n, s in walls[what] if n >= goal_n]
        if judged and at:
            print(f"goal: {goal_n} {what} <= {goal_s:g} s (wall): {at[0]:.2f} s, "
                  f"{'met' if at[0] <= goal_s else 'NOT met'}")
    note = "; quick: not judged" if a.quick else ""
    span = "{0}-{1} over {2}-{3} {4}"
    h, j = [n for n, _ in by_hosts], [n for n, _ in by_jobs]
    print(f"ratio what a host adds, {span.format(h[-2], h[-1], h[0], h[1], 'hosts')}: "
          f"{ratio(by_hosts):.2f}; what a job adds, "
          f"{span.format(j[-2], j[-1], j[0], j[1], 'jobs')}: {ratio(by_jobs):.2f} "
          f"(flat = 1.0{note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
