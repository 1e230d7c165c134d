"""Never destroy data assay did not create.

A directory target keeps a manifest of the files assay made (`.assay-files.json`); any other
file with the same name is refused unless the user passes --force. A raw block device is
refused when it holds a filesystem or partition table or is mounted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.hosts.devicerules import device_problems, refusal

MANIFEST = ".assay-files.json"


def read_manifest(directory: Path) -> dict[str, Any]:
    try:
        data = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write_manifest(directory: Path, files: dict[str, Any]) -> None:
    tmp = directory / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(files, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(directory / MANIFEST)


def check_files(directory: Path, names: list[str], force: bool) -> None:
    """Refuse to write into existing files that assay did not create."""
    owned = read_manifest(directory)
    foreign = [n for n in names if (directory / n).exists() and n not in owned]
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
        raise UserError(f"{directory} already holds files assay did not create: {shown}. "
                        f"assay would overwrite them. Use an empty directory, or pass --force "
                        f"to overwrite them.")


def device_state_dir(device: str) -> Path:
    """Where assay keeps the manifest of what it wrote to a raw device (not on the device)."""
    root = Path(os.environ.get("ASSAY_STATE_DIR") or Path.home() / ".local/state/assay")
    name = Path(os.path.realpath(device)).name
    sys_dir = Path("/sys/class/block") / name
    identity = [name]  # a device node name is reused (loop3 today is not loop3 tomorrow)
    for rel in ("size", "loop/backing_file", "wwid", "device/wwid", "device/serial"):
        with contextlib.suppress(OSError):
            identity.append((sys_dir / rel).read_text().strip())
    with contextlib.suppress(OSError):
        identity.append(str(os.stat(identity[2]).st_ino) if len(identity) > 2 else "")
    key = hashlib.sha256("|".join(identity).encode()).hexdigest()[:12]
    d = root / "devices" / f"{name}-{key}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def check_block_device(device: str, force: bool) -> None:
    """Refuse a device with a filesystem, partition table or mount, unless forced."""
    if not os.path.exists(device):
        raise UserError(f"target device {device} does not exist")
    real = os.path.realpath(device)
    sig = subprocess.run(["blkid", "-p", "-o", "export", real], capture_output=True, text=True,
                         check=False)
    with open("/proc/mounts", encoding="utf-8") as fh:
        mounted = any(line.split()[0] in (device, real) for line in fh)
    holders = Path("/sys/class/block") / Path(real).name / "holders"
    problems = device_problems(sig.stdout, mounted, holders.exists() and any(holders.iterdir()))
    if problems and not force:
        raise UserError(refusal(device, problems))
