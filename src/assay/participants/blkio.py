"""blkio throttling, one path for one host or many: each host's fio runs in a cgroup v1
blkio group there, so `target.throttle` and the `throttle` action cap the load's IO on every
host. A local run is a run of one host, `local`, reached through its runner as a remote host
is through SSH.

    blkio = BlkioGroups.open(plan, run_id, runners, lost, targets, roots)  # before any IO
    blkio.limit("target", read_iops=400)           # every active host, now
    blkio.in_force()                               # {"n1": {"read_iops": "7:0 400"}, ...}

A host's group is `assay/<run id>.<host>` under its blkio root (`/sys/fs/cgroup/blkio`, or
the inventory's `assay_blkio_root`): unique per run and per host, since hosts that share a
kernel (the lab's network namespaces) share their cgroups too. A device is a node as the host
sees it, or `target`: the block device that holds the host's target (a partition's whole
disk: blkio throttles disks). Every device the run will cap is checked when the groups are
made; a host with no writable blkio v1, or without the device, is refused before any IO,
naming the host.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from assay.actions.device import pick
from assay.actions.throttle import on_devices
from assay.exitcodes import UserError
from assay.hosts.cgroup import LIMIT_FILES, group_name
from assay.plan import Plan
from assay.platforms.fsbase import ActionFailed
from assay.runners.base import CommandResult, Runner

TARGET = "target"  # the device under the host's target
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
Caps = dict[str, int]


def needed(plan: Plan) -> bool:
    """Does the run throttle at all: `target.throttle`, or a `throttle` step on devices
    (Ceph's recovery limits are the platform's own)."""
    return bool(plan.scenario.target.throttle) or bool(on_devices(plan.resolved.steps))


def step_device(asked: str | int | None, devices: Sequence[str]) -> str:
    """A `throttle` step's device: a node as given; an index into the platform's `devices`
    when it lists some (1 when none is given); else the device under each host's target."""
    if isinstance(asked, str) and not asked.isdigit():
        return asked
    if not devices:
        return TARGET
    try:
        return pick(list(devices), asked if asked is not None else 1, "device")
    except ActionFailed as e:
        raise ValueError(str(e)) from None


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


class BlkioGroups:
    """The run's blkio groups, one per host: `limit` acts on every host still active (a lost
    host is not asked)."""

    def __init__(self, hosts: dict[str, HostGroup], lost: Collection[str],
                 devices: Sequence[str] = ()):
        self.hosts = hosts
        self.lost = lost
        self.devices = list(devices)  # the platform's, that a step's index picks from

    @classmethod
    def open(cls, plan: Plan, run_id: str, runners: Mapping[str, Runner], lost: Collection[str],
             targets: Mapping[str, str], roots: Mapping[str, str],
             devices: Sequence[str] = ()) -> BlkioGroups | None:
        """Each host in `runners` checked and its group made under its root, with
        `target.throttle` in force (UserError naming every host that cannot); None when the
        run throttles nothing."""
        if not needed(plan):
            return None
        try:
            asked = list(dict.fromkeys([*(t.device for t in plan.scenario.target.throttle),
                                        *(step_device(s.device, devices)
                                          for s in on_devices(plan.resolved.steps))]))
        except ValueError as e:
            raise UserError(f"throttle: {e}") from None
        blkio = cls({h: HostGroup(h, r, roots[h].rstrip("/"), group_name(run_id, h))
                     for h, r in runners.items()}, lost, devices)
        blkio.check(targets, asked)
        try:
            for t in plan.scenario.target.throttle:
                blkio.limit(t.device, read_iops=t.read_iops, write_iops=t.write_iops,
                            read_bps=t.read_bps, write_bps=t.write_bps)
        except ValueError as e:
            blkio.remove()
            raise UserError(f"cannot throttle: {e}") from None
        return blkio

    def check(self, targets: Mapping[str, str], asked: Sequence[str]) -> None:
        """Each host's group made, and each of the `asked` devices found there (`target`: the
        one under the host's entry in `targets`); else no group is left and UserError names
        every host that cannot."""
        problems = [p for p in self._each(lambda g: _open(g, targets[g.host], asked)) if p]
        if problems:
            self.remove()
            raise UserError("; ".join(problems) if len(problems) == 1 else
                            f"{len(problems)} hosts cannot throttle:\n  " + "\n  ".join(problems))

    def device(self, asked: str | int | None) -> str:
        """What a `throttle` step caps (step_device); ValueError for an index out of range."""
        return step_device(asked, self.devices)

    def procs(self) -> dict[str, str]:
        """Each host's `cgroup.procs`, where its fio is put before it execs (and a database's
        server before its load starts)."""
        return {h: f"{g.path}/cgroup.procs" for h, g in self.hosts.items()}

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

    def in_force(self) -> dict[str, dict[str, str]]:
        """The caps in force on each active host, as it reports them, e.g.
        {"n1": {"read_iops": "7:3 400"}}; kinds without a cap are left out."""
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

    def _each(self, fn: Callable[[HostGroup], Any], active: bool = False) -> list[Any]:
        todo = [g for h, g in self.hosts.items() if not (active and h in self.lost)]
        if len(todo) == 1:  # a local run: no thread
            return [fn(todo[0])]
        if not todo:
            return []
        with ThreadPoolExecutor(max_workers=min(16, len(todo))) as pool:
            return list(pool.map(fn, todo))


def _open(g: HostGroup, target: str, asked: Sequence[str]) -> str | None:
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
