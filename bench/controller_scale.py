#!/usr/bin/env python3
"""Benchmark: what does the controller cost per host? 16, 64 and 256 hosts replayed.

Each host is a ReplayRunner of recorded real fio output with its agent's rows
(tests/fixtures/replay/due-steady, and due-stall for every 8th host: fio's json+ dumps of an
8 s fixed-rate OLTP run, and the `issuelog` rows the agent sent beside it). The whole
cluster path runs as in a real run: the hosts checked (the agent's `version` rows), every
host's dumps merged each second, each host's own series, the agents' lag rows merged into
each host's and the cluster's latency from the due time, the verdicts, run.json and the
report. Goals: <= 4 ms of CPU per host-second (256 hosts on one core at 1 Hz) and <= 1 MiB
of RSS per host.

CPU is this process's (user + system, getrusage), not wall time, so the figure holds on a
loaded machine: over the whole run (checks, prefill phase, load, grading, report); over
the load alone (the engine's loop: merging the dumps, the series, the agents' rows), the
steady state that a longer run repeats each second and that must keep up with the hosts;
over the finish (every host graded, latency from the due time joined, run.json, the
report), paid at the run's end, most of it in proportion to the run's seconds; and what
is left, in ms per host whatever the length (the checks, the hosts' plans, the agents
started, the prefill phase): over these 8 s it weighs more than half what the load does.
The `cat` processes replaying the agents' rows are left out, as the agents' own CPU is
spent on the hosts. RSS: each size runs in a fresh process; the peak (ru_maxrss) minus the
process's RSS before the run, per host; and, between sizes, the RSS an added host costs
(what any run holds, whatever its hosts, weighs on the figure per host of a small cluster).
`--due off` strips the issue logs from the job files: the same run without latency from the
due time, side by side.

    .venv/bin/python bench/controller_scale.py [--hosts 16 64 256] [--due on|off|both]
                                               [--speed 1] [--quick]

`--quick`: 2 and 4 hosts, replayed as fast as the engine reads them (`--speed 0`), the same
code path, to show the benchmark still runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from assay.cluster.hostcheck import REALPATH
from assay.engine import Engine
from assay.hosts import inventory
from assay.plan.build import plan_text
from assay.run_options import RunOptions
from assay.runners import ReplayRunner
from assay.runners.base import CommandResult, Powers

REPLAY = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "replay"
# a run that measured every second: `passed`, or `completed` when nothing is graded
MEASURED = ("passed", "completed")


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class LiveReplay(ReplayRunner):
    """A replayed host that answers as a live one does: its clock is measured (it is one
    with this machine's) and it answers a probe, so a controller busy with 256 hosts finds
    it late, not lost, as it would a real host that sends its heartbeat
    (cluster/liveness.py). Recordings otherwise lose a quiet host without a probe."""

    powers = Powers.CLOCK | Powers.SESSION

    def measure_clock(self) -> tuple[float, float]:
        return 0.0, 0.0001

    def ping(self, timeout: float) -> bool:
        return True

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        """A live host resolves its target's symbolic links (cluster/hostcheck.py); the
        replayed hosts' targets are this machine's temporary directories, as they are."""
        if list(argv[:3]) == ["sh", "-c", REALPATH]:
            return CommandResult(0, f"{argv[-1]}\n", "")
        return super().run(argv, timeout)


class TimedEngine(Engine):
    """The engine, with the CPU spent in its load loop and in its finish measured."""

    load_cpu = 0.0
    finish_cpu = 0.0
    load_peak_kib = 0  # the process's peak RSS as the load ended

    def _drive(self, *args: Any, **kwargs: Any) -> tuple[str, str]:
        t0 = cpu()
        try:
            return super()._drive(*args, **kwargs)
        finally:
            TimedEngine.load_cpu += cpu() - t0
            TimedEngine.load_peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def _finish(self, *args: Any, **kwargs: Any) -> Any:
        t0 = cpu()
        try:
            return super()._finish(*args, **kwargs)
        finally:
            TimedEngine.finish_cpu += cpu() - t0


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(hosts: int, due: bool, speed: float | None = 1.0) -> dict[str, float]:
    """One cluster run of `hosts` replayed hosts, in this process."""
    with tempfile.TemporaryDirectory(prefix="assay-scale-") as tmp:
        root = Path(tmp)
        lines = []
        for i in range(hosts):
            (root / "t" / f"n{i}").mkdir(parents=True)
            lines.append(f"n{i} ansible_host=192.0.2.{i % 250 + 1} "
                         f"assay_path={root / 't' / f'n{i}'}")
        inv = inventory.parse("\n".join(lines) + "\n", "inventory.ini")
        plan = plan_text((REPLAY / "scenario.yaml").read_text(),
                         str(REPLAY / "scenario.yaml"), hosts=inv)
        if not due:
            plan = replace(plan, jobfiles={h: {n: re.sub(r"\nwrite_iolog=\S+", "", t)
                                               for n, t in files.items()}
                                           for h, files in plan.jobfiles.items()})
        recording = {f"n{i}": REPLAY / ("due-stall" if i % 8 == 7 else "due-steady")
                     for i in range(hosts)}
        before_rss = rss_kib()
        t0 = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.monotonic()
        out = TimedEngine(plan, RunOptions(root / "results", runner=lambda h, w: LiveReplay(
            recording[h], h, w, speed=speed)), Console(file=io.StringIO())).execute()
        wall = time.monotonic() - wall
        t1 = resource.getrusage(resource.RUSAGE_SELF)
        rec = json.loads((out.run_dir / "run.json").read_text())
        cpu = (t1.ru_utime - t0.ru_utime) + (t1.ru_stime - t0.ru_stime)
        seconds = plan.total_seconds
        peak = t1.ru_maxrss  # KiB on Linux
        due_hosts = sum(1 for g in rec["cluster"]["graded"].values()
                        if (g["stats"].get("db.data.read") or {}).get("intended"))
        return {"hosts": hosts, "due": due, "cpu_s": cpu, "wall_s": wall,
                "host_seconds": hosts * seconds,
                "cpu_ms_per_host_s": 1000 * cpu / (hosts * seconds),
                "load_ms_per_host_s": 1000 * TimedEngine.load_cpu / (hosts * seconds),
                "finish_ms_per_host_s": 1000 * TimedEngine.finish_cpu / (hosts * seconds),
                "fixed_ms_per_host": 1000 * (cpu - TimedEngine.load_cpu
                                             - TimedEngine.finish_cpu) / hosts,
                "rss_mib_per_host": (peak - before_rss) / 1024 / hosts,
                "load_rss_mib_per_host": (TimedEngine.load_peak_kib - before_rss) / 1024 / hosts,
                "peak_rss_mib": peak / 1024, "due_hosts": due_hosts,
                "status": rec["status"], "reason": rec.get("reason") or "",
                "lag": rec["cluster"].get("controller_lag"),
                "lost": len(rec["cluster"].get("lost") or {}),
                "lost_why": sorted({v["reason"][:60] for v in
                                    (rec["cluster"].get("lost") or {}).values()})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--due", choices=("on", "off", "both"), default="on")
    ap.add_argument("--speed", type=float, default=1.0,
                    help="replay speed: 1 in real time, 0 as fast as the engine reads")
    ap.add_argument("--one", nargs=2, metavar=("HOSTS", "DUE"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true",
                    help="2 and 4 hosts at --speed 0: check that the benchmark runs "
                         "(not judged)")
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.speed = [2, 4], 0.0
    if args.one:  # a child: one size, its figures as JSON
        print(json.dumps(one(int(args.one[0]), args.one[1] == "on", args.speed or None)))
        return 0
    modes = {"on": ["on"], "off": ["off"], "both": ["off", "on"]}[args.due]
    print("hosts  due  CPU ms/host-s (load only, finish)  fixed ms/host  "
          "RSS MiB/host (load only)  peak RSS MiB  CPU s  wall s  hosts with p99 from due  lost")
    worst = 0.0
    grown: dict[str, list[tuple[int, float]]] = {m: [] for m in modes}  # hosts, RSS MiB
    for n in args.hosts:
        for mode in modes:
            r = subprocess.run([sys.executable, __file__, "--one", str(n), mode,
                                "--speed", str(args.speed)],
                               capture_output=True, text=True, check=False)
            if r.returncode != 0:
                print(r.stderr[-2000:], file=sys.stderr)
                return 1
            f = json.loads(r.stdout.strip().splitlines()[-1])
            load = f"({f['load_ms_per_host_s']:.2f}, {f['finish_ms_per_host_s']:.2f})"
            rss = f"({f['load_rss_mib_per_host']:.2f})"
            print(f"{n:5d}  {mode:>3}  {f['cpu_ms_per_host_s']:13.2f} {load:>19}  "
                  f"{f['fixed_ms_per_host']:13.1f}  "
                  f"{f['rss_mib_per_host']:12.2f} {rss:>11}  {f['peak_rss_mib']:12.0f}  "
                  f"{f['cpu_s']:5.1f}  {f['wall_s']:6.1f}  {f['due_hosts']:23d}  {f['lost']}")
            for why in f["lost_why"]:
                print(f"         lost: {why}")
            if f["lag"]:  # how far the controller fell behind the hosts' dumps
                print(f"         controller lag: at most {f['lag']['max_s']:.1f} s, behind by "
                      f"more than {f['lag']['bound_s']:g} s for {f['lag']['behind_s']:.1f} s")
            if f["status"] not in MEASURED:  # thresholds failed on a loaded machine: said
                print(f"{n} hosts, due {mode}: the run {f['status']}: {f['reason'][:200]}",
                      file=sys.stderr)
                if f["status"] != "failed" or f["lost"]:
                    return 1
            if mode == "on":
                worst = max(worst, f["cpu_ms_per_host_s"])
            grown[mode].append((n, f["rss_mib_per_host"] * n))
    for mode, sizes in grown.items():  # what a host adds, apart from what any run holds
        steps = [f"{a}->{b} hosts {(rb - ra) / (b - a):.2f}" for (a, ra), (b, rb)
                 in zip(sizes, sizes[1:], strict=False) if b > a]
        if steps:
            (a, ra), (b, rb) = sizes[0], sizes[1]
            fixed = ra - a * (rb - ra) / (b - a) if b > a else 0.0
            print(f"RSS per added host, due {mode}: {', '.join(steps)} MiB (the run's own, "
                  f"whatever its hosts: about {fixed:.0f} MiB)")
    print(f"goal: <= 4 ms CPU per host-second, <= 1 MiB RSS per host (worst CPU with due "
          f"time: {worst:.2f} ms)")
    worst_rss = max(total / n for sizes in grown.values() for n, total in sizes)
    print(f"ratio to the goals: CPU {worst / 4:.2f}, RSS {worst_rss:.2f} (worst of "
          f"{', '.join(map(str, args.hosts))} hosts"
          + ("; quick: not judged)" if args.quick else ")"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
