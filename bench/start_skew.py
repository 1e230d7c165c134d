#!/usr/bin/env python3
"""Benchmark: how closely fio starts on N hosts asked to start at one instant (SshRunner).

Makes its own lab cluster (network namespaces with sshd: root), starts a short fio on every
host with the same `at`, and prints the spread of the hosts' reported start times (their own
clocks, each measured just before fio is started) over a few rounds. Goal: worst <= 10 ms.
The cluster is destroyed afterwards, also on failure or Ctrl-C.

    .venv/bin/python bench/start_skew.py [--hosts 8] [--rounds 5] [--lead 1.5] [--quick]

`--quick`: 2 hosts, 1 round, the same code path, to show the benchmark still runs; its figures
are printed, not judged.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

from assay.exitcodes import AssayError
from assay.hosts import inventory
from assay.platforms import labcluster
from assay.runners.ssh import SshRunner

JOB = """\
[global]
directory=${ASSAY_TARGET}
ioengine=psync
time_based
runtime=1s
[w]
filename=skew.dat
size=1m
rw=write
bs=64k
"""


def rounds(runners: list[SshRunner], n: int, lead: float) -> list[float]:
    skews = []
    for i in range(n):
        at = max(r.clock() for r in runners) + lead
        runs = [r.start("skew.fio", {"ASSAY_TARGET": r.target or "/tmp"}, at=at)
                for r in runners]
        started = [f.started for f in runs]
        for f in runs:
            for _ in f.documents():
                pass
            if f.wait() != 0:
                raise AssayError(f"fio failed: {f.stderr_tail()}")
        skew = max(started) - min(started)
        late = [round((s - at) * 1000, 1) for s in started]
        print(f"round {i + 1}: skew {skew * 1000:5.1f} ms   late after the instant (ms): "
              f"{late}", flush=True)
        skews.append(skew)
    return skews


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lead", type=float, default=1.5, help="seconds from now to the instant")
    ap.add_argument("--quick", action="store_true",
                    help="2 hosts, 1 round: check that the benchmark runs (not judged)")
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.rounds = 2, 1
    with tempfile.TemporaryDirectory(prefix="assay-skew-") as tmp:
        print(f"making a {args.hosts}-host lab cluster...", flush=True)
        try:
            cluster = labcluster.create(f"skew{uuid.uuid4().hex[:6]}", args.hosts,
                                        size=64 << 20, root=Path(tmp) / "labs")
        except AssayError as e:
            print(f"start_skew: {e}", file=sys.stderr)
            return 2
        runners: list[SshRunner] = []
        try:
            for h in inventory.load(cluster.inventory):
                work = Path(tmp) / "run" / "hosts" / h.name
                work.mkdir(parents=True)
                r = SshRunner(h, work)
                runners.append(r)
                r.prepare(Path(h.path or "/tmp"), [])
                r.write_job("skew.fio", JOB)
            offsets = ", ".join(f"{r.host} {r.offset * 1000:+.2f}" for r in runners)
            print(f"clock offsets (ms): {offsets}")
            skews = rounds(runners, args.rounds, args.lead)
        except AssayError as e:
            print(f"start_skew: {e}", file=sys.stderr)
            return 3
        finally:
            for r in runners:
                r.close()
            labcluster.destroy(cluster)
    worst = max(skews)
    print(f"start skew over {args.hosts} hosts, {args.rounds} rounds: median "
          f"{statistics.median(skews) * 1000:.1f} ms, worst {worst * 1000:.1f} ms "
          f"(goal <= 10 ms: {'met' if worst <= 0.010 else 'NOT met'})")
    print(f"ratio worst skew / goal: {worst / 0.010:.2f}"
          + (" (quick: not judged)" if args.quick else ""))
    return 0 if worst <= 0.010 or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
