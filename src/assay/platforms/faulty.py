"""Faulty lab devices: loop devices over files served by the lab's fault server (FUSE), and the
`device fail|slow|corrupt|heal` operations that drive it.

    <lab>/store/devN.img   the real backing files (sparse)
    <lab>/fuse/            the fault server's mount: devN.img (served), control
    /dev/loopM             `losetup --direct-io=off <lab>/fuse/devN.img`

The server is one process per lab (`assay.platforms.faultyfs`), started detached so it outlives
`assay lab create`; its pid and mount are in the lab's state. Teardown order matters — the
filesystem, then the loop devices (waiting until they are really gone), then the server — so a
loop device never sits on a vanished FUSE file. If the server no longer answers, its FUSE
connection is aborted, which fails pending IO instead of hanging it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.platforms.errors import ActionFailed

FAULT_OPS = ("fail", "slow", "corrupt", "heal")
CAPABILITIES = frozenset(f"device.{op}" for op in FAULT_OPS)
FSTYPE = "fuse.assay-faulty"
LOG = "faultyfs.log"


def start(root: Path) -> tuple[int, str]:
    """Start the fault server for `<root>/store` on `<root>/fuse`; (pid, mountpoint)."""
    if not Path("/dev/fuse").exists():
        raise UserError("a faulty lab needs FUSE (/dev/fuse; modprobe fuse)")
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as e:  # OSError: libfuse itself is missing
        raise UserError(f"a faulty lab needs mfusepy and libfuse3 (Debian: libfuse3-3): "
                        f"{e}") from None
    store, mnt = root / "store", root / "fuse"
    mnt.mkdir(exist_ok=True)
    with open(root / LOG, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "assay.platforms.faultyfs", str(store),
                                 str(mnt)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
    deadline = time.monotonic() + 15
    while not is_served(mnt):
        if proc.poll() is not None or time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            tail = (root / LOG).read_text(errors="replace").strip()[-400:]
            raise UserError(f"the fault server did not start: {tail or 'no output'}")
        time.sleep(0.05)
    return proc.pid, str(mnt)


def is_served(mnt: Path | str) -> bool:
    with open("/proc/mounts", encoding="utf-8") as fh:
        return any(f"{p[1]} {p[2]}" == f"{mnt} {FSTYPE}" for p in
                   (line.split() for line in fh) if len(p) > 2)


def wait_detached(loops: list[str], backs: Any, seconds: float = 10.0) -> list[str]:
    """Wait until none of `loops` still backs onto a lab file (`backs(loop)`); those left."""
    deadline = time.monotonic() + seconds
    left = [lp for lp in loops if backs(lp)]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [lp for lp in left if backs(lp)]
    return left


def stop(pid: int, mnt: str) -> list[str]:
    """Unmount the server's mount and see its process gone; what was done."""
    done: list[str] = []
    if mnt and is_served(mnt):
        if subprocess.run(["umount", mnt], capture_output=True, check=False).returncode:
            _abort(mnt)
            subprocess.run(["umount", "-l", mnt], capture_output=True, check=False)
        done.append(f"unmounted the fault server at {mnt}")
    if pid and _is_server(pid):
        deadline = time.monotonic() + 5
        while _is_server(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not _is_server(pid):
                break
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            time.sleep(0.5)
        done.append(f"stopped the fault server (pid {pid})")
    with contextlib.suppress(OSError):
        Path(mnt).rmdir()
    return done


def _is_server(pid: int) -> bool:
    """Is `pid` a live fault server (never signal a recycled pid)?"""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return b"assay.platforms.faultyfs" in cmdline and state != "Z"


def _abort(mnt: str) -> None:
    """Abort the FUSE connection of `mnt`: pending and later IO fail instead of waiting."""
    with contextlib.suppress(OSError, StopIteration, ValueError):
        with open("/proc/self/mountinfo", encoding="utf-8") as fh:
            dev = next(p[2] for p in (line.split() for line in fh) if p[4] == mnt)
        minor = dev.split(":")[1]
        Path(f"/sys/fs/fuse/connections/{minor}/abort").write_text("1")


# -- the operations --------------------------------------------------------------------------
def command(op: str, member: str, spec: dict[str, Any]) -> str:
    """The control line for a fault operation on `member` (a served file's name)."""
    if op == "fail":
        return f"fail {member} {spec.get('mode') or 'both'}"
    if op == "slow":
        ms = float(spec["latency"]) * 1000
        return f"slow {member} {ms:g} {spec.get('mode') or 'both'}"
    if op == "corrupt":
        return f"corrupt {member} {int(spec['offset'])} {int(spec['length'])} " \
               f"{spec.get('where') or 'read'}"
    if op == "heal":
        return f"heal {member}"
    raise ActionFailed(f"no fault operation {op!r}")


def send(control: str, line: str) -> None:
    """Hand one command to a lab's fault server."""
    try:
        fd = os.open(control, os.O_WRONLY)
    except OSError as e:
        raise ActionFailed(f"the lab's fault server is not running ({control}: "
                           f"{e.strerror})") from None
    try:
        os.write(fd, (line + "\n").encode())
    except OSError as e:
        why = "it refused the command" if e.errno == errno.EINVAL else e.strerror
        raise ActionFailed(f"fault server: `{line}`: {why}") from None
    finally:
        os.close(fd)


def status(control: str) -> dict[str, Any]:
    import json

    try:
        return dict(json.loads(Path(control).read_text() or "{}"))
    except (OSError, ValueError):
        return {}


def apply(options: dict[str, Any], op: str, device: str, spec: dict[str, Any]) -> str:
    """Carry out fault operation `op` on `device` of a faulty lab (`target.options.faulty`)."""
    faulty = options.get("faulty") or {}
    members: dict[str, str] = faulty.get("members") or {}
    control = str(faulty.get("control") or "")
    if op == "heal" and device == "all":
        send(control, "heal all")
        return "healed every device"
    if device not in members:
        raise ActionFailed(f"{device} is not a faulty lab device ({', '.join(members)})")
    send(control, command(op, members[device], spec))
    what = {"fail": f"fails {spec.get('mode') or 'both'} with EIO",
            "slow": f"answers {float(spec.get('latency') or 0) * 1000:g}ms later",
            "corrupt": f"has bytes {spec.get('offset')}+{spec.get('length')} flipped "
                       f"({spec.get('where') or 'read'})",
            "heal": "is healed"}[op]
    return f"{device} {what}"


def faulted(options: dict[str, Any], device: str) -> bool:
    """Does `device` of a faulty lab currently fail IO?"""
    faulty = options.get("faulty") or {}
    member = (faulty.get("members") or {}).get(device)
    if not member:
        return False
    return bool((status(str(faulty.get("control") or "")).get(member) or {}).get("fail"))
