"""When a block device must not be written to: the rules a local target (platforms/safety.py)
and a host's remote target (hosts/check.py) share."""

from __future__ import annotations


def device_problems(blkid_export: str, mounted: bool, in_use: bool) -> list[str]:
    """Why a block device must not be written to, from `blkid -p -o export`, its mount and
    its holders."""
    problems = [line.replace("=", " ", 1).lower() for line in blkid_export.splitlines()
                if line.startswith(("TYPE=", "PTTYPE="))]
    if mounted:
        problems.append("is mounted")
    if in_use:
        problems.append("is in use by another device")
    return problems


def refusal(device: str, problems: list[str]) -> str:
    return (f"refusing to write to {device}: it {'; '.join(problems)}. Its data would be "
            f"destroyed. Pass --force only if that is what you want.")
