"""Lab platforms: real btrfs / XFS filesystems on loop devices, to try a scenario anywhere.

    assay lab create NAME --kind btrfs-raid1 --devices 3 --size 1GiB [--throttle-iops 500]

A lab is a directory under the lab root ($ASSAY_LAB_DIR, default /var/lib/assay/labs):

    <root>/<name>/state.json    kind, loop devices, images, mount point, caps (this module)
    <root>/<name>/dev1.img ...  sparse backing files
    <root>/<name>/mnt           the mounted filesystem; runs use <mnt>/data
    <root>/<name>/store, fuse   a faulty lab's backing files and its fault server's mount
                                (the loop devices sit on fuse/devN.img; platforms/faulty.py)

state.json is written before each step that creates something, so `destroy` can always undo
a half-made lab. Only what a lab's state names is ever unmounted, detached or deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.platforms import faulty as faults
from assay.scenario.models import Target, Throttle

KINDS = {
    "btrfs": "btrfs on one device: subvolume snapshots, compression",
    "btrfs-raid1": "btrfs raid1 (data and metadata) over N devices plus spares: device "
                   "remove / add / replace, scrub, balance",
    "xfs": "XFS on one device, reflink=1: reflink copies as snapshots",
}
PLATFORM = {"btrfs": "btrfs", "btrfs-raid1": "btrfs", "xfs": "xfs"}
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
MIN_BTRFS_RAID1 = 300 << 20  # below this per device, btrfs raid1 runs out of chunk space


def lab_root() -> Path:
    return Path(os.environ.get("ASSAY_LAB_DIR") or "/var/lib/assay/labs")


@dataclass
class Lab:
    name: str
    kind: str
    root: str  # the lab's directory
    size: int  # bytes per device
    images: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)  # loop devices holding the filesystem
    spares: list[str] = field(default_factory=list)  # loop devices for add / replace
    mountpoint: str = ""
    mounted: bool = False
    throttle_iops: int = 0  # a cap on each device for runs on this lab (known capacity)
    faulty: bool = False  # devices served through the fault server (device fail/slow/...)
    served: list[str] = field(default_factory=list)  # faulty: the FUSE files the loops use
    fuse_pid: int = 0
    fuse_mount: str = ""
    status: str = "creating"
    created: float = field(default_factory=time.time)

    @property
    def platform(self) -> str:
        return PLATFORM[self.kind]

    @property
    def data_path(self) -> str:
        return str(Path(self.mountpoint) / "data")

    def save(self) -> None:
        d = Path(self.root)
        tmp = d / ".state.json.tmp"
        tmp.write_text(json.dumps({"schema_version": 1, **asdict(self)}, indent=2) + "\n",
                       encoding="utf-8")
        tmp.replace(d / "state.json")

    def target(self) -> dict[str, Any]:
        """The scenario `target` that runs on this lab."""
        caps = [{"device": d, "read_iops": self.throttle_iops, "write_iops": self.throttle_iops}
                for d in self.devices + self.spares] if self.throttle_iops else []
        options: dict[str, Any] = {"devices": self.devices + self.spares,
                                   "spares": self.spares, "lab": self.name}
        if self.faulty:
            options["faulty"] = self.fault_control()
        return {"platform": self.platform, "path": self.data_path, "options": options,
                "throttle": caps}

    def fault_control(self) -> dict[str, Any]:
        """The control file and loop device → served member name (target.options.faulty)."""
        return {"control": str(Path(self.fuse_mount) / "control"),
                "members": {loop: Path(f).name for loop, f in
                            zip(self.devices + self.spares, self.served, strict=False)}}

    def snippet(self) -> str:
        t = self.target()
        lines = ["target:", f"  platform: {t['platform']}", f"  path: {t['path']}",
                 "  options:", f"    devices: [{', '.join(t['options']['devices'])}]",
                 f"    spares: [{', '.join(t['options']['spares'])}]"]
        if self.faulty:
            f = t["options"]["faulty"]
            lines.append(f"    faulty: {{control: {f['control']}, members: {{"
                         + ", ".join(f"{k}: {v}" for k, v in f["members"].items()) + "}}")
        if t["throttle"]:
            lines.append("  throttle:")
            lines += [f"    - {{device: {c['device']}, read_iops: {c['read_iops']}, "
                      f"write_iops: {c['write_iops']}}}" for c in t["throttle"]]
        return "\n".join(lines)


def _sh(argv: list[str], what: str) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise UserError(f"{what} failed: `{' '.join(argv)}`: "
                        f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    return proc.stdout.strip()


def load(name: str, root: Path | None = None) -> Lab:
    path = (root or lab_root()) / name / "state.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        base = root or lab_root()  # lab clusters too (cluster.json): "none" only when none
        known = ", ".join(sorted([lab.name for lab in list_labs(root)] + (
            [d.name for d in base.iterdir() if (d / "cluster.json").exists()]
            if base.is_dir() else []))) or "none"
        raise UserError(f"no lab {name!r} in {root or lab_root()} (labs: {known}; "
                        f"`assay lab create`)") from None
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path}: {e}") from None
    data.pop("schema_version", None)
    return Lab(**data)


def list_labs(root: Path | None = None) -> list[Lab]:
    base = root or lab_root()
    if not base.is_dir():
        return []
    out = []
    for d in sorted(base.iterdir()):
        if (d / "state.json").exists():
            try:
                out.append(load(d.name, base))
            except UserError:
                continue
    return out


def create(name: str, kind: str, devices: int, size: int, spares: int | None = None,
           throttle_iops: int = 0, root: Path | None = None, faulty: bool = False) -> Lab:
    """Make, mount and record a lab; on any failure, undo what was made."""
    if kind not in KINDS:
        raise UserError(f"lab kind {kind!r}: choose one of {', '.join(KINDS)}")
    if not NAME.match(name):
        raise UserError(f"lab name {name!r}: lower-case letters, digits, - and _ (max 40)")
    if os.geteuid() != 0:
        raise UserError("a lab needs root: it makes loop devices and mounts filesystems")
    fs = "btrfs" if kind.startswith("btrfs") else "xfs"
    if shutil.which(f"mkfs.{fs}") is None:
        raise UserError(f"mkfs.{fs} is not installed (Debian: "
                        f"{'btrfs-progs' if fs == 'btrfs' else 'xfsprogs'})")
    if kind == "btrfs-raid1":
        if devices < 2:
            raise UserError("btrfs-raid1 needs --devices 2 or more")
        if size < MIN_BTRFS_RAID1:
            raise UserError("btrfs-raid1 needs --size 300MiB or more per device")
    elif devices != 1:
        raise UserError(f"a {kind} lab has one device; use btrfs-raid1 for several")
    spares = (1 if kind == "btrfs-raid1" else 0) if spares is None else spares
    base = root or lab_root()
    d = base / name
    if (d / "state.json").exists():
        raise UserError(f"lab {name!r} already exists ({d}); `assay lab destroy {name}` first")
    d.mkdir(parents=True, exist_ok=True)
    lab = Lab(name=name, kind=kind, root=str(d), size=size, mountpoint=str(d / "mnt"),
              throttle_iops=throttle_iops, faulty=faulty)
    lab.save()
    try:
        if faulty:
            (d / "store").mkdir(exist_ok=True)
        for i in range(devices + spares):
            image = d / ("store" if faulty else "") / f"dev{i + 1}.img"
            with open(image, "wb") as fh:
                fh.truncate(size)
            lab.images.append(str(image))
            lab.save()
        if faulty:
            lab.fuse_mount = str(d / "fuse")
            lab.save()
            lab.fuse_pid, _ = faults.start(d)
            lab.served = [str(Path(lab.fuse_mount) / Path(i).name) for i in lab.images]
            lab.save()
        for i, served in enumerate(lab.served or lab.images):
            loop = _attach(Path(served), direct=not faulty)
            (lab.devices if i < devices else lab.spares).append(loop)
            lab.save()
        if kind == "btrfs-raid1":
            _sh(["mkfs.btrfs", "-f", "-d", "raid1", "-m", "raid1", *lab.devices], "mkfs.btrfs")
        elif kind == "btrfs":
            _sh(["mkfs.btrfs", "-f", *lab.devices], "mkfs.btrfs")
        else:
            _sh(["mkfs.xfs", "-f", "-m", "reflink=1", *lab.devices], "mkfs.xfs")
        Path(lab.mountpoint).mkdir(exist_ok=True)
        _sh(["mount", lab.devices[0], lab.mountpoint], "mount")
        lab.mounted = True
        lab.status = "ready"
        lab.save()
    except BaseException:
        destroy(lab)
        raise
    return lab


def _attach(image: Path, direct: bool = True) -> str:
    """A loop device for `image`; direct IO so the page cache does not hold data twice (not
    over FUSE: the fault server opens its files in direct_io mode, so nothing is cached)."""
    for extra in ([f"--direct-io={'on' if direct else 'off'}"], []):
        proc = subprocess.run(["losetup", "-f", "--show", *extra, str(image)],
                              capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            return proc.stdout.strip()
    raise UserError(f"losetup failed for {image}: {proc.stderr.strip()}")


def destroy(lab: Lab) -> list[str]:
    """Unmount, detach and delete exactly what the lab's state names; what was done."""
    done: list[str] = []
    mnt = Path(lab.mountpoint)
    if lab.mountpoint and _is_mounted(mnt):
        if subprocess.run(["umount", str(mnt)], capture_output=True, check=False).returncode:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)
        done.append(f"unmounted {mnt}")
    files = lab.images + lab.served
    for loop in lab.devices + lab.spares:
        if _backs(loop, files):
            subprocess.run(["losetup", "-d", loop], capture_output=True, check=False)
            done.append(f"detached {loop}")
    if lab.faulty:
        # the loops must be gone before the server: a loop over a vanished FUSE file fails
        left = faults.wait_detached(lab.devices + lab.spares, lambda lp: _backs(lp, files))
        done += [f"{lp} is still attached (in use?)" for lp in left]
        done += faults.stop(lab.fuse_pid, lab.fuse_mount)
    for image in lab.images:
        Path(image).unlink(missing_ok=True)
    root = Path(lab.root)
    for leftover in ("state.json", ".state.json.tmp", faults.LOG):
        (root / leftover).unlink(missing_ok=True)
    for p in (mnt, root / "store", root):
        with contextlib.suppress(OSError):
            p.rmdir()
    done.append(f"removed {root}")
    return done


def _is_mounted(path: Path) -> bool:
    with open("/proc/mounts", encoding="utf-8") as fh:
        return any(line.split()[1] == str(path) for line in fh)


def _backs(loop: str, images: list[str]) -> bool:
    """Is `loop` still attached to one of this lab's images (never detach someone else's)?"""
    out = subprocess.run(["losetup", "-n", "-O", "BACK-FILE", loop], capture_output=True,
                         text=True, check=False).stdout.strip()
    return bool(out) and any(out.split(" (")[0] == str(Path(i).resolve()) or out == i
                             for i in images)


def usage(lab: Lab) -> str:
    try:
        st = os.statvfs(lab.mountpoint)
    except OSError:
        return "-"
    total, free = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
    return f"{(total - free) / max(total, 1) * 100:.0f}%"


def apply(target: Target, lab: Lab) -> None:
    """Point a scenario's target at a lab: its platform, path, devices and caps.

    The scenario's own driver options (compression, subvolumes, ...) stay; check the steps
    again afterwards (plan.check_steps), since the platform may have changed.
    """
    if lab.status != "ready":
        raise UserError(f"lab {lab.name!r} is {lab.status}; destroy it and create it again")
    if target.options.get("faulty") and not lab.faulty:
        raise UserError(f"the scenario needs a faulty lab and {lab.name!r} is not one: `assay "
                        f"lab create {lab.kind} --faulty ...`")
    t = lab.target()
    target.platform = t["platform"]
    target.path = t["path"]
    target.device = None
    target.options = {**target.options, **t["options"]}
    target.throttle = [*target.throttle, *(Throttle(**c) for c in t["throttle"])]
