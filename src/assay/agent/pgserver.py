"""A throw-away PostgreSQL server on this host, for a postgres workload placed here: the one
implementation of assay's servers (the loaded databases they serve: pgdata.py). On a host the
agent's `pgbench` command runs it; on this machine assay runs it in-process
(postgres/cluster.py adapts its errors and its socket directory). In the standard library
only: the binaries (given, else the newest under /usr/lib/postgresql/*/bin, as Debian
installs them), the server run as the package's `postgres` user when we are root (initdb
refuses root) with a parent-death signal (this agent killed: the postmaster quits at once),
and a Unix socket only (no TCP port).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

BIN_ROOT = Path("/usr/lib/postgresql")
USER = os.environ.get("ASSAY_PG_USER", "postgres")
TOOLS = ("initdb", "postgres", "pgbench", "psql")
# a server log line's severity (log_line_prefix may put a time and pid before it)
SEVERITY = re.compile(r"\b(PANIC|FATAL|ERROR):\s")
OS_ERRORS = ("No space left on device", "Disk quota exceeded", "Input/output error",
             "Read-only file system")
START_TIMEOUT_S = 60.0


class Refused(Exception):
    """What stops the database on this host, said for the controller's message."""


class NotOurs(Refused):
    """A directory of the database's names that assay did not make: never written over."""


def bindir(given: str | None) -> Path:
    """The binaries: `given` (the inventory's assay_pg_bindir), else the newest installed."""
    if given:
        found = [Path(given)]
    else:
        found = sorted((p for p in BIN_ROOT.glob("*/bin") if (p / "postgres").exists()),
                       key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    missing = [t for t in TOOLS if not found or not (found[-1] / t).exists()]
    if missing:
        where = given or f"{BIN_ROOT}/*/bin"
        raise Refused(f"PostgreSQL is not installed ({', '.join(missing)} not found under "
                      f"{where}): install the Debian package `postgresql`, or name its "
                      f"binaries with assay_pg_bindir in the inventory")
    return found[-1]


def account() -> pwd.struct_passwd | None:
    """The server's user when we are root (None: we run it as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        raise Refused(f"the user {USER!r} does not exist: install the Debian package "
                      f"`postgresql`") from None


def as_user(argv: list[str], pdeathsig: bool = False) -> list[str]:
    u = account()
    if u is None:
        return argv
    return ["setpriv", f"--reuid={u.pw_uid}", f"--regid={u.pw_gid}", "--init-groups",
            *(["--pdeathsig=SIGQUIT"] if pdeathsig else []), *argv]


def chown(path: Path) -> None:
    u = account()
    if u is not None:
        subprocess.run(["chown", "-R", f"{u.pw_uid}:{u.pw_gid}", str(path)], check=True)


def reachable(directory: Path) -> None:
    if account() is not None and \
            subprocess.run(as_user(["test", "-x", str(directory)])).returncode:
        raise Refused(f"the PostgreSQL user {USER!r} cannot reach {directory}: its parent "
                      f"directories must be traversable by others (chmod o+x)")


def processes(data: Path) -> list[int]:
    """The cluster's processes: PostgreSQL sets their working directory to the data dir."""
    want, out = str(data.resolve()), []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(p / "cwd") == want:
                    out.append(int(p.name))
    return out


def kill_all(data: Path, timeout: float = 10.0) -> int:
    """SIGKILL every process of the cluster in `data`; how many there were."""
    pids = processes(data)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + timeout
    while processes(data) and time.monotonic() < end:
        time.sleep(0.05)
    return len(pids)


def remove(path: Path) -> None:
    kill_all(path)
    shutil.rmtree(path, ignore_errors=True)


class Server:
    """One postmaster: data directory, socket directory, log."""

    Error: type[Exception] = Refused  # what its failures raise (the run's, in-process)

    def __init__(self, bins: Path, data: Path, sockets: Path, log: Path, port: int):
        self.bin, self.data, self.sockets, self.log, self.port = bins, data, sockets, log, port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def initdb(self, wal: Path | None = None) -> None:
        """A new cluster; its WAL in `wal` when given."""
        self.data.mkdir(parents=True, exist_ok=True)
        chown(self.data)
        argv = [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
        if wal is not None:
            wal.mkdir(parents=True, exist_ok=True)
            chown(wal)
            argv += ["-X", str(wal)]
        r = subprocess.run(as_user(argv), capture_output=True, text=True)
        if r.returncode:
            raise self.Error(f"initdb failed: {r.stderr.strip()[-400:]}")

    def start(self, settings: dict[str, str]) -> None:
        """The postmaster, with `settings` on its command line (they win over the data
        directory's postgresql.conf, and run.json records them); a Unix socket only."""
        self.sockets.mkdir(mode=0o700, exist_ok=True)
        chown(self.sockets)
        opts = {**settings, "port": str(self.port), "listen_addresses": "",
                "unix_socket_directories": str(self.sockets)}
        argv = [str(self.bin / "postgres"), "-D", str(self.data)]
        for k, v in opts.items():
            argv += ["-c", f"{k}={v.strip(chr(39))}"]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(as_user(argv, pdeathsig=True), stdin=subprocess.DEVNULL,
                                         stdout=err, stderr=err, start_new_session=True)
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise self.Error(f"PostgreSQL did not start: {self.tail()}")
            if self.psql("SELECT 1", check=False) == "1":
                return
            time.sleep(0.1)
        raise self.Error(f"PostgreSQL did not accept connections within {START_TIMEOUT_S:g}s")

    def env(self) -> dict[str, str]:
        return {**os.environ, "PGHOST": str(self.sockets), "PGPORT": str(self.port),
                "PGUSER": "postgres", "PGDATABASE": "postgres"}

    def psql(self, sql: str, check: bool = True, timeout: float = 600.0) -> str:
        r = subprocess.run([str(self.bin / "psql"), "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True, env=self.env(), timeout=timeout)
        if check and r.returncode:
            raise self.Error(f"PostgreSQL refused {sql[:60]!r}: {r.stderr.strip()[-400:]}")
        return r.stdout.strip()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def death(self) -> str:
        """Why the postmaster is gone, with what its log says went wrong."""
        rc = self.proc.returncode if self.proc else None
        how = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        reason = self.reason()
        return f"the PostgreSQL postmaster (pid {self.pid}) died ({how})" + (
            f"; the server: {reason}" if reason else "")

    def tail(self, lines: int = 3) -> str:
        with contextlib.suppress(OSError):
            return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-lines:])
        return ""

    def reason(self, scan: int = 65536) -> str:
        """What the server's log says went wrong last (a full disk: "could not extend file
        ...: No space left on device"): a PANIC first, then an operating-system error, then
        any ERROR or FATAL; "" when it says nothing wrong."""
        try:
            with open(self.log, "rb") as fh:
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - scan))
                lines = fh.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        said = [(line, m) for line in lines for m in [SEVERITY.search(line)] if m]
        for pick in (lambda m, line: m.group(1) == "PANIC",
                     lambda m, line: any(e in line for e in OS_ERRORS),
                     lambda m, line: True):
            found = [line[m.start():] for line, m in said if pick(m, line)]
            if found:
                return found[-1].strip()[:300]
        return ""

    def stop(self, timeout: float = 30.0) -> None:
        """Fast shutdown (SIGINT), then SIGKILL of every process of the cluster."""
        if self.alive():
            assert self.proc is not None
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        kill_all(self.data)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def version(bins: Path) -> str:
    return subprocess.run([str(bins / "postgres"), "--version"], capture_output=True,
                          text=True).stdout.strip()
