"""Is a run that says `running` still running? A killed engine cannot write its own end.

The engine records its `pid` and the kernel's `boot_id` in run.json. A run is `crashed` when
run.json still says `running` but the machine has rebooted since (another boot id), or its
process is gone, or the pid now belongs to a process that started after the run did. Runs
from before pids were recorded are `crashed` once their directory has not changed for
STALE_AFTER seconds (a live run appends to its series every second).

The check only holds on the host that ran the run: a results directory shared between
machines sees other machines' runs as crashed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
STALE_AFTER = 600.0  # seconds without a write before a run with no pid counts as crashed
_ACTIVITY = ("run.json", "events.ndjson", "series.ndjson", "samples.ndjson", "samples.blocks")


def current_boot_id() -> str | None:
    try:
        return BOOT_ID.read_text(encoding="ascii").strip() or None
    except OSError:
        return None  # not Linux, or /proc hidden: the boot check is skipped


def effective_status(run: dict[str, Any], run_dir: Path | None = None,
                     now: float | None = None) -> str:
    """run.json's `status`, except `crashed` for a `running` run whose process is gone.

    `run_dir` (the run's directory) is needed only for runs without a recorded pid."""
    status = str(run.get("status") or "unknown")
    if status != "running":
        return status
    boot, here = run.get("boot_id"), current_boot_id()
    if isinstance(boot, str) and here and boot.strip() != here:
        return "crashed"
    pid = run.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
        started = run.get("started")
        alive = _alive(pid, started if isinstance(started, int | float) else None)
        return "running" if alive else "crashed"
    if run_dir is not None:
        last = _last_write(run_dir)
        if last is not None and (now or time.time()) - last > STALE_AFTER:
            return "crashed"
    return "running"


def _alive(pid: int, started: float | None) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: existence check only
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OverflowError:
        return False  # not a pid this system can have
    began = _process_start(pid)
    # a pid is reused once its process is gone: a process younger than the run is another
    # one (a minute of slack: boot time as /proc tells it moves when the clock is stepped)
    return not (began is not None and started is not None and began > started + 60)


def _process_start(pid: int) -> float | None:
    """When `pid` started (epoch seconds), from /proc; None where /proc cannot say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, after the command name
        btime = next(int(line.split()[1]) for line in
                     Path("/proc/stat").read_text(encoding="ascii").splitlines()
                     if line.startswith("btime "))
        return btime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _last_write(run_dir: Path) -> float | None:
    times = []
    for name in _ACTIVITY:
        try:
            times.append((run_dir / name).stat().st_mtime)
        except OSError:
            continue
    return max(times, default=None)
