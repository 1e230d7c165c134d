#!/usr/bin/env python3
"""Benchmark: pgbench through assay against pgbench alone, on the same database and rate.

One target, XFS on a loop device over tmpfs (so the ratio is assay's cost around pgbench,
not the shared disk's noise), holds one loaded database (pgbench scale 10; a first, unmeasured run
loads it). Each round, in alternating order, runs the
`postgres` workload through assay (a throw-away copy of the database, the server started by
assay, pgbench with per-transaction logs folded into per-second samples), then the same
pgbench command line by hand on a fresh copy of the same database with the server settings
assay recorded, and compares TPS (pgbench's own `tps =` line) and the p99 latency (sorted
from pgbench's per-transaction log) with assay's graded values. Goal: TPS within 2 %,
p99 within 5 %.

    .venv/bin/python bench/pgbench_overhead.py [--rounds 2] [--seconds 20] [--rate 400] [--quick]
                                                                                      (root)

`--quick`: one round of 2 s at 100 tx/s on a scale-1 database, the same code path, to show the
benchmark still runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from assay.agent.pgdata import working_copy
from assay.engine import Engine
from assay.plan import plan_text
from assay.postgres.cluster import Cluster
from assay.postgres.dataset import loaded_paths
from assay.run_options import RunOptions

SCENARIO = """\
name: pgbench-overhead
target: {{path: {target}}}
workloads:
  pg: {{kind: postgres, scale: {scale}, clients: 8, threads: 2, rate: {rate}}}
timeline: {{duration: {seconds}s}}
"""
# a run that measured every second: `passed`, or `completed` when nothing is graded (this
# scenario has no thresholds); failed, incomplete, aborted or interrupted ends the benchmark
MEASURED = ("passed", "completed")


def sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def through_assay(target: Path, results: Path, rate: float, seconds: int, scale: int) \
        -> tuple[float, float, dict[str, str], list[str]]:
    plan = plan_text(SCENARIO.format(target=target, rate=rate, seconds=seconds, scale=scale),
                     "bench.yaml")
    console = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    outcome = Engine(plan, RunOptions(results), console).execute()
    record = json.loads((outcome.run_dir / "run.json").read_text())
    if outcome.status not in MEASURED:
        raise SystemExit(f"assay run {outcome.status}: {outcome.reason}")
    stats = record["stats"]["pg.tx.commit"]
    pg = record["postgres"]["pg"]
    return stats["iops"], stats["lat_p99_ms"], pg["settings"], pg["pgbench"].split()


def alone(target: Path, work: Path, settings: dict[str, str], argv: list[str]) \
        -> tuple[float, float]:
    """The same pgbench command by hand, on a fresh copy of the same loaded database."""
    golden, _ = loaded_paths(target, "pg")
    copy = target / "pg-bench.run"
    working_copy(golden, copy, None)
    cluster = Cluster(copy, work / "server.log")
    cluster.start(settings)
    try:
        logs = work / "logs"
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True)
        # assay's own argument list, with the log prefix moved into our directory
        hand = [a if not a.startswith("--log-prefix=") else f"--log-prefix={logs / 'tx'}"
                for a in argv]
        out = subprocess.run(hand, env=cluster.env(), capture_output=True, text=True,
                             check=True).stdout
        tps = float(re.search(r"tps = ([\d.]+)", out)[1])  # type: ignore[index]
        lat = sorted(int(f[2]) for p in logs.glob("tx.*") for line in p.read_text().splitlines()
                     if (f := line.split()) and f[2].isdigit())
        p99 = lat[math.ceil(len(lat) * 0.99) - 1] / 1000
        return tps, p99
    finally:
        cluster.stop()
        shutil.rmtree(copy, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rate", type=float, default=400)
    ap.add_argument("--scale", type=int, default=10, help="pgbench's scale")
    ap.add_argument("--quick", action="store_true",
                    help="one round of 2 s at 100 tx/s, scale 1: check that the benchmark runs "
                         "(not judged)")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.seconds, a.rate, a.scale = 1, 2, 100, 1
    root = Path(tempfile.mkdtemp(prefix="assay-bench-pgbench-"))
    root.chmod(0o711)  # the server's unprivileged user works inside
    target = root / "xfs" / "target"
    rows: dict[str, list[tuple[float, float]]] = {"assay": [], "alone": []}
    dev = ""
    try:
        # XFS on a loop device over tmpfs: the shared disk's noise is out of the picture,
        # the ratio is the cost of assay around pgbench (and O_DIRECT WAL works on XFS)
        sh("mount", "-t", "tmpfs", "-o", "size=2g", "tmpfs", str(root))
        root.chmod(0o711)
        image = root / "xfs.img"
        image.write_bytes(b"")
        os.truncate(image, 1536 << 20)
        dev = sh("losetup", "-f", "--show", str(image))
        sh("mkfs.xfs", "-f", "-q", dev)
        (root / "xfs").mkdir()
        sh("mount", dev, str(root / "xfs"))
        # the first assay run loads the database and tells the settings and the command
        settings, argv = through_assay(target, root / "results", a.rate, a.seconds, a.scale)[2:]
        for r in range(a.rounds):
            order = ("assay", "alone") if r % 2 else ("alone", "assay")  # cancel order effects
            for side in order:
                if side == "assay":
                    tps, p99, _, _ = through_assay(target, root / "results", a.rate, a.seconds,
                                                   a.scale)
                else:
                    tps, p99 = alone(target, root / "alone", settings, argv)
                rows[side].append((tps, p99))
                print(f"round {r + 1} {side}  {tps:9.1f} tx/s  p99 {p99:7.2f} ms", flush=True)
    finally:
        subprocess.run(["umount", str(root / "xfs")], capture_output=True)
        if dev:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        subprocess.run(["umount", str(root)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
    t_assay = statistics.median(x[0] for x in rows["assay"])
    t_alone = statistics.median(x[0] for x in rows["alone"])
    p_assay = statistics.median(x[1] for x in rows["assay"])
    p_alone = statistics.median(x[1] for x in rows["alone"])
    print(f"\nrate {a.rate:g} tx/s, {a.seconds}s x {a.rounds} rounds (medians)")
    print(f"TPS  assay {t_assay:9.1f}  alone {t_alone:9.1f}  ratio {t_assay / t_alone:.4f}  "
          f"(goal within 2 %)")
    print(f"p99  assay {p_assay:7.2f}ms  alone {p_alone:7.2f}ms  ratio {p_assay / p_alone:.4f}  "
          f"(goal within 5 %)")
    ok = abs(t_assay / t_alone - 1) <= 0.02 and abs(p_assay / p_alone - 1) <= 0.05
    print(f"ratio assay/alone: TPS {t_assay / t_alone:.4f}, p99 {p_assay / p_alone:.4f} "
          + ("(quick: not judged)" if a.quick else f"(goals {'met' if ok else 'NOT met'})"))
    return 0 if ok or a.quick else 1


if __name__ == "__main__":
    sys.exit(main())
