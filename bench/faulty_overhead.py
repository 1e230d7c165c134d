#!/usr/bin/env python3
"""Benchmark: the throughput cost of a faulty lab device (a loop device over a file served by
the fault server, FUSE in Python) against a plain loop device, side by side.

Both backing files live on one tmpfs, so the disk under them is out of the picture and the
ratio is the cost of the FUSE hop alone. fio 4k random reads (iodepth 16) and 64k sequential
reads (iodepth 4), O_DIRECT on the loop device, alternating plain / faulty each round.

    .venv/bin/python bench/faulty_overhead.py [--rounds 2] [--seconds 10] [--quick]   (root)

`--quick`: one round of 1 s on 64 MiB devices, the same code path, to show the benchmark still
runs; its figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from assay.platforms import faulty

SIZE = 512 << 20  # each device
TESTS = {"4k randread": ["--rw=randread", "--bs=4k", "--iodepth=16"],
         "64k seqread": ["--rw=read", "--bs=64k", "--iodepth=4"]}


def sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def attached(dev: str) -> bool:
    return bool(subprocess.run(["losetup", "-n", "-O", "BACK-FILE", dev], capture_output=True,
                               text=True, check=False).stdout.strip())


def fio(dev: str, args: list[str], seconds: int) -> tuple[float, float]:
    out = sh("fio", "--name=bench", f"--filename={dev}", "--ioengine=libaio", "--direct=1",
             "--time_based", f"--runtime={seconds}", "--norandommap", "--randrepeat=0",
             "--output-format=json", *args)
    read = json.loads(out)["jobs"][0]["read"]
    return float(read["iops"]), float(read["bw_bytes"]) / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--quick", action="store_true",
                    help="one round of 1 s on 64 MiB: check that the benchmark runs (not judged)")
    a = ap.parse_args()
    size = 64 << 20 if a.quick else SIZE
    if a.quick:
        a.rounds, a.seconds = 1, 1
    root = Path(tempfile.mkdtemp(prefix="assay-bench-faulty-"))
    loops: list[str] = []
    pid, mnt = 0, ""
    sh("mount", "-t", "tmpfs", "-o", f"size={3 * size}", "tmpfs", str(root))
    try:
        (root / "store").mkdir()
        for image in (root / "plain.img", root / "store" / "dev1.img"):
            with open(image, "wb") as fh:
                fh.truncate(size)
        pid, mnt = faulty.start(root)
        plain = sh("losetup", "-f", "--show", str(root / "plain.img"))
        loops.append(plain)
        served = sh("losetup", "-f", "--show", "--direct-io=off", f"{mnt}/dev1.img")
        loops.append(served)
        for dev in loops:  # read back real data, not holes
            sh("fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1m",
               "--direct=1", f"--size={size}", "--ioengine=libaio", "--iodepth=4")
        results: dict[str, dict[str, list[tuple[float, float]]]] = {
            t: {"plain": [], "faulty": []} for t in TESTS}
        for r in range(a.rounds):
            for test, args in TESTS.items():
                for name, dev in (("plain", plain), ("faulty", served)):
                    iops, mbs = fio(dev, args, a.seconds)
                    results[test][name].append((iops, mbs))
                    print(f"round {r + 1} {test:12} {name:6} {iops:10.0f} IOPS "
                          f"{mbs:8.1f} MB/s", flush=True)
        print()
        for test, by in results.items():
            p = statistics.median(x[0] for x in by["plain"])
            f = statistics.median(x[0] for x in by["faulty"])
            pm = statistics.median(x[1] for x in by["plain"])
            fm = statistics.median(x[1] for x in by["faulty"])
            print(f"{test:12} plain {p:9.0f} IOPS {pm:7.1f} MB/s | faulty {f:8.0f} IOPS "
                  f"{fm:7.1f} MB/s")
            print(f"ratio faulty/plain {test}: {f / p:.3f}"
                  + (" (quick: not judged)" if a.quick else ""))
    finally:
        for dev in loops:
            subprocess.run(["losetup", "-d", dev], capture_output=True, check=False)
        faulty.wait_detached(loops, attached)
        faulty.stop(pid, mnt)
        subprocess.run(["umount", str(root)], capture_output=True, check=False)
        root.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
