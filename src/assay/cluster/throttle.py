"""blkio throttling on a cluster run's hosts: each host's fio runs in a cgroup v1 blkio group
there, as a local fio does here (hosts/cgroup.py), so `target.throttle` and the `throttle`
action cap the load's IO on every host.

    blkio = HostsBlkio.open(plan, run_id, group.runners, group.lost)  # before any IO
    blkio.limit("target", read_iops=400)           # every active host, now

A host's group is `assay/<run id>.<host>` under its blkio root (`/sys/fs/cgroup/blkio`, or
the inventory's `assay_blkio_root`): unique per run and per host, since hosts that share a
kernel (the lab's network namespaces) share their cgroups too. A device is a node as the host
sees it, or `target`: the block device that holds the host's target directory (a partition's
whole disk: blkio throttles disks). A host with no writable blkio v1, or without the device,
is refused before any IO, naming the host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.actions.throttle import Params, on_devices
from assay.exitcodes import UserError
from assay.hosts.cgroup import LIMIT_FILES, BlkioGroup
from assay.plan import Plan
from assay.runners.base import CommandResult, Runner

ROOT = "/sys/fs/cgroup/blkio"
TARGET = "target"  # the device under the host's target directory
SAFE = re.compile(r"[^A-Za-z0-9_.-]")
# $1 the blkio root, $2 the group, $3 the host's target, then the devices: checks blkio v1,
# makes the group, prints "device major:minor" per device (a partition's disk)
OPEN = (
    'r=$1; g=$2; t=$3; shift 3; '
    '[ -e "$r/blkio.throttle.read_iops_device" ] || { echo "no cgroup v1 blkio at $r" >&2; '
    'exit 3; }; [ -w "$r" ] || { echo "$r is not writable (not root)" >&2; exit 3; }; '
    'for d; do if [ "$d" = target ] && [ -b "$t" ]; then x=$(stat -L -c %t:%T -- "$t"); '
    'n=$((0x${x%:*})):$((0x${x#*:})); elif [ "$d" = target ]; then p=$t; '
    'while [ ! -e "$p" ]; do p=$(dirname -- "$p"); done; '
    'n=$(findmnt -n -o MAJ:MIN -T "$p" | tr -d " ") || n=""; '
    'else [ -b "$d" ] || { echo "$d is not a block device there" >&2; exit 4; }; '
    'x=$(stat -L -c %t:%T -- "$d"); n=$((0x${x%:*})):$((0x${x#*:})); fi; '
    'case $n in ""|0:*) echo "the target $t is on no block device of its own (major 0): name '
    'the device in throttle" >&2; exit 4;; esac; '
    'if [ -e "/sys/dev/block/$n/partition" ]; then n=$(cat "/sys/dev/block/$n/../dev"); fi; '
    'echo "$d $n"; done; mkdir -p -- "$r/$g" || exit 3'
)
# $1 the group's directory, then file value pairs
WRITE = 'g=$1; shift; while [ $# -ge 2 ]; do echo "$2" > "$g/$1" || exit 3; shift 2; done'
READ = 'for f in ' + " ".join(LIMIT_FILES.values()) + '; do echo "$f $(tr "\\n" , < "$1/$f")"; done'
# $1 the blkio root, $2 the group: its processes back to the root, then the group goes
REMOVE = ('r=$1; g=$r/$2; [ -d "$g" ] || exit 0; for p in $(cat "$g/cgroup.procs"); do '
          'echo "$p" > "$r/cgroup.procs" 2>/dev/null; done; rmdir -- "$g"; '
          'rmdir -- "$(dirname -- "$g")" 2>/dev/null; :')
_KEYS = {f: k for k, f in LIMIT_FILES.items()}


def needed(plan: Plan) -> bool:
    """Does the run throttle at all: `target.throttle`, or a `throttle` step on devices
    (Ceph's recovery limits are the platform's own)."""
    return bool(plan.scenario.target.throttle) or bool(on_devices(plan.resolved.steps))


@dataclass
class HostGroup:
    """One host's blkio group."""

    host: str
    runner: Runner
    root: str
    name: str
    devices: dict[str, str] = field(default_factory=dict)  # as asked -> major:minor there

    @property
    def path(self) -> str:
        return f"{self.root}/{self.name}"

    def sh(self, script: str, *args: str) -> CommandResult:
        return self.runner.run(["sh", "-c", script, "assay-blkio", *args])


class HostsBlkio(BlkioGroup):
    """The run's blkio groups, one per host: a BlkioGroup whose `limit` acts on every host
    still active (a lost host is not asked)."""

    per_host = True

    def __init__(self, name: str, hosts: dict[str, HostGroup], lost: Mapping[str, Any]):
        super().__init__(name)
        self.hosts = hosts
        self.lost = lost

    @classmethod
    def open(cls, plan: Plan, run_id: str, runners: Mapping[str, Runner],
             lost: Mapping[str, Any]) -> HostsBlkio | None:
        """Each host checked and its group made, with `target.throttle` in force (UserError
        naming every host that cannot); None when the run throttles nothing."""
        if not needed(plan) or plan.cluster is None:
            return None
        asked = list(dict.fromkeys([*(t.device for t in plan.scenario.target.throttle),
                                    *map(step_device, on_devices(plan.resolved.steps))]))
        hosts = {}
        for h, hp in plan.cluster.hosts.items():
            root = str(hp.host.vars.get("assay_blkio_root") or ROOT).rstrip("/")
            hosts[h] = HostGroup(h, runners[h], root,
                                 f"assay/{SAFE.sub('_', run_id)}.{SAFE.sub('_', h)}")
        blkio = cls(f"assay/{run_id}", hosts, lost)
        problems = [p for p in blkio._each(lambda g: _open(g, hp_target(plan, g.host), asked))
                    if p]
        if problems:
            blkio.remove()
            raise UserError("; ".join(problems) if len(problems) == 1 else
                            f"{len(problems)} hosts cannot throttle:\n  " + "\n  ".join(problems))
        for t in plan.scenario.target.throttle:
            blkio.limit(t.device, read_iops=t.read_iops, write_iops=t.write_iops,
                        read_bps=t.read_bps, write_bps=t.write_bps)
        return blkio

    def procs(self) -> dict[str, str]:
        """Each host's `cgroup.procs`, where its fio is put before it execs."""
        return {h: f"{g.path}/cgroup.procs" for h, g in self.hosts.items()}

    @property
    def path(self) -> Path:
        return Path(ROOT) / self.name  # not one path: each host has its own (procs())

    def create(self) -> HostsBlkio:
        return self

    def join(self, pid: int | None = None) -> None:
        raise NotImplementedError("a host's fio joins its group there (procs())")

    def limit(self, device: str, *, read_iops: int = 0, write_iops: int = 0, read_bps: int = 0,
              write_bps: int = 0) -> None:
        """Set the caps on `device` (a node, or `target`) on every active host; 0 removes
        that cap. ValueError naming the hosts that could not."""
        caps = {"read_iops": read_iops, "write_iops": write_iops, "read_bps": read_bps,
                "write_bps": write_bps}

        def one(g: HostGroup) -> str | None:
            numbers = g.devices.get(device)
            if numbers is None:
                return f"{g.host}: {device} was not checked there before the run"
            pairs = [x for k, v in caps.items() for x in (LIMIT_FILES[k], f"{numbers} {int(v)}")]
            r = g.sh(WRITE, g.path, *pairs)
            return None if r.returncode == 0 else f"{g.host}: {_last(r.stderr)}"

        bad = [p for p in self._each(one, active=True) if p]
        if bad:
            raise ValueError("; ".join(bad))

    def limits(self) -> dict[str, str]:
        """Not one host's: see per_host_limits()."""
        raise NotImplementedError("per host: per_host_limits()")

    def per_host_limits(self) -> dict[str, dict[str, str]]:
        """The caps in force on each active host, as hosts/cgroup.py records them locally,
        e.g. {"n1": {"read_iops": "7:3 400"}}."""
        out: dict[str, dict[str, str]] = {}

        def one(g: HostGroup) -> None:
            r = g.sh(READ, g.path)
            caps = {}
            for line in r.stdout.splitlines():
                f, _, value = line.partition(" ")
                if f in _KEYS and value.strip(", "):
                    caps[_KEYS[f]] = value.strip(", ").replace(",", "; ")
            out[g.host] = caps

        self._each(one, active=True)
        return {h: out[h] for h in self.hosts if h in out}

    def remove(self) -> None:
        """Every host's group goes (a lost host is not asked)."""
        self._each(lambda g: g.sh(REMOVE, g.root, g.name) and None, active=True)

    def _each(self, fn: Any, active: bool = False) -> list[Any]:
        todo = [g for h, g in self.hosts.items() if not (active and h in self.lost)]
        if not todo:
            return []
        with ThreadPoolExecutor(max_workers=min(16, len(todo))) as pool:
            return list(pool.map(fn, todo))


def step_device(step: Params) -> str:
    """A `throttle` step's device on a host: a node as given, else (none, or an index into
    the platform's devices) the device under the host's target."""
    device = step.device
    return device if isinstance(device, str) and not device.isdigit() else TARGET


def hp_target(plan: Plan, host: str) -> str:
    assert plan.cluster is not None
    return str(plan.cluster.hosts[host].host.target or "/")


def _open(g: HostGroup, target: str, asked: list[str]) -> str | None:
    r = g.sh(OPEN, g.root, g.name, target, *asked)
    if r.returncode != 0:
        return f"{g.host}: cannot throttle there: {_last(r.stderr)}"
    for line in r.stdout.splitlines():
        device, _, numbers = line.rpartition(" ")
        if device:
            g.devices[device] = numbers
    return None


def _last(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"
