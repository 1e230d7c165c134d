"""How big and how slow is the HTML report of a 24-hour run? (target: <= 15 MB, <= 20 s)

Builds a synthetic run directory in a temporary directory with the real file formats — run.json,
the series stream (one row per second and component) and the samples stream (the same rows with
latency histogram bins), written by the run's own block store — for 16 components over 86,400
seconds, with a few latency spikes and a snapshot step every hour, then renders it with the same
code as `assay report` and prints the report's size, the build time and whether the spikes
survived downsampling.

    .venv/bin/python bench/report_24h.py [--hours 24] [--components 16] [--keep] [--quick]

`--quick`: 15 minutes of 4 components, the same code path, to show the benchmark still runs;
its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import tempfile
import time
from pathlib import Path

from assay.report.html import write_report
from assay.results.blocklog import BlockLog, stored_bytes

SPIKE_MS = 987.6  # one value no ordinary second reaches, to find in the report


def fio_bucket(ns: float) -> int:
    """fio's latency buckets: 64 per power of two, so real bins repeat from second to second."""
    n = int(ns)
    if n < 64:
        return n
    unit = 1 << (n.bit_length() - 7)
    return n // unit * unit


def build_run(root: Path, seconds: int, n_components: int) -> Path:
    rng = random.Random(1)
    run_dir = root / "20260101-000000_day-long_bench1"
    run_dir.mkdir(parents=True)
    comps = [f"wl{i // 4}.s{i % 4 // 2}.{'read' if i % 2 == 0 else 'write'}"
             for i in range(n_components)]
    warmup = 600
    spikes = {(rng.randrange(warmup, seconds), rng.randrange(n_components)) for _ in range(5)}
    series, samples = BlockLog(run_dir, "series"), BlockLog(run_dir, "samples")  # as a run
    for t in range(1, seconds + 1):
        phase = "warmup" if t <= warmup else "run"
        daily = 1 + 0.3 * math.sin(2 * math.pi * t / 86_400)
        lines_series, lines_samples = [], []
        for ci, c in enumerate(comps):
            iops = 500 * daily + rng.gauss(0, 15)
            lat = 0.8 / daily + rng.random() * 0.2
            p99 = SPIKE_MS if (t, ci) in spikes else lat * 4
            ios = int(iops)
            lines_series.append(
                f'{{"t":{t}.0,"dt":1.0,"c":"{c}","phase":"{phase}","ios":{ios},'
                f'"bytes":{ios * 8192},"iops":{iops:.2f},"mbps":{iops * 8192 / 1e6:.3f},'
                f'"lat_avg_ms":{lat:.4f},"lat_p50_ms":{lat * 0.8:.4f},'
                f'"lat_p95_ms":{lat * 2:.4f},"lat_p99_ms":{p99:.4f},'
                f'"lat_p999_ms":{p99 * 1.5:.4f},"lat_max_ms":{p99 * 2:.4f},'
                f'"target_iops":500.0,"behind_s":0.0}}')
            bins = ",".join(f'"{fio_bucket(lat * 1e6 * (1 + k / 8))}":{max(1, ios // (k + 2))}'
                            for k in range(12))
            lines_samples.append(
                f'{{"t":{t}.0,"dt":1.0,"c":"{c}","ios":{ios},"bytes":{ios * 8192},'
                f'"lat_sum_ns":{lat * 1e6 * ios:.1f},"lat_max_ns":{int(p99 * 2e6)},'
                f'"behind_s":0.0,"bins":{{{bins}}}}}')
        series.append(lines_series)
        samples.append(lines_samples)
    series.close()
    samples.close()
    with open(run_dir / "events.ndjson", "w") as ev:
        ev.write(json.dumps({"schema_version": 1, "time": 1.7e9, "kind": "load",
                             "outcome": "started"}) + "\n")
        for h in range(1, seconds // 3600 + 1):
            ev.write(json.dumps({"schema_version": 1, "time": 1.7e9 + h * 3600, "kind": "step",
                                 "name": f"snapshot-{h}", "action": "snapshot",
                                 "t_start": h * 3600.0, "t_end": h * 3600.0 + 2.5,
                                 "outcome": "ok"}) + "\n")
    measured = seconds - warmup
    stats = {c: {"component": c, "seconds": measured, "ios": 500 * measured,
                 "bytes": 500 * measured * 8192, "iops": 500.0, "mbps": 4.1,
                 "lat_avg_ms": 0.8, "lat_p50_ms": 0.7, "lat_p95_ms": 1.6, "lat_p99_ms": 3.2,
                 "lat_p999_ms": 4.8, "lat_max_ms": SPIKE_MS * 2, "target_iops": 500.0,
                 "behind_max_s": 0.0, "rate_tolerance": 0.05, "achieved_pct": 100.0}
             for c in comps}
    # no thresholds: a run with nothing to grade ends `completed`, as the engine writes it
    run = {"schema_version": 1, "id": run_dir.name, "status": "completed", "started": 1.7e9,
           "elapsed_s": seconds, "scenario": {"name": "day-long", "description": "bench"},
           "plan": {"duration_s": seconds - warmup, "warmup_s": warmup},
           "components": {c: {"target_iops": 500.0} for c in comps},
           "measured_window_s": [warmup, seconds], "stats": stats, "thresholds": [],
           "verdict": {"passed": 0, "failed": 0}, "target": {"platform": "local"},
           "environment": {"hostname": "bench"}}
    (run_dir / "run.json").write_text(json.dumps(run, indent=2))
    (run_dir / "scenario.yaml").write_text("name: day-long\n")
    return run_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--components", type=int, default=16)
    ap.add_argument("--keep", action="store_true", help="keep the synthetic run directory")
    ap.add_argument("--quick", action="store_true",
                    help="15 minutes of 4 components: check that the benchmark runs (not judged)")
    args = ap.parse_args()
    if args.quick:
        args.hours, args.components = 0.25, 4
    seconds = int(args.hours * 3600)
    root = Path(tempfile.mkdtemp(prefix="assay-bench-report-"))
    try:
        t0 = time.perf_counter()
        run_dir = build_run(root, seconds, args.components)
        made = time.perf_counter() - t0
        series_mb = stored_bytes(run_dir, "series") / 1e6
        samples_mb = stored_bytes(run_dir, "samples") / 1e6
        t1 = time.perf_counter()
        report = write_report(run_dir)
        built = time.perf_counter() - t1
        html = report.read_text()
        size_mb = report.stat().st_size / 1e6
        spikes = len(re.findall(re.escape(f"{SPIKE_MS:.1f}"), html))
        print(f"synthetic run: {seconds:,} s x {args.components} components "
              f"({seconds * args.components:,} rows); series {series_mb:,.1f} MB, "
              f"samples {samples_mb:,.1f} MB stored; written in {made:.1f} s")
        print(f"report.html: {size_mb:.2f} MB (budget 15 MB), built in {built:.1f} s "
              f"(budget 20 s); spike value {SPIKE_MS} ms appears {spikes} times")
        print(f"ratio to budget: size {size_mb / 15:.2f}, time {built / 20:.2f}"
              + (" (quick: not judged)" if args.quick else ""))
        if args.keep:
            print(f"kept: {run_dir}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
