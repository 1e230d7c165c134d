"""Benchmark: how fast `assay search` finds a known limit.

A loop device with XFS is throttled to a known read IOPS cap (cgroup v1 blkio); `assay search`
looks for the largest fixed rate that passes the `rate` thresholds in [--from, --to]. Prints
every trial, the trials used, the error against the cap, and how many trials a plain
bisection (no delivered-rate estimate, no early stop) would have needed for the same answer.

    sudo .venv/bin/python bench/search_cap.py [--cap 400] [--from 50] [--to 5000] [--quick]

Needs root, fio, mkfs.xfs and cgroup v1 blkio. Everything it creates is removed at the end.

`--quick`: [100, 800] to 25 %, 1 s trials, the same code path, to show the benchmark still
runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assay.search import bisect  # noqa: E402

SCENARIO = """\
name: bench-search-cap
target:
  path: {mnt}
  throttle: [{{device: {dev}, read_iops: {cap}}}]
workloads:
  db: {{kind: oltp, data_iops: 100, read_pct: 100, data_files: 1, log_files: 0,
        dataset: 64MiB, load: {{pacing: even}}}}
timeline: {{warmup: 1s, duration: {duration}s}}
thresholds:
  db: rate
"""


def plain_bisection_trials(low: float, high: float, precision: float, answer: float) -> int:
    """Trials a bisection without the delivered-rate estimate needs to bracket `answer`."""
    space = bisect.Space(low, high, precision)
    points: list[bisect.Point] = []
    while not isinstance(step := bisect.decide(points, space), bisect.Answer):
        points.append(bisect.Point(step, step <= answer, None))
    return len(points)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cap", type=int, default=400)
    ap.add_argument("--from", dest="low", type=float, default=50)
    ap.add_argument("--to", dest="high", type=float, default=5000)
    ap.add_argument("--precision", default="2%")
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="[100, 800] to 25 %%, 1 s trials: check that the benchmark runs "
                         "(not judged)")
    args = ap.parse_args()
    if args.quick:
        args.low, args.high, args.precision, args.duration = 100, 800, "25%", 1
    if os.geteuid() != 0:
        print("needs root (loop device, mount, blkio cgroup)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="assay-bench-search-"))
    image, mnt = work / "disk.img", work / "mnt"
    dev = ""
    mounted = False
    try:
        subprocess.run(["truncate", "-s", "512M", str(image)], check=True)
        dev = subprocess.run(["losetup", "-f", "--show", str(image)], check=True,
                             capture_output=True, text=True).stdout.strip()
        subprocess.run(["mkfs.xfs", "-f", dev], check=True, capture_output=True)
        mnt.mkdir()
        subprocess.run(["mount", dev, str(mnt)], check=True)
        mounted = True
        scenario = work / "cap.yaml"
        scenario.write_text(SCENARIO.format(mnt=mnt, dev=dev, cap=args.cap,
                                            duration=args.duration))
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "assay", "search", str(scenario), "--vary", "db.data_iops",
             "--from", str(args.low), "--to", str(args.high), "--precision", args.precision,
             "--results", str(work / "results"), "--json"],
            capture_output=True, text=True)
        elapsed = time.monotonic() - t0
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        record = json.loads(proc.stdout)
        for n, t in enumerate(record["trials"], 1):
            d = t.get("deciding") or {}
            print(f"trial {n}: {t['value']:>8g}  {t['status']:<6}  {t['seconds']:5.1f}s  "
                  f"{d.get('expr', '')} observed {d.get('observed') or 0:.1f} "
                  f"bound {d.get('bound') or 0:.1f}"
                  + ("  (stopped early)" if t.get("stopped_early") else ""))
        a = record["answer"]
        error = (a["last_pass"] - args.cap) / args.cap
        p = float(args.precision.rstrip("%")) / 100
        plain = plain_bisection_trials(args.low, args.high, p, a["last_pass"])
        print(f"cap {args.cap} IOPS: answer {a['last_pass']:g} (first fail {a['first_fail']:g}, "
              f"precision {a['precision']:.1%}); error {error:+.1%}")
        print(f"trials used {len(record['trials'])}, {elapsed:.0f}s in all; a plain bisection "
              f"of [{args.low:g}, {args.high:g}] needs {plain} trials "
              f"({plain / len(record['trials']):.1f}x)")
        print(f"ratio answer/cap {a['last_pass'] / args.cap:.3f}, plain bisection's trials / "
              f"search's {plain / len(record['trials']):.2f}"
              + (" (quick: not judged)" if args.quick else ""))
        return 0
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], check=False)
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    sys.exit(main())
