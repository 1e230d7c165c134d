#!/usr/bin/env python3
"""Benchmark: the throughput cost of integrity mode, on a closed-loop OLTP load (data files,
90 % 8k / 10 % 32k random, 50/50 read/write, 4 jobs × iodepth 8; 32k log writes).

1. Verify headers: the job file `assay plan` renders for the scenario in integrity mode, run by
   fio as is (every write with fio's crc32c verify headers) and with the verify options taken
   out, alternating, on one prefilled dataset; the ratio is IOPS with headers over without
   (the goal is 0.95 or more).
2. The writer stream (`--rates`): the same scenario through `assay run` without and with
   `integrity:` at each writer rate, alternating; the ratio is fio's IOPS with integrity over
   without (headers and the stream together; the writer's own IO not counted).

    .venv/bin/python bench/integrity_cost.py [--dir /var/tmp] [--seconds 15] [--rounds 3]
                                             [--rates 100,1000] [--quick]

`--quick`: one round of 1 s on 64 MiB, the writer stream at 100/s too (no warm-up), the same
code paths, to show the benchmark still runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from assay.plan import load

SCENARIO = """name: integrity-cost
target: {{path: {path}}}
{integrity}
workloads:
  db: {{kind: oltp, dataset: {dataset}, load: {{model: closed, threads: 1, iodepth: 8}}}}
timeline: {{duration: {seconds}s, warmup: {warmup}s}}
"""
VERIFY_KEYS = ("verify=", "verify_interval=", "do_verify=", "verify_state_save=")


def fio(job: Path, target: Path) -> float:
    """Total IOPS of one fio run of a job file of assay's (its variables set as assay does)."""
    env = {**os.environ, "ASSAY_TARGET": str(target), "ASSAY_DIRECT": "1"}
    out = subprocess.run(["fio", str(job), "--output-format=json"], capture_output=True,
                         text=True, check=True, env=env, cwd=job.parent).stdout
    doc = json.loads(out[out.index("{"):])
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in doc["jobs"])


def headers(work: Path, seconds: int, rounds: int, dataset: str) -> None:
    """IOPS of the same load with and without fio's verify headers, alternating."""
    scenario = work / "h.yaml"
    scenario.write_text(SCENARIO.format(path=work / "target", integrity="integrity: on",
                                        seconds=seconds, warmup=0, dataset=dataset))
    plan = load(str(scenario))
    (work / "target").mkdir(exist_ok=True)
    (work / "prefill.fio").write_text(plan.jobfile("local", "prefill.fio"))
    subprocess.run(["fio", str(work / "prefill.fio")], capture_output=True, check=True,
                   env={**os.environ, "ASSAY_TARGET": str(work / "target"), "ASSAY_DIRECT": "1"})
    text = plan.jobfile("local", "run.fio")
    (work / "with.fio").write_text(text)
    (work / "without.fio").write_text("\n".join(
        line for line in text.splitlines() if not line.startswith(VERIFY_KEYS)) + "\n")
    assert "verify" in text and "verify" not in (work / "without.fio").read_text()
    got: dict[str, list[float]] = {"without": [], "with": []}
    for r in range(rounds):
        for name in got:
            got[name].append(fio(work / f"{name}.fio", work / "target"))
            print(f"round {r + 1} {name:7} verify headers {got[name][-1]:9.0f} IOPS", flush=True)
    base, headed = statistics.median(got["without"]), statistics.median(got["with"])
    print(f"\nmedian IOPS without headers {base:.0f}, with {headed:.0f}")
    print(f"ratio with/without verify headers {headed / base:.3f} (goal >= 0.95); rounds "
          + ", ".join(f"{w / o:.2f}" for w, o in zip(got["with"], got["without"], strict=True)))


def run(work: Path, results: Path, integrity: str, seconds: int, dataset: str,
        warmup: int) -> tuple[float, int]:
    """Achieved IOPS of the measured window, and the writer's acknowledged writes."""
    scenario = work / "s.yaml"  # assay's own files: not the ones fio prefilled by hand above
    scenario.write_text(SCENARIO.format(path=work / "assay-target", integrity=integrity,
                                        seconds=seconds, warmup=warmup, dataset=dataset))
    proc = subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--results",
                           str(results), "--json"], capture_output=True, text=True)
    if proc.returncode != 0:  # 0: passed, or completed (nothing graded); the rest is not a run
        raise SystemExit(f"assay run ended {proc.returncode}: {proc.stderr[-2000:]}")
    run_dir = Path(json.loads(proc.stdout)["run_dir"])
    record = json.loads((run_dir / "run.json").read_text())
    iops = sum(s["iops"] for s in record["stats"].values())
    acked = sum(f["acknowledged"] for f in (record.get("integrity") or {}).get("files", []))
    return iops, acked


def writer(work: Path, seconds: int, rounds: int, rates: list[float], dataset: str,
           warmup: int = 2) -> None:
    variants = {"off": ""} | {f"{r:g}/s": f"integrity: {{rate: {r:g}}}" for r in rates}
    got: dict[str, list[float]] = {k: [] for k in variants}
    for r in range(rounds):
        for name, text in variants.items():
            iops, acked = run(work, work / "results", text, seconds, dataset, warmup)
            got[name].append(iops)
            acks = f"  ({acked / (seconds + warmup):.0f} writes/s acknowledged)" if acked else ""
            print(f"round {r + 1} integrity {name:8} {iops:9.0f} IOPS{acks}", flush=True)
    base = statistics.median(got["off"])
    print(f"\nmedian IOPS without integrity: {base:.0f}")
    for name in list(variants)[1:]:
        m = statistics.median(got[name])
        print(f"ratio with/without integrity at {name}: {m / base:.3f} ({m:.0f} IOPS)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rates", default="", help="writer rates to measure too, e.g. 100,1000")
    ap.add_argument("--dataset", default="256MiB")
    ap.add_argument("--quick", action="store_true",
                    help="one round of 1 s on 64 MiB, the writer at 100/s too: check that the "
                         "benchmark runs (not judged)")
    a = ap.parse_args()
    if a.quick:
        a.seconds, a.rounds, a.dataset, a.rates = 1, 1, "64MiB", "100"
    work = Path(tempfile.mkdtemp(prefix="assay-bench-integrity-", dir=a.dir))
    try:
        headers(work, a.seconds, a.rounds, a.dataset)
        if a.rates:
            writer(work, a.seconds, a.rounds, [float(r) for r in a.rates.split(",")], a.dataset,
                   0 if a.quick else 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
