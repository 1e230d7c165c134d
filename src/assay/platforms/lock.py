"""One run per target: two runs on the same files would both prefill and measure them, and
both report a verdict on IO that was not theirs.

A lock file in the target directory (or beside a raw device's manifest), held with flock for
the life of the run: the kernel releases it when the process ends, however it ends, so a
crashed run never leaves a target locked. Its text (who holds it, pid, since when) is only
what a refused run is told.

On a cluster's hosts the same lock file is held the same way (`HOLD`): by a shell in an SSH
session of the run's (SshRunner.hold), so it lasts as long as the run's session does, and a
local run and a host's run on one directory refuse each other. The hosts of one run sharing
a directory (each writes its own `<host>.<k>/`) share the run's lock: the lock file names
the run it is held for.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
import time
from pathlib import Path
from typing import IO

from assay.exitcodes import UserError
from assay.results.liveness import current_boot_id

LOCK_NAME = ".assay-lock"
BUSY, HELD, SHARED = "busy", "held", "shared"  # HOLD's first line
# $1 the directory (made), $2 the holder's words, $3 the run's id, $4 the host's name. Prints
# "held" and holds the lock until its session ends (the lock file removed, then released);
# "shared" when this run holds it already (another host of the run, one directory); "busy
# <the holder's words>" when another run does. No output and an exit status on an error.
HOLD = (
    'd=$1; f="$d/' + LOCK_NAME + '"; mkdir -p -- "$d" && touch -- "$f" || exit 3; '
    'command -v flock >/dev/null 2>&1 || '
    '{ echo "flock is not installed there (util-linux)" >&2; exit 4; }; n=0; '
    'while :; do exec 9>>"$f"; '
    'if ! flock -n 9; then i=0; '  # the holder writes its words just after it locks
    'while :; do w=; t=; { read -r w; read -r t; } < "$f"; '
    '[ -n "$w" ] || [ $i -ge 20 ] && break; sleep 0.1; i=$((i+1)); done; '
    f'[ -n "$t" ] && [ "$t" = "run $3" ] && {{ echo {SHARED}; exit 0; }}; '
    f'echo "{BUSY} ${{w:-another process}}"; exit 0; fi; '
    # locked a file another run's end removed meanwhile: not the lock, lock the new one
    '[ "$(stat -c %d:%i -- "$f" 2>/dev/null)" = "$(stat -L -c %d:%i /proc/$$/fd/9)" ] && '
    'break; exec 9>&-; n=$((n+1)); [ $n -lt 5 ] || exit 3; done; '
    ': > "$f"; printf "%s (pid %s on %s, since %s)\\nrun %s\\n" "$2" "$$" "$4" '
    '"$(date "+%Y-%m-%d %H:%M:%S")" "$3" >&9; '
    f'trap \'rm -f -- "$f"; exit 0\' TERM INT HUP; echo {HELD}; exec >/dev/null 2>&1; '
    'while :; do sleep 3600 9>&- & wait $!; done'
)
# $1 a raw device: prints the directory that keeps its manifest (and lock) on its host, as
# platforms/safety.py device_state_dir names it on this machine
DEVICE_DIR = (
    'n=$(basename -- "$(realpath -- "$1")"); s=/sys/class/block/$n; id=$n; k=0; third=; '
    'for r in size loop/backing_file wwid device/wwid device/serial; do '
    'v=$(cat -- "$s/$r" 2>/dev/null) || continue; '
    "v=$(printf '%s' \"$v\" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'); "
    'id="$id|$v"; k=$((k+1)); [ $k -eq 2 ] && third=$v; done; '
    'if [ $k -ge 2 ]; then i=$(stat -c %i -- "$third" 2>/dev/null) && id="$id|$i"; '
    'else id="$id|"; fi; '
    'key=$(printf "%s" "$id" | sha256sum | cut -c1-12); '
    'printf "%s\\n" "${ASSAY_STATE_DIR:-$HOME/.local/state/assay}/devices/$n-$key"'
)


def words(scenario: str, run: str | None = None) -> str:
    """Who holds a target, as a refused run is told: the run's scenario (and its id)."""
    return f"assay run {scenario!r}" + (f" {run}" if run else "")


def controller() -> str:
    """Which assay holds a host's target, as its lock file says it: this machine, its boot
    and the pid (`stale_holder` reads it back)."""
    return f"from {socket.gethostname()} pid {os.getpid()} boot {current_boot_id() or '-'}"


HOLDER = re.compile(r"from (?P<host>\S+) pid (?P<pid>\d+) boot (?P<boot>\S+) "
                    r"\(pid (?P<holder>\d+) on ")


HOLDER_BOOT = re.compile(r" boot \S+(?= \(pid )")


def stale_holder(busy: str) -> int | None:
    """The host's pid of the shell holding a lock (`HOLD`'s busy line) for an assay of this
    machine and boot that is gone, or None: a live one, another machine's, or unknown."""
    m = HOLDER.search(busy)
    if m is None or m["host"] != socket.gethostname() or m["boot"] != current_boot_id():
        return None
    try:
        os.kill(int(m["pid"]), 0)
    except ProcessLookupError:
        return int(m["holder"])
    except OSError:  # alive, another user's
        return None
    return None


def refusal(target: str | Path, holder: str) -> str:
    """A refused run's message (a host's is this, after its name)."""
    return (f"the target {target} is in use by {holder}: wait for that run to end, or "
            f"choose another target")


class TargetLock:
    def __init__(self, directory: Path):
        self.file = directory / LOCK_NAME
        self._fh: IO[str] | None = None

    def acquire(self, holder: str) -> TargetLock:
        """Hold the target for `holder` (what a refused run is told); UserError if another
        process holds it."""
        for _ in range(5):
            fh = open(self.file, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                other = fh.readline().strip() or "another process"
                fh.close()
                raise UserError(refusal(self.file.parent, other)) from None
            try:  # not a file another run's end removed while we opened it (HOLD's check)
                if os.stat(self.file).st_ino == os.fstat(fh.fileno()).st_ino:
                    break
            except FileNotFoundError:
                pass
            fh.close()
        else:
            raise UserError(f"cannot lock the target {self.file.parent}: its lock file "
                            f"{LOCK_NAME} keeps changing")
        fh.seek(0)
        fh.truncate()
        fh.write(f"assay run {holder} (pid {os.getpid()} on {socket.gethostname()}, since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S')})\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is None:
            return
        with contextlib.suppress(OSError):
            self.file.unlink()  # before unlocking: a waiter never locks a file on its way out
        self._fh.close()
        self._fh = None
