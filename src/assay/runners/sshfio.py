"""fio on another host, as a child of an SSH session, with its status dumps streamed back.

The remote side is a small POSIX sh script (no Python needed there), run through
SshHost.popen, so it lives in a process group that is ended when the session ends (our
stdin, kept open for the whole run, reaches end of file: a normal end, or this process
killed even by SIGKILL). The script:

- sleeps until the instant asked for, computing the delay from the host's own clock in
  integer nanoseconds (`date +%s%N`), in two steps (to 0.1 s before, then the rest), so
  hosts started with the same instant begin within a few milliseconds;
- reports on stderr when fio starts (the host's clock) and its pid, then fio's exit status;
- says it is alive on stderr twice a second (a line apart from fio's big json+ dumps, read
  by a thread of its own: the run's loss detector hears a cut host go quiet within 0.5 s
  even when parsing the dumps lags on a busy controller);
- guards fio's job processes: fio forks them and each calls setsid, so ending a group does
  not reach them. fio runs in a session of its own; a guard notes its children twice a
  second and, when the session ends (the script's group gets SIGTERM), freezes fio (no new
  child, no exit that would orphan one), lists its children once more and kills fio and
  every child it noted: what the local guard (assay.fio.process) does for a local fio.

Those report lines are taken out of stderr; everything else fio (or ssh) writes is kept, as
FioProcess keeps it: stdout in <stem>.out.json (verbatim up to a cap, then its last document:
fio/rawout.py), stderr in <stem>.stderr.txt.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

from assay.fio.jsonstream import DocumentQueue, JsonStream, pump
from assay.fio.rawout import RawOutput
from assay.hosts.check import BASH_WAITS
from assay.hosts.ssh import SshHost
from assay.runners.base import Document

MARK = "assay-remote:"
SSH_FAILED = 255  # ssh's exit status when the session itself failed
# $1 the remote run directory, $2 the instant in epoch nanoseconds (0: now), then fio's argv
# Waits in bash (5: $EPOCHREALTIME) until epoch ns $1, says when and its pid, and becomes
# `$@`. Forked before the instant, it has nothing left to fork then: `sleep` and `date` would
# fork two processes after it. `read -t` on a pipe nobody writes is bash's sleep without a
# fork. As root it waits at a higher priority (nice -10), and gives it back (to its parent's)
# as it becomes fio: on a busy host, eight lab hosts on two cores, a waiter woken behind
# another host's fio starting up would be read ~10 ms late.
AT = (
    'at=$(($1 / 1000)); shift; exec 3<> <(:); '
    'read -r -a me < /proc/$$/stat; read -r -a up < /proc/$PPID/stat; '
    'while d=$((at - ${EPOCHREALTIME//[!0-9]/})); [ "$d" -gt 0 ]; do '
    'printf -v s "%d.%06d" $((d / 1000000)) $((d % 1000000)); read -t "$s" -u 3; done; '
    f't=$EPOCHREALTIME; exec 3<&-; echo "{MARK} started=${{t/[!0-9]/.}} pid=$$" >&2; '
    'exec nice -n $((up[18] - me[18])) setsid "$@"'
)
START = (
    'cd -- "$1" || exit 125; at=$2; shift 2; '
    # fio in a session of its own, so that the group's TERM reaches only the guard: fio
    # cannot end, orphaning job processes it just forked, before the guard has listed them
    f'if [ "$at" -gt 0 ] && {BASH_WAITS}; then '
    'n=""; if [ -O / ]; then n="nice -n -10"; fi; '
    f'$n bash --norc -c {shlex.quote(AT)} assay-at "$at" "$@" & f=$!; else '
    # ${n#1} of 1000000000 + ns: the nanoseconds zero-padded to 9 digits, without a fork
    'nap() { n=$((1000000000 + $1 % 1000000000)); sleep "$(($1 / 1000000000)).${n#1}"; }; '
    'if [ "$at" -gt 0 ]; then d=$((at - $(date +%s%N))); '
    'if [ "$d" -gt 200000000 ]; then nap $((d - 100000000)); d=$((at - $(date +%s%N))); fi; '
    'if [ "$d" -gt 0 ]; then nap "$d"; fi; fi; '
    't=$(date +%s.%N); setsid "$@" & f=$!; '
    f'echo "{MARK} started=$t pid=$f" >&2; fi; '
    # the guard's heartbeat going nowhere (the session gone) ends fio as its TERM does;
    # SIGPIPE ignored, or it would kill the guard first
    '( end() { kill -STOP "$f" 2>/dev/null; k=$(pgrep -d " " -P "$f") && kids="$kids $k"; '
    'kill -KILL "$f" $kids 2>/dev/null; exit 0; }; trap end TERM; trap "" PIPE; '
    'kids=""; while kill -0 "$f" 2>/dev/null; do k=$(pgrep -d " " -P "$f") && kids=$k; '
    f'echo "{MARK} alive" >&2 2>/dev/null || end; sleep 0.5; done ) >/dev/null & g=$!; '
    'wait "$f"; rc=$?; kill -KILL "$g" 2>/dev/null; '
    f'echo "{MARK} exit=$rc" >&2; exit "$rc"'
)
REPORT = re.compile(rf"^{MARK} (started=(?P<t>[0-9.]+) pid=(?P<pid>\d+)|exit=(?P<rc>\d+)"
                    rf"|(?P<alive>alive))$")


class Remote(Protocol):
    """What a remote fio needs of its runner (runners/ssh.py's SshRunner, which imports this)."""

    @property
    def workdir(self) -> Path: ...
    @property
    def ssh(self) -> SshHost: ...
    def clock(self) -> float: ...


class SshFioRun:
    """One remote fio (the FioRun protocol)."""

    def __init__(self, runner: Remote, proc: subprocess.Popen[bytes], stem: str,
                 at: float | None):
        self._runner = runner
        self._proc = proc
        self._at = at
        self.stdout_path = runner.workdir / f"{stem}.out.json"
        self.stderr_path = runner.workdir / f"{stem}.stderr.txt"
        self.stream = JsonStream()
        self._raw: RawOutput | None = None
        self._docs = DocumentQueue()
        self._started: float | None = None
        self._reported = threading.Event()  # fio started, or the session ended before it
        self.pid: int | None = None  # fio's pid on the host
        self.last_beat = 0.0  # time.monotonic() of the host's last heartbeat (twice a second)
        self.lag_note = ""  # one host's stream: the controller's lag is the merge's to say
        self.remote_rc: int | None = None  # fio's exit status, as the host reported it
        assert proc.stdout is not None and proc.stderr is not None
        self._readers = [threading.Thread(target=self._read_out, args=(proc.stdout,),
                                          daemon=True),
                         threading.Thread(target=self._read_err, args=(proc.stderr,),
                                          daemon=True)]
        for t in self._readers:
            t.start()

    @property
    def started(self) -> float:
        """The host's clock when fio started (waits for the instant it was started at)."""
        limit = max(0.0, (self._at or 0) - self._runner.clock()) + 60
        self._reported.wait(limit)
        if self._started is None:  # fio never started: wait() and stderr_tail() say why
            return self._at if self._at is not None else self._runner.clock()
        return self._started

    @property
    def last_doc(self) -> Document | None:
        return self._docs.last

    def _read_out(self, out: IO[bytes]) -> None:
        # each chunk on disk at once: a remote fio's output comes in few, big ones
        self._raw = RawOutput(self.stdout_path, flush=True)
        pump(out, self._raw, self.stream, self._docs)

    @property
    def write_error(self) -> str:
        """Why fio's raw output could not be kept, if it could not."""
        return self._raw.error if self._raw else ""

    def _read_err(self, err: IO[bytes]) -> None:
        try:
            keep: IO[bytes] | None = open(self.stderr_path, "wb")  # noqa: SIM115
        except OSError:
            keep = None
        for line in err:
            m = REPORT.match(line.decode("utf-8", errors="replace").rstrip("\n"))
            if m and m.group("alive"):
                self.last_beat = time.monotonic()
            elif m and m.group("t"):
                self._started, self.pid = float(m.group("t")), int(m.group("pid"))
                self._reported.set()
            elif m:
                self.remote_rc = int(m.group("rc"))
            elif keep is not None:
                with contextlib.suppress(OSError):
                    keep.write(line)
                    keep.flush()
        if keep is not None:
            with contextlib.suppress(OSError):
                keep.close()
        self._reported.set()

    def documents(self, poll: float = 0.2) -> Iterator[Document | None]:
        return self._docs.documents(poll)

    def stop(self, grace: float = 10.0) -> None:
        """SIGINT to the remote fio (it prints its final report); if it has not ended after
        `grace`, end the session, which kills fio and its job processes there."""
        if self._proc.poll() is not None:
            return
        end = time.monotonic() + grace
        # fio starts with SIGINT ignored (a background job of sh) and its handler does nothing
        # until its job threads exist: ask again every half second until it ends
        while self.pid is not None and time.monotonic() < end:
            self._runner.ssh.run(["kill", "-INT", str(self.pid)],
                                 timeout=max(0.5, end - time.monotonic()))
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=max(0.1, min(0.5, end - time.monotonic())))
            if self._proc.poll() is not None:
                return
        self._hang_up()

    def abandon(self) -> None:
        """The host is unreachable: end our side of the session without asking it (its sshd
        ends fio when it notices, or fio ends at its runtime)."""
        if self._proc.poll() is None:
            self._proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)

    def _hang_up(self) -> None:
        """End the session: the host kills fio and its job processes."""
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def wait(self) -> int:
        """fio's exit status as the host reported it (negative: killed by that signal);
        without a report (the session failed), ssh's status: stderr_tail() says why."""
        rc = self._proc.wait()
        for t in self._readers:
            t.join(timeout=10)
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        if self.remote_rc is None:
            return rc
        if 128 < self.remote_rc < 128 + 65:  # sh's status of a process killed by a signal
            return 128 - self.remote_rc
        return self.remote_rc

    @property
    def session_ended(self) -> bool:
        """The SSH session ended before the host reported fio's end (ssh's own status 255:
        the connection dropped, the host went away): fio's status is unknown."""
        return self.remote_rc is None and self._proc.poll() == SSH_FAILED

    def stderr_tail(self, lines: int = 5) -> str:
        try:
            text = Path(self.stderr_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        meaningful = [ln for ln in text.splitlines() if ln.strip()]
        return "\n".join(meaningful[-lines:])
