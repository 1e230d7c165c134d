"""fio on another host, reached over SSH: the Runner protocol with LocalRunner's semantics.

    runner = SshRunner(host, run_dir / "hosts" / host.name)      # or, as the engine's factory:
    factory = functools.partial(ssh_runner, inventory.load("inventory.ini"))

Job files are kept in the run directory here and, byte for byte, in a remote run directory
on the host, where fio runs and writes its logs. That directory is held by a session-bound
shell (runners/sshsessions.py): it is removed when the runner is closed, and also when this
process dies. Close the runner (`close()`, or use it as a context manager) at the end of a
run; a lost host's directory (`abandon()`) is removed if the host answers by then. A host
back from a cut that ended the holding session gets a new directory (`remote_dir`).

Time: `clock()` is this machine's clock plus the host's measured offset (the midpoint of the
fastest of a few round trips), so an instant means the same moment on every host; `start`
passes the instant to the host, which waits for it on its own clock.

Throttling: `confine` names the host's blkio `cgroup.procs` (cluster/throttle.py makes the
group there); fio then joins it before it execs, as a local fio does.
"""

from __future__ import annotations

import contextlib
import re
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.hosts.ssh import SshError, SshHost
from assay.runners import agent
from assay.runners.base import CommandResult, Powers
from assay.runners.sshfio import START, SshFioRun
from assay.runners.sshsessions import Echo, end_session, hold_run_dir, last_line

VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SAFE = re.compile(r"[^A-Za-z0-9_.-]")
LOG = re.compile(r"^[^/\n]*_lat\.[^/\n]*\.log$")
# $1 the target directory, then its sub-directories: made, and written to for real
PREPARE = (
    'd=$1; shift; mkdir -p -- "$d" || exit 3; '
    't=$(mktemp -p "$d" .assay-probe.XXXXXX) || exit 3; rm -f -- "$t"; '
    'for s; do mkdir -p -- "$d/$s" || exit 3; done'
)
BACK_S = 1.0  # how long a lost host has to answer at the end before its directory is left
LIST_LOGS = 'cd -- "$1" && for f in *_lat.*.log; do [ -f "$f" ] && printf "%s\\n" "$f"; done; :'


class SshRunner:
    powers = Powers.CLOCK | Powers.SESSION

    def __init__(self, host: Host, workdir: Path, ssh: SshHost | None = None, *,
                 run_id: str | None = None, accept_new: bool = False):
        self.spec = host
        self.workdir = workdir  # job files, raw output and logs: the run directory's copy
        self.ssh = ssh or SshHost(host, accept_new=accept_new)
        self._own_ssh = ssh is None
        if run_id is None:  # the run directory's name: <run>/hosts/<host>/
            run_id = workdir.parent.parent.name if workdir.parent.name == "hosts" \
                else workdir.name
        self.run_id = SAFE.sub("_", run_id)[:64] or "run"
        self._offset: tuple[float, float] | None = None
        self._anchor: subprocess.Popen[bytes] | None = None
        self._remote: str | None = None
        self._runs: list[SshFioRun] = []
        self._echo = Echo(self.ssh)  # ping's session
        self._agent = False  # the agent's archive is in the remote directory
        self._procs: str | None = None  # the host's blkio cgroup.procs fio joins (confine)
        self._held: list[subprocess.Popen[bytes]] = []  # commands kept till close (hold)

    def __enter__(self) -> SshRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def host(self) -> str:
        return self.spec.name

    @property
    def fio(self) -> str:
        """fio on the host: the inventory's `assay_fio` (a path), else `fio` on its PATH."""
        return str(self.spec.vars.get("assay_fio") or "fio")

    @property
    def target(self) -> str | None:
        """The host's target (assay_path or assay_device), as the host sees it."""
        return self.spec.target

    # time

    def measure_clock(self) -> tuple[float, float]:
        """(offset, round trip) in seconds, measured now: the host's clock minus ours."""
        self._offset = self.ssh.clock_offset()
        return self._offset

    @property
    def offset(self) -> float:
        return (self._offset or self.measure_clock())[0]

    @property
    def rtt(self) -> float:
        return (self._offset or self.measure_clock())[1]

    def clock(self) -> float:
        return time.time() + self.offset

    # files

    @property
    def remote_dir(self) -> str:
        """The run's directory on the host (made at first use, removed by close()). A new
        one once the session holding it has ended (the host was cut off longer than SSH's
        keepalive, then came back): the host removes the old one when it learns of that end,
        so a rejoin's job file written there would vanish, or find no directory."""
        if self._anchor is not None and self._anchor.poll() is not None:
            end_session(self._anchor)
            self._anchor, self._remote, self._agent = None, None, False
        if self._remote is None:
            self._anchor, self._remote = hold_run_dir(self.ssh, self.host, self.run_id)
        return self._remote

    def hold(self, argv: Sequence[str], ready: str,
             timeout: float = 60.0) -> tuple[str, str, int | None]:
        """Run `argv` on the host in a session of its own; when its first line of output is
        `ready`, keep it running until close() (a lock it holds there lasts as long: the
        session ends, the command ends), else end it. Returns that line and, when the
        command was not kept, its stderr's last line and exit status (None: no answer)."""
        proc = self.ssh.popen(list(argv), start_new_session=True)
        assert proc.stdout is not None
        line, answered = b"", bool(select.select([proc.stdout], [], [], timeout)[0])
        if answered:
            line = proc.stdout.readline()
        text = line.decode("utf-8", errors="replace").strip()
        if text == ready:
            self._held.append(proc)
            return text, "", None
        err = b""
        if answered:  # it said something else, or ended: it ends on its own
            with contextlib.suppress(subprocess.TimeoutExpired, OSError, ValueError):
                err = proc.communicate(timeout=timeout)[1] or b""
        rc = proc.poll()
        if rc is None:
            proc.kill()
        end_session(proc)
        return text, last_line(err.decode(errors="replace")) if err.strip() else "", rc

    def prepare(self, directory: Path, subdirs: Sequence[str]) -> None:
        r = self.run(["sh", "-c", PREPARE, "assay-prepare", str(directory),
                      *[str(s) for s in subdirs]])
        if r.returncode != 0:
            raise UserError(f"{self.host}: cannot write to the target {directory} there "
                            f"(user {self.spec.user or 'default'}): {last_line(r.stderr)}")

    def write_job(self, name: str, text: str) -> Path:
        _plain(name)
        data = text.encode("utf-8")
        path = self.workdir / name
        path.write_bytes(data)
        self.put(name, data)
        return path

    def put(self, name: str, data: bytes) -> None:
        """Write a file into the host's run directory."""
        remote = f"{self.remote_dir}/{_plain(name)}"
        proc = subprocess.run(self.ssh.argv(["sh", "-c", 'cat > "$1"', "assay-put", remote]),
                              input=data, capture_output=True, timeout=60, check=False)
        if proc.returncode != 0:
            raise UserError(f"{self.host}: cannot write {remote}: "
                            f"{last_line(proc.stderr.decode(errors='replace'))}")

    @property
    def python(self) -> str:
        """The host's Python for the agent: the inventory's `ansible_python_interpreter`,
        as Ansible's own modules use it, else `python3` on its PATH."""
        return str(self.spec.vars.get("ansible_python_interpreter") or "python3")

    def agent(self, command: str, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
        """The agent's command on the host; its archive is written there at first use."""
        if not self._agent:
            self.put(agent.ARCHIVE, agent.archive())
            self._agent = True
        return self.ssh.popen(self._in_dir(self.python, agent.ARCHIVE, command, *args),
                              start_new_session=True)

    def check_job(self, name: str, env: Mapping[str, str]) -> str | None:
        r = self.run(self._in_dir(*_env(env), self.fio, "--parse-only", _plain(name)))
        if r.returncode != 0:
            return (r.stderr or r.stdout).strip() or f"fio --parse-only exited {r.returncode}"
        return None

    def confine(self, procs: Path | None) -> None:
        """fio's later starts join this blkio group on the host (its `cgroup.procs` there)."""
        self._procs = str(procs) if procs is not None else None

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] = ()) -> SshFioRun:
        """Start fio on the host at host time `at`; returns at once (several hosts can be
        started for the same instant): `started` waits for the host's report."""
        args = [self.fio, "--output-format=json+", "--status-interval=1", _plain(name),
                *[f"--section={s}" for s in sections]]
        if self._procs:  # into the group before exec: its jobs are forked inside it
            args = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self._procs, *args]
        at_ns = 0 if at is None else round(at * 1e9)
        # ssh in a session of its own, as a local fio is: a Ctrl-C on the terminal does not
        # cut the session; the engine stops fio in order (its final report comes back)
        proc = self.ssh.popen([*_env(env), "sh", "-c", START, "assay-fio", self.remote_dir,
                               str(at_ns), *args], start_new_session=True)
        run = SshFioRun(self, proc, Path(name).stem, at)
        self._runs.append(run)
        return run

    def fetch_logs(self) -> list[Path]:
        """fio's per-IO total latency logs (not clat/slat), copied into the run directory."""
        listing = self.run(["sh", "-c", LIST_LOGS, "assay-logs", self.remote_dir])
        if listing.returncode != 0:
            raise SshError(f"{self.host}: cannot list fio's logs: {last_line(listing.stderr)}")
        out = []
        for name in sorted(n for n in listing.stdout.splitlines() if LOG.match(n)):
            local = self.workdir / name
            with open(local, "wb") as fh:
                proc = subprocess.run(self.ssh.argv(["cat", "--", f"{self.remote_dir}/{name}"]),
                                      stdin=subprocess.DEVNULL, stdout=fh,
                                      stderr=subprocess.PIPE, timeout=3600, check=False)
            if proc.returncode != 0:
                raise SshError(f"{self.host}: cannot copy {name}: "
                               f"{last_line(proc.stderr.decode(errors='replace'))}")
            out.append(local)
        return out

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        return self.ssh.run(argv, timeout=timeout)

    def close(self) -> None:
        """Stop what still runs there, remove the remote run directory, end the connection."""
        self._echo.end()
        for run in self._runs:
            if run.running:
                run.stop(grace=5)
            run.wait()
        self._runs.clear()
        if self._anchor is not None:
            end_session(self._anchor)
            self._anchor = None
            self._remote = None
            self._agent = False
        for proc in self._held:  # last: what they hold (the target) outlives the run's IO
            end_session(proc)
        self._held.clear()
        if self._own_ssh:
            self.ssh.close()

    def abandon(self) -> None:
        """close() for a host that is gone: our ssh processes end, nothing is asked of it."""
        self._echo.end()
        for run in self._runs:
            run.abandon()
        self._runs.clear()
        if self._anchor is not None:
            self._anchor.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._anchor.wait(timeout=5)
            if self._remote is not None:
                self._remove_if_back(self._remote)
            self._anchor = None
            self._remote = None
            self._agent = False
        for proc in self._held:  # our end gone, the host ends them when it learns of it
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self._held.clear()
        if self._own_ssh:
            self.ssh.close()

    def _remove_if_back(self, where: str) -> None:
        """A lost host that answers again (it recovered) has its run directory removed now:
        the session holding it there may outlive the cut by hours (sshd learns of it late).
        A host still gone keeps it for `assay clean --hosts`: a second's wait, no more."""
        if self.ping(BACK_S):
            self.run(["rm", "-rf", "--", where], timeout=10)
        self._echo.end()

    def ping(self, timeout: float) -> bool:
        """Does the host answer, within `timeout`? A line sent down a session kept open for
        this (a shell echoing it back, nothing spawned per ping): cheap on a busy machine,
        and a cut link answers nothing. One ping at a time."""
        return self._echo.ping(timeout)

    def _in_dir(self, *argv: str) -> list[str]:
        return ["sh", "-c", 'cd -- "$1" && shift && exec "$@"', "assay-cd", self.remote_dir,
                *argv]


def ssh_runner(hosts: Mapping[str, Host] | Sequence[Host], name: str, workdir: Path,
               **options: Any) -> SshRunner:
    """The engine's RunnerFactory, given the inventory: functools.partial(ssh_runner, hosts)."""
    by_name = hosts if isinstance(hosts, Mapping) else {h.name: h for h in hosts}
    if name not in by_name:
        raise UserError(f"host {name!r} is not in the inventory "
                        f"({', '.join(sorted(by_name)) or 'no hosts'})")
    return SshRunner(by_name[name], workdir, **options)


def _env(env: Mapping[str, str]) -> list[str]:
    """`env NAME=value ...`: the job file's variables, for the remote command."""
    for key in env:
        if not VAR.match(key):
            raise ValueError(f"not a variable name: {key!r}")
    return ["env", *[f"{k}={v}" for k, v in env.items()]]


def _plain(name: str) -> str:
    if not name or "/" in name or name.startswith((".", "-")) or "\n" in name:
        raise ValueError(f"a job file name, not a path: {name!r}")
    return name
