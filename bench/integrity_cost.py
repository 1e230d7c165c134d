#!/usr/bin/env python3
"""Benchmark: the throughput cost of integrity mode. The same closed-loop OLTP scenario (data
files, 90 % 8k / 10 % 32k random, 60/40 read/write, 4 jobs × iodepth 8) through `assay run`
without and with `integrity:` at a given writer rate, alternating, on one filesystem; the
ratio is the IOPS fio achieved with integrity over without (the writer's own IO not counted).

    .venv/bin/python bench/integrity_cost.py [--dir /var/tmp] [--seconds 15] [--rounds 3]
                                             [--rates 100,1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SCENARIO = """name: integrity-cost
target: {{path: {path}}}
{integrity}
workloads:
  db: {{kind: oltp, dataset: 256MiB, load: {{model: closed, threads: 1, iodepth: 8}}}}
timeline: {{duration: {seconds}s, warmup: 2s}}
"""


def run(work: Path, results: Path, integrity: str, seconds: int) -> tuple[float, int]:
    """Achieved IOPS of the measured window, and the writer's acknowledged writes."""
    scenario = work / "s.yaml"
    scenario.write_text(SCENARIO.format(path=work / "target", integrity=integrity,
                                        seconds=seconds))
    subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--results",
                    str(results)], capture_output=True, check=True)
    run_dir = max(results.iterdir(), key=lambda p: p.stat().st_mtime)
    record = json.loads((run_dir / "run.json").read_text())
    iops = sum(s["iops"] for s in record["stats"].values())
    acked = sum(f["acknowledged"] for f in (record.get("integrity") or {}).get("files", []))
    return iops, acked


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rates", default="100,1000")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assay-bench-integrity-", dir=a.dir))
    rates = [float(r) for r in a.rates.split(",")]
    variants = {"off": ""} | {f"{r:g}/s": f"integrity: {{rate: {r:g}}}" for r in rates}
    got: dict[str, list[float]] = {k: [] for k in variants}
    try:
        for r in range(a.rounds):
            for name, text in variants.items():
                iops, acked = run(work, work / "results", text, a.seconds)
                got[name].append(iops)
                print(f"round {r + 1} integrity {name:8} {iops:9.0f} IOPS"
                      + (f"  ({acked / (a.seconds + 2):.0f} writes/s acknowledged)"
                         if acked else ""), flush=True)
        base = statistics.median(got["off"])
        print(f"\nmedian IOPS without integrity: {base:.0f}")
        for name in list(variants)[1:]:
            m = statistics.median(got[name])
            print(f"integrity at {name:8}: {m:9.0f} IOPS  with/without {m / base:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
