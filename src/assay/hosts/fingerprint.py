"""Environment fingerprint: every variable that changes results, recorded with the run.

Configuration alone explains most of the spread between storage benchmark results, so we record
the host, the kernel, the filesystem and its mount options, the backing device, the cache
situation (dataset vs RAM) and the versions of everything in the IO path.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

from assay import __version__


def _run(*args: str) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10,
                              check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def fio_version(fio: str = "fio") -> str | None:
    out = _run(fio, "--version")
    return out or None


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def mem_total_bytes() -> int:
    m = re.search(r"MemTotal:\s+(\d+) kB", _read("/proc/meminfo"))
    return int(m.group(1)) * 1024 if m else 0


def os_release() -> str:
    m = re.search(r'PRETTY_NAME="([^"]*)"', _read("/etc/os-release"))
    return m.group(1) if m else platform.platform()


def host_facts() -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "mem_bytes": mem_total_bytes(),
        "kernel": platform.release(),
        "os": os_release(),
        "python": platform.python_version(),
        "assay_version": __version__,
        "fio_version": fio_version(),
    }


def mount_of(path: str | Path) -> dict[str, Any]:
    """Filesystem, mount options and source device of the mount that holds `path`."""
    out = _run("findmnt", "-J", "-T", str(path), "-o", "TARGET,SOURCE,FSTYPE,OPTIONS")
    try:
        fs = json.loads(out)["filesystems"][0]
    except (ValueError, KeyError, IndexError):
        return {}
    return {"mountpoint": fs.get("target"), "source": fs.get("source"),
            "fstype": fs.get("fstype"), "mount_options": fs.get("options")}


def block_device_facts(dev: str | None) -> dict[str, Any]:
    """Model, rotational, scheduler and size of the block device behind a mount or target."""
    if not dev or not dev.startswith("/dev/"):
        return {}
    name = Path(os.path.realpath(dev.split("[")[0])).name
    sys_dir = Path("/sys/class/block") / name
    if not sys_dir.exists():
        return {"device": dev}
    queue = sys_dir / "queue"
    if not queue.exists() and (sys_dir / "..").resolve().joinpath("queue").exists():
        queue = (sys_dir / "..").resolve() / "queue"  # a partition: its disk's queue
    sched = _read(str(queue / "scheduler"))
    m = re.search(r"\[([\w-]+)\]", sched)
    facts: dict[str, Any] = {
        "device": dev,
        "size_bytes": int(_read(str(sys_dir / "size")) or 0) * 512,
        "rotational": _read(str(queue / "rotational")) == "1",
        "scheduler": m.group(1) if m else sched or None,
        "model": _read(str(sys_dir / "device" / "model")) or None,
    }
    backing = _read(str(sys_dir / "loop" / "backing_file"))
    if backing:
        facts["loop_backing_file"] = backing
    return facts


def target_facts(path: str, dataset_bytes: int, direct: bool) -> dict[str, Any]:
    mount = mount_of(path)
    usage = shutil.disk_usage(path)
    mem = mem_total_bytes()
    return {
        **mount,
        "backing": block_device_facts(mount.get("source")),
        "free_bytes": usage.free,
        "total_bytes": usage.total,
        "dataset_bytes": dataset_bytes,
        "dataset_to_ram": round(dataset_bytes / mem, 3) if mem else None,
        "direct_io": direct,
    }
