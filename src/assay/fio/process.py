"""fio as a local child process, with its status dumps delivered as they arrive.

stdout is saved verbatim (the raw record) and split into JSON documents on the fly; stderr is
saved too, since that is where fio says why it died.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.fio.jsonstream import DocumentQueue, JsonStream, pump
from assay.fio.rawout import RawOutput


def find_fio() -> str:
    given = os.environ.get("ASSAY_FIO")
    if given:
        exe = shutil.which(given)
        if not exe:
            raise UserError(f"ASSAY_FIO={given!r} is not an executable fio: set it to fio's "
                            f"path, or unset it to use the fio on PATH")
        return exe
    exe = shutil.which("fio")
    if not exe:
        raise UserError("fio is not installed. Install it (Debian/Ubuntu: apt-get install fio; "
                        "`make demo` does it for you) or set ASSAY_FIO to its path.")
    return exe


class Checks:
    """The fio checks that threads run at once, ended together: a thread waiting on its fio
    would keep an interrupted `assay plan` (Ctrl-C, SIGTERM) alive until fio ended."""

    def __init__(self) -> None:
        self._procs: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()
        self.ended = False

    def add(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._procs.add(proc)
            ended = self.ended
        if ended:  # started as the others were being ended
            proc.kill()

    def discard(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def end(self) -> None:
        with self._lock:
            self.ended = True
            procs = list(self._procs)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()


def parse_only(jobfile: Path | Sequence[Path], env: Mapping[str, str] | None = None,
               timeout: float = 60.0, checks: Checks | None = None) -> str | None:
    """fio's own check of a job file, or of several (each read as if alone; fio stops at the
    first it refuses, without naming it); returns its complaint, or None when fio accepts.
    `checks`: the group it belongs to, ended together."""
    files = [jobfile] if isinstance(jobfile, Path) else list(jobfile)
    with subprocess.Popen([find_fio(), "--parse-only", *map(str, files)], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, **env} if env else None) as proc:
        if checks is not None:
            checks.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return f"fio --parse-only did not answer in {timeout:g} s"
        finally:
            if checks is not None:
                checks.discard(proc)
    if proc.returncode != 0:
        return (err or out).strip() or f"fio --parse-only exited {proc.returncode}"
    return None


# Ends fio and its job processes once the process that started it is gone, even by SIGKILL,
# which no handler of ours sees. The job processes are each in a session of their own, and fio
# itself dies at once of a broken pipe when we do, orphaning them: so the guard notes them as
# fio's children while it watches (twice a second; a dead fio, unreaped, has none), freezes
# fio to list them once more (jobs forked since the last look), and kills them all.
_GUARD = ('kids=""; while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do '
          'k=$(pgrep -d " " -P "$2") && kids=$k; sleep 0.5; done; '
          'kill -0 "$1" 2>/dev/null && exit 0; kill -STOP "$2" 2>/dev/null; '
          'k=$(pgrep -d " " -P "$2") && kids="$kids $k"; kill -KILL "$2" $kids 2>/dev/null')


def watchdog(pid: int) -> subprocess.Popen[bytes]:
    """A guard for fio (process `pid`), tied to the life of this process."""
    return subprocess.Popen(["/bin/sh", "-c", _GUARD, "assay-fio-guard", str(os.getpid()),
                             str(pid)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


class FioProcess:
    session_ended = False  # a child of ours: no session to lose (runners/base.py FioRun)
    last_beat: float | None = None  # no heartbeat but its dumps
    lag_note = ""  # read as it writes: no controller to fall behind

    def __init__(self, jobfile: Path, out_dir: Path, name: str = "fio",
                 status_interval: float = 1.0, extra_args: list[str] | None = None,
                 cgroup_procs: Path | None = None, env: dict[str, str] | None = None):
        self.jobfile = jobfile.resolve()  # fio runs in the job file's directory
        out_dir = out_dir.resolve()
        self.stdout_path = out_dir / f"{name}.out.json"
        self.stderr_path = out_dir / f"{name}.stderr.txt"
        self.args = [find_fio(), "--output-format=json+", str(self.jobfile)]
        if status_interval:
            self.args.insert(2, f"--status-interval={status_interval:g}")
        self.args += extra_args or []
        self._docs = DocumentQueue()
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0  # epoch seconds
        self.stream = JsonStream()
        self._reader: threading.Thread | None = None
        self.cgroup_procs = cgroup_procs  # join this cgroup before exec (blkio throttling)
        self.env = env  # the job file's variables (added to this process's environment)
        self._raw: RawOutput | None = None

    def start(self) -> None:
        self._stderr = open(self.stderr_path, "w", encoding="utf-8")  # noqa: SIM115
        self.started = time.time()
        # own process group: a Ctrl-C reaches us, and we stop fio in order
        args = self.args
        if self.cgroup_procs is not None:
            # join the cgroup, then become fio: its jobs are forked inside it. A shell rather
            # than preexec_fn, which is unsafe while other threads run (progress, timeline)
            args = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.cgroup_procs),
                    *args]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr,
                                     start_new_session=True,
                                     cwd=self.jobfile.parent,
                                     env={**os.environ, **self.env} if self.env else None)
        self._watchdog = watchdog(self.proc.pid)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc and self.proc.stdout
        self._raw = RawOutput(self.stdout_path)
        pump(self.proc.stdout, self._raw, self.stream, self._docs)

    @property
    def write_error(self) -> str:
        """Why fio's raw output could not be kept, if it could not."""
        return self._raw.error if self._raw else ""

    @property
    def last_doc(self) -> dict[str, Any] | None:
        return self._docs.last

    def documents(self, poll: float = 0.2) -> Iterator[dict[str, Any] | None]:
        """Each status dump as it arrives, and None every `poll` s while waiting."""
        return self._docs.documents(poll)

    def abandon(self) -> None:
        self.stop()

    def stop(self, grace: float = 10.0) -> None:
        """Ask fio to finish (it then prints its final report); kill it if it does not."""
        if not self.proc or self.proc.poll() is not None:
            return
        end = time.monotonic() + grace
        try:
            # fio's SIGINT handler does nothing until its job threads exist: ask again
            while self.proc.poll() is None and time.monotonic() < end:
                os.killpg(self.proc.pid, signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=min(0.5, max(0.05, end - time.monotonic())))
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        except ProcessLookupError:
            pass

    def wait(self) -> int:
        assert self.proc
        rc = self.proc.wait()
        if self._reader:
            self._reader.join(timeout=10)
        with contextlib.suppress(OSError):
            self._stderr.close()
        if self._watchdog.poll() is None:  # fio is gone: its guard is not needed
            self._watchdog.kill()
        self._watchdog.wait()
        return rc

    def stderr_tail(self, lines: int = 5) -> str:
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        meaningful = [ln for ln in text.splitlines() if ln.strip()]
        return "\n".join(meaningful[-lines:])
