"""A raw block device as a host's target (`assay_device`): checked on the host before any IO
with the rules a local device obeys (platforms/safety.py) — no filesystem or partition table
signature, not mounted, not held by another device, unless --force — and large enough for
the host's files, which the plan lays out on it one after another (plan/model.py)."""

from __future__ import annotations

from typing import Any

from assay.exitcodes import UserError
from assay.hosts.check import PROBE_DEVICE
from assay.platforms.safety import device_problems, refusal
from assay.runners.base import Runner
from assay.scenario.units import format_size


def check(name: str, runner: Runner, device: str, need: int, force: bool) -> dict[str, Any]:
    """The device's facts for run.json; UserError naming the host when it must not be used."""
    r = runner.run(["sh", "-c", PROBE_DEVICE, "assay-probe", device], timeout=20)
    if r.returncode == 3:
        raise UserError(f"{name}: target device {device} is not a block device there")
    if r.returncode != 0:
        raise UserError(f"{name}: cannot check target device {device}: "
                        f"{r.stderr.strip()[-200:] or r.returncode}")
    facts = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    problems = device_problems(r.stdout, "MOUNTED" in facts, "HOLDERS" in facts)
    if problems and not force:
        raise UserError(f"{name}: {refusal(device, problems)}")
    size = int(facts["SIZE"]) if facts.get("SIZE", "").isdigit() else None
    if size is not None and size < need:
        raise UserError(f"{name}: {device} holds {format_size(size)}; the host's files need "
                        f"{format_size(need)}. Lower `dataset` or give the host a larger "
                        f"device")
    return {"device": device, "device_bytes": size, "fs": "raw device",
            **({"forced_over": problems} if problems else {})}
