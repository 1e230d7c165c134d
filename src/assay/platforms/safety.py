"""Never destroy data assay did not create.

A directory target keeps a manifest of the files assay made (`.assay-files.json`: written and
read on every host by prefill/files.py); any other file with the same name is refused unless
the user passes --force. A raw block device is refused when it holds a filesystem or partition
table or is mounted.
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
    """A local target's manifest, as a finished run's checks read it here."""
    try:
        data = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


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
