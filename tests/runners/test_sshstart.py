"""The shell that starts a remote fio at an instant (runners/sshfio.py START), run here: the
hosts are Linux machines with a POSIX sh, as this one is."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from assay.hosts.check import BASH_WAITS
from assay.runners.sshfio import REPORT, START

# what the "fio" reports of itself: its pid and its niceness, as the host's kernel has them
SELF = ["sh", "-c", "echo $$ $(cut -d' ' -f19 /proc/$$/stat)"]


def start(workdir: Path, at: float, env: dict[str, str] | None = None) \
        -> tuple[float, int, int, str]:
    """(the reported start, the reported pid, the command's pid and niceness, stderr)."""
    at_ns = round(at * 1e9) if at else 0
    p = subprocess.run(["sh", "-c", START, "assay-fio", str(workdir), str(at_ns), *SELF],
                       capture_output=True, text=True, timeout=30, env=env)
    assert p.returncode == 0, p.stderr
    marks = [m for m in map(REPORT.match, p.stderr.splitlines()) if m and m.group("t")]
    assert len(marks) == 1, p.stderr
    pid, nice = map(int, p.stdout.split())
    return float(marks[0].group("t")), int(marks[0].group("pid")), pid, f"{nice}"


def test_fio_becomes_the_waiter_at_the_instant_at_the_shells_own_priority(tmp_path) -> None:
    at = time.time() + 0.4
    started, reported, pid, nice = start(tmp_path, at)
    assert at <= started < at + 0.05, started - at
    assert reported == pid  # the pid the guard watches is fio's own
    # the wait ran at a higher priority, as root; fio gets back the shell's (this process's)
    assert nice == str(os.getpriority(os.PRIO_PROCESS, 0))


def without_bash(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has what the start shell uses, but no bash."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "date", "sleep", "setsid", "pgrep", "cut", "echo"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return {"PATH": str(bin_dir)}


def test_hosts_check_asks_what_the_start_shell_asks(tmp_path) -> None:
    """`hosts check` warns where fio would start after a POSIX shell's wait."""
    assert subprocess.run(["sh", "-c", BASH_WAITS]).returncode == 0
    assert subprocess.run(["sh", "-c", BASH_WAITS], env=without_bash(tmp_path)).returncode != 0


def test_without_bash_the_shell_waits_by_itself(tmp_path) -> None:
    env = without_bash(tmp_path)
    at = time.time() + 0.4
    started, reported, pid, nice = start(tmp_path, at, env)
    assert at <= started < at + 0.1, started - at
    assert reported == pid and nice == str(os.getpriority(os.PRIO_PROCESS, 0))


def test_without_an_instant_fio_starts_at_once(tmp_path) -> None:
    before = time.time()
    started, reported, pid, _ = start(tmp_path, 0)
    assert before <= started < before + 1 and reported == pid
