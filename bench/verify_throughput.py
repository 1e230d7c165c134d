#!/usr/bin/env python3
"""Benchmark: assay's verify pass against fio's own verify, over the same amount of data on the
same filesystem, side by side.

Two files of one size: fio writes one with `verify=crc32c` (a header and a CRC32C per 8 KiB,
fio's `verify_interval`), assay's integrity writer the other (its 8 KiB blocks: header,
generation, writer, CRC-32). Each round drops the page cache, then fio reads its file back with
`verify_only` (4 MiB O_DIRECT reads, libaio iodepth 2) and assay runs its verify pass (2 MiB
O_DIRECT reads, 4 in flight). The ratio is assay's MB/s over fio's; the goal is >= 0.90.

By default the files live on XFS on a loop device over a tmpfs file: storage at memory speed,
so the ratio is the cost of checking (fio: SSE4.2 CRC32C in C; assay: zlib CRC-32 from
Python), the worst case for assay. `--dir` runs on an existing filesystem instead.

    .venv/bin/python bench/verify_throughput.py [--size 1GiB] [--rounds 3] [--dir PATH] [--quick]
                                                                                      (root)

`--quick`: one round over 64 MiB, the same code path, to show the benchmark still runs; its
figures are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from array import array
from pathlib import Path

from assay.integrity.area import Area
from assay.integrity.journal import Journal
from assay.integrity.verify import run_pass
from assay.integrity.writer import Writer
from assay.scenario.units import parse_size

BLOCK = 8192


def sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def drop_caches() -> None:
    sh("sync")
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def fio_args(path: Path, size: int) -> list[str]:
    return ["fio", "--name=verify", f"--filename={path}", f"--size={size}", "--rw=write",
            "--bs=4m", f"--verify_interval={BLOCK}", "--verify=crc32c", "--direct=1",
            "--ioengine=libaio", "--iodepth=2", "--verify_state_save=0",
            "--output-format=json"]


def fio_verify(path: Path, size: int) -> float:
    """fio's own figure: bytes verified over its IO time (its start-up is not counted, which
    favours fio; assay's figure below counts from its open to its last check)."""
    job = json.loads(sh(*fio_args(path, size), "--verify_only=1"))["jobs"][0]
    if job.get("error") or job["read"]["io_bytes"] != size:
        raise SystemExit(f"fio verify failed: {job.get('error')}, {job['read']['io_bytes']}")
    return float(job["read"]["bw_bytes"]) / 1e6


def assay_verify(area: Area, gens: array[int]) -> float:
    r = run_pass([area], {area.workload: gens}, True, "bench")
    if r["ok"] != area.blocks:
        raise SystemExit(f"assay verify found problems: {r}")
    return size_mb(area) / r["seconds"]


def size_mb(area: Area) -> float:
    return area.size / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1GiB")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="an existing filesystem to use")
    ap.add_argument("--quick", action="store_true",
                    help="one round over 64 MiB: check that the benchmark runs (not judged)")
    a = ap.parse_args()
    if a.quick:
        a.size, a.rounds = "64MiB", 1
    size = parse_size(a.size)
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-verify-"))
    loop, mounted = "", []
    try:
        if a.dir is None:
            sh("mount", "-t", "tmpfs", "-o", f"size={2 * size + (512 << 20)}", "tmpfs", str(tmp))
            mounted.append(tmp)
            image = tmp / "xfs.img"
            with open(image, "wb") as fh:
                fh.truncate(2 * size + (256 << 20))
            loop = sh("losetup", "-f", "--show", "--direct-io=on", str(image))
            sh("mkfs.xfs", "-q", "-f", loop)
            work = tmp / "mnt"
            work.mkdir()
            sh("mount", loop, str(work))
            mounted.insert(0, work)
        else:
            work = Path(tempfile.mkdtemp(prefix="assay-bench-verify-", dir=a.dir))
        sh(*fio_args(work / "fio.dat", size), "--do_verify=0")
        area = Area("bench", work / "assay.dat", BLOCK, size // BLOCK, 12345)
        journal = Journal.create(tmp / "journal" if a.dir is None else work, "bench",
                                 area.blocks)
        writer = Writer(area, journal, 1.0, True, 1)
        writer.prefill()
        fs = sh("findmnt", "-no", "FSTYPE", "-T", str(work))
        print(f"{size >> 20} MiB each on {fs} ({'loop over tmpfs' if a.dir is None else work}),"
              f" {BLOCK // 1024} KiB blocks, O_DIRECT", flush=True)
        fio_rates, assay_rates = [], []
        for r in range(a.rounds):
            drop_caches()
            fio_rates.append(fio_verify(work / "fio.dat", size))
            drop_caches()
            assay_rates.append(assay_verify(area, journal.gens))
            print(f"round {r + 1}: fio verify {fio_rates[-1]:8.1f} MB/s | assay verify "
                  f"{assay_rates[-1]:8.1f} MB/s | assay/fio {assay_rates[-1] / fio_rates[-1]:.3f}",
                  flush=True)
        f, m = statistics.median(fio_rates), statistics.median(assay_rates)
        print(f"\nmedian: fio verify {f:.1f} MB/s | assay verify {m:.1f} MB/s")
        print(f"ratio assay/fio verify {m / f:.3f} (goal >= 0.90"
              + ("; quick: not judged)" if a.quick else ")"))
    finally:
        for p in mounted:  # the XFS, its loop device, then the tmpfs under it
            subprocess.run(["umount", str(p)], capture_output=True, check=False)
            if p != tmp and loop:
                subprocess.run(["losetup", "-d", loop], capture_output=True, check=False)
        if a.dir is not None:
            subprocess.run(["rm", "-rf", str(work)], check=False)
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
