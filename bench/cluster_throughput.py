#!/usr/bin/env python3
"""Benchmark: a cluster run through assay against fio started by hand on every host.

Makes its own lab cluster (network namespaces with sshd: root) of --hosts hosts; a first
`assay run --hosts` of a closed-loop 8k random read (X-Ray's four-corners first corner) lays
the files out. Then, --rounds times: the very job files assay stored (hosts/<host>/run.fio)
started by hand with plain ssh on every host at once, `assay run --hosts` again, and by hand
again; assay's IO/s against the mean of the hand runs around it. Goal: assay >= 95 %.
On a lab the hosts and assay share this machine's CPUs, so assay's own work (parsing every
host's dumps each second) is charged to the hosts: a real cluster does not pay it.
The cluster is destroyed afterwards, also on failure or Ctrl-C.

    .venv/bin/python bench/cluster_throughput.py [--hosts 4] [--rounds 2] [--seconds 15] [--quick]

`--quick`: 2 hosts, 2 s on 16 MiB each: the run that lays the files out against one run of its
job files by hand (no alternating rounds), to show the benchmark still runs; its figures are
printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from assay.exitcodes import AssayError
from assay.hosts import inventory
from assay.hosts.inventory import Host
from assay.platforms import labcluster

SCENARIO = """\
name: cluster-throughput
workloads:
  rr: {{kind: micro, corners: [randread], phase: {seconds}s, gap: 0s, dataset: {dataset}}}
timeline: {{warmup: 0s, duration: {seconds}s}}
"""


def through_assay(scenario: Path, inv: str, results: Path) -> tuple[float, Path]:
    r = subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--hosts", inv,
                        "--results", str(results), "--json"], capture_output=True, text=True)
    if r.returncode != 0:  # passed, or completed: a failed or aborted run measures nothing
        raise AssayError(f"assay run ended {r.returncode}: {r.stderr[-2000:]}")
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    return sum(float(s["iops"]) for s in rec["stats"].values()), run_dir


def ssh(h: Host, *argv: str) -> list[str]:
    assert h.key_file and h.known_hosts
    return ["ssh", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={h.known_hosts}",
            "-i", h.key_file, "-l", h.user or "root", h.address, *argv]


def by_hand(hosts: list[Host], run_dir: Path, extra: str = "") -> float:
    """The job files assay ran, each started with ssh on its host at once; fio's own IO/s."""
    for h in hosts:  # the job file beside the host's data (its target directory)
        subprocess.run(ssh(h, f"cat > {h.path}/bench-run.fio"), check=True,
                       input=(run_dir / "hosts" / h.name / "run.fio").read_bytes())
    procs = [subprocess.Popen(ssh(h, f"cd {h.path} && ASSAY_TARGET={h.path} ASSAY_DIRECT=1 "
                                     f"fio --output-format=json {extra} bench-run.fio"),
                              stdout=subprocess.PIPE, text=True) for h in hosts]
    total = 0.0
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            raise AssayError(f"fio by hand failed ({p.returncode})")
        doc = json.loads(out[out.rindex('\n{\n  "fio version"') + 1:] if extra else
                         out[out.index("{"):])
        total += sum(float(j["read"]["iops"]) + float(j["write"]["iops"]) for j in doc["jobs"])
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--status", action="store_true",
                    help="also run fio by hand with the 1 s json+ status dumps assay asks for")
    ap.add_argument("--dataset", default="96MiB", help="on each host")
    ap.add_argument("--quick", action="store_true",
                    help="2 hosts, 2 s on 16 MiB, the first run against one by hand: check "
                         "that the benchmark runs (not judged)")
    a = ap.parse_args()
    if a.quick:
        a.hosts, a.rounds, a.seconds, a.dataset = 2, 1, 2, "16MiB"
    with tempfile.TemporaryDirectory(prefix="assay-bench-cluster-") as tmp:
        print(f"making a {a.hosts}-host lab cluster...", flush=True)
        try:
            cluster = labcluster.create(f"tp{uuid.uuid4().hex[:6]}", a.hosts, size=256 << 20,
                                        root=Path(tmp) / "labs")
        except AssayError as e:
            print(f"cluster_throughput: {e}", file=sys.stderr)
            return 2
        ratios = []
        try:
            hosts = inventory.load(cluster.inventory)
            scenario = Path(tmp) / "tp.yaml"
            scenario.write_text(SCENARIO.format(seconds=a.seconds, dataset=a.dataset))
            # a first run lays the files out and leaves the job files to start by hand
            first, run_dir = through_assay(scenario, cluster.inventory, Path(tmp) / "res")
            if a.quick:  # that run against one by hand: the least that still compares them
                theirs = by_hand(hosts, run_dir)
                ratios.append(first / theirs)
                print(f"quick: assay {first:10,.0f} IO/s   fio by hand {theirs:10,.0f} IO/s   "
                      f"ratio {first / theirs:6.1%}", flush=True)
            # hand, assay, hand: a drift in load cancels out
            for i in range(0 if a.quick else a.rounds):
                before = by_hand(hosts, run_dir)
                ours, run_dir = through_assay(scenario, cluster.inventory, Path(tmp) / "res")
                theirs = (before + by_hand(hosts, run_dir)) / 2
                if a.status:
                    dumps = by_hand(hosts, run_dir, "--status-interval=1 --output-format=json+")
                    print(f"         fio by hand with assay's 1 s json+ dumps: {dumps:,.0f} IO/s")
                ratios.append(ours / theirs)
                print(f"round {i + 1}: assay {ours:10,.0f} IO/s   fio by hand {theirs:10,.0f} "
                      f"IO/s   ratio {ours / theirs:6.1%}", flush=True)
        except AssayError as e:
            print(f"cluster_throughput: {e}", file=sys.stderr)
            return 3
        finally:
            labcluster.destroy(cluster)
    ratio = statistics.median(ratios)
    print(f"ratio assay / fio by hand, {a.hosts} hosts, 8k random read, closed loop: "
          f"{ratio:.1%} (median of {len(ratios)}; goal >= 95 %: "
          + ("quick: not judged)" if a.quick else f"{'met' if ratio >= 0.95 else 'NOT met'})"))
    return 0 if ratio >= 0.95 or a.quick else 1


if __name__ == "__main__":
    sys.exit(main())
