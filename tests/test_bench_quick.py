"""Benchmarks cannot rot: every script in bench/ runs its `--quick` mode (seconds, tiny sizes,
the same code path as the full benchmark) and must end 0 and print its ratio line, a line
starting with `ratio `. The figures are not judged here: a loaded machine moves them.

Each bench states what it needs of the machine; a test skips, saying why, where it lacks it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.hosts import cgroup
from tests.sshlab import SKIP as NETNS_SKIP

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
RATIO = re.compile(r"^ratio .*\d", re.MULTILINE)

pytestmark = [pytest.mark.slow, pytest.mark.bench]  # `pytest -m bench`: only these


def _postgres() -> bool:
    from assay.postgres.cluster import bindir
    try:
        bindir()
    except UserError:
        return False
    return True


def _fuse() -> bool:
    return Path("/dev/fuse").exists() and importlib.util.find_spec("mfusepy") is not None


# what each bench needs: (why it would skip, whether the machine has it)
NEEDS: dict[str, tuple[str, Callable[[], bool]]] = {
    "fio": ("fio is not installed", lambda: shutil.which("fio") is not None),
    "root": ("needs root (loop devices, mounts)", lambda: os.geteuid() == 0),
    "xfs": ("mkfs.xfs is not installed", lambda: shutil.which("mkfs.xfs") is not None),
    "netns": (NETNS_SKIP or "", lambda: NETNS_SKIP is None),
    "sshd": ("sshd is not installed (Debian `openssh-server`)",
             lambda: shutil.which("sshd") is not None or Path("/usr/sbin/sshd").exists()),
    "blkio": ("needs cgroup v1 blkio (root, mounted)", cgroup.available),
    "postgres": ("needs PostgreSQL (Debian `postgresql`)", _postgres),
    "fuse": ("needs FUSE (/dev/fuse) and mfusepy", _fuse),
}

BENCHES: dict[str, tuple[str, ...]] = {
    "cluster_throughput": ("fio", "netns", "sshd"),
    "controller_scale": (),
    "faulty_overhead": ("fio", "root", "fuse"),
    "four_corners_randread": ("fio",),
    "integrity_cost": ("fio",),
    "long_run": (),
    "pgbench_overhead": ("root", "xfs", "postgres"),
    "plan_scale": ("fio",),
    "report_24h": (),
    "search_cap": ("fio", "root", "xfs", "blkio"),
    "start_skew": ("fio", "netns", "sshd"),
    "verify_throughput": ("fio", "root", "xfs"),
}


def bench(name: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / f"{name}.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_every_bench_has_its_quick_test() -> None:
    assert sorted(p.stem for p in BENCH.glob("*.py")) == sorted(BENCHES)


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_bench_help_offers_quick(name: str) -> None:
    proc = bench(name, "--help", timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--quick" in proc.stdout


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_bench_quick_runs_and_prints_its_ratio(name: str) -> None:
    for need in BENCHES[name]:
        why, present = NEEDS[need]
        if not present():
            pytest.skip(why)
    proc = bench(name, "--quick", timeout=240)
    tail = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, tail
    assert RATIO.search(proc.stdout), tail
