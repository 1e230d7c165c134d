"""cgroup v1 blkio: where the groups are and what they are called (participants/blkio.py
makes them on each host, this one included).

The blkio throttle limits IO that processes *in the group* submit to a device, so fio must be
in the group before it forks its jobs; FioProcess puts the child in the group before exec.
A throttled loop device gives a platform of known capacity for tests and benchmarks, and the
`throttle` action slows a device for a window during a run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from assay.hosts.result import CommandResult

SAFE = re.compile(r"[^A-Za-z0-9_.-]")
ROOT = "/sys/fs/cgroup/blkio"  # a host's, unless its inventory names `assay_blkio_root`
BLKIO_ROOT = Path(os.environ.get("ASSAY_BLKIO_ROOT", ROOT))  # this machine's
# $1 the blkio root, then the groups: each one that exists and is empty goes, named (rmdir
# refuses a group that still holds a process). `assay/` stays: a run starting meanwhile
# makes its group in it
EMPTY_GROUPS = ('r=$1; shift; for g; do [ -d "$r/$g" ] && rmdir -- "$r/$g" 2>/dev/null && '
                'echo "$g"; done; :')
LIMIT_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}


def available() -> bool:
    """cgroup v1 blkio is mounted and writable (root)."""
    return (BLKIO_ROOT / LIMIT_FILES["read_iops"]).exists() and os.access(BLKIO_ROOT, os.W_OK)


def group_name(run_id: str, host: str) -> str:
    """A run's blkio group on a host, under the blkio root: unique per run and per host, since
    hosts that share a kernel (the lab's network namespaces) share their cgroups too."""
    return f"assay/{SAFE.sub('_', run_id)}.{SAFE.sub('_', host)}"


def remove_empty(run: Callable[[Sequence[str]], CommandResult], root: str,
                 names: Sequence[str]) -> list[str]:
    """Crashed runs' groups removed on a host (`run`: a command there), the empty ones only:
    the names of those that were there and are gone."""
    r = run(["sh", "-c", EMPTY_GROUPS, "assay-clean", root, *names])
    return [g for g in r.stdout.split() if g in names]
