"""What a command run on a host returned (hosts/ssh.py, and every runner's `run`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str
