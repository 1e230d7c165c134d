"""A throw-away PostgreSQL cluster of Debian's `postgresql` package, run as an unprivileged user.

initdb refuses root, so every server process runs as the package's `postgres` user (through
`setpriv`, with a parent-death signal: when assay dies, even by `kill -9`, the postmaster gets
SIGQUIT and shuts down at once). The server listens on no TCP port, only on a Unix socket in a
private directory, so it never meets the system's own cluster. Processes are found by their
working directory, which PostgreSQL sets to the data directory: that finds orphaned backends
of a dead postmaster too.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from assay.exitcodes import RunAborted, UserError

PACKAGE = "postgresql"
BIN_ROOT = Path(os.environ.get("ASSAY_PG_BIN_ROOT", "/usr/lib/postgresql"))
USER = os.environ.get("ASSAY_PG_USER", "postgres")
TOOLS = ("initdb", "postgres", "pgbench", "psql", "pg_basebackup")
START_TIMEOUT_S = 60.0


def bindir() -> Path:
    """The newest installed PostgreSQL's binaries; UserError naming the package if none."""
    versions = sorted((p for p in BIN_ROOT.glob("*/bin") if (p / "postgres").exists()),
                      key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    missing = [t for t in TOOLS if not versions or not (versions[-1] / t).exists()]
    if missing:
        raise UserError(f"a postgres workload needs PostgreSQL ({', '.join(missing)} not found "
                        f"under {BIN_ROOT}/*/bin): install the Debian package `{PACKAGE}` "
                        f"(apt-get install {PACKAGE})")
    return versions[-1]


def account() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        raise UserError(f"a postgres workload runs the server as the user {USER!r}, which does "
                        f"not exist: install the Debian package `{PACKAGE}`") from None


def as_user(argv: list[str], pdeathsig: bool = False) -> list[str]:
    """`argv` run as the PostgreSQL user (assay runs as root; initdb refuses root)."""
    if os.geteuid() != 0:
        return argv
    u = account()
    return ["setpriv", f"--reuid={u.pw_uid}", f"--regid={u.pw_gid}", "--init-groups",
            *(["--pdeathsig=SIGQUIT"] if pdeathsig else []), *argv]


def chown(path: Path) -> None:
    if os.geteuid() == 0:
        u = account()
        subprocess.run(["chown", "-R", f"{u.pw_uid}:{u.pw_gid}", str(path)], check=True)


def reachable(directory: Path) -> str | None:
    """Why the PostgreSQL user cannot reach `directory` (assay makes and hands over the
    directories in it), or None."""
    if os.geteuid() != 0:
        return None
    r = subprocess.run(as_user(["test", "-x", str(directory)]), capture_output=True)
    if r.returncode:
        return (f"the PostgreSQL user {USER!r} cannot reach {directory}: its parent "
                f"directories must be traversable by others (chmod o+x)")
    return None


def free_port() -> int:
    """A port number no local server uses (it only names the socket file; no TCP listener)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def processes(data: Path) -> list[int]:
    """Pids of the server processes of the cluster in `data` (their cwd is the data dir)."""
    want = str(data.resolve())
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(p / "cwd") == want:
                    out.append(int(p.name))
    return out


def kill_all(data: Path, timeout: float = 10.0) -> int:
    """SIGKILL every process of the cluster in `data`; returns how many there were."""
    pids = processes(data)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + timeout
    while processes(data) and time.monotonic() < end:
        time.sleep(0.05)
    return len(pids)


# a server log line's severity (log_line_prefix may put a time and pid before it)
_SEVERITY = re.compile(r"\b(PANIC|FATAL|ERROR):\s")
SOCKET_PREFIX = "assay-pg-"  # the socket directory, in the temporary directory
OS_ERRORS = ("No space left on device", "Disk quota exceeded", "Input/output error",
             "Read-only file system")

@dataclass
class Cluster:
    """One server: its data directory (on the target), its socket directory, its process."""

    data: Path
    log: Path  # the server's stderr
    port: int = field(default_factory=free_port)
    socket_dir: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    bin: Path = field(default_factory=bindir)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def initdb(self, waldir: Path | None = None) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        chown(self.data)
        argv = [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
        if waldir is not None:
            waldir.mkdir(parents=True, exist_ok=True)
            chown(waldir)
            argv += ["-X", str(waldir)]
        r = subprocess.run(as_user(argv), capture_output=True, text=True)
        if r.returncode:
            raise RunAborted(f"initdb failed: {r.stderr.strip()[-500:]}")

    def start(self, settings: dict[str, str]) -> None:
        """Start the postmaster with `settings` on the command line (they win over the data
        directory's postgresql.conf, and run.json records them)."""
        self.socket_dir = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX))
        self.socket_dir.chmod(0o700)
        chown(self.socket_dir)
        opts = {**settings, "port": str(self.port), "listen_addresses": "''",
                "unix_socket_directories": f"'{self.socket_dir}'"}
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
                raise RunAborted(f"PostgreSQL did not start: {self.log_tail()}")
            if self.psql("SELECT 1", check=False) == "1":
                return
            time.sleep(0.1)
        raise RunAborted(f"PostgreSQL did not accept connections within {START_TIMEOUT_S:g}s")

    def env(self) -> dict[str, str]:
        assert self.socket_dir is not None
        return {**os.environ, "PGHOST": str(self.socket_dir), "PGPORT": str(self.port),
                "PGUSER": "postgres", "PGDATABASE": "postgres"}

    def psql(self, sql: str, check: bool = True, timeout: float = 600.0) -> str:
        r = subprocess.run([str(self.bin / "psql"), "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True, env=self.env(), timeout=timeout)
        if check and r.returncode:
            raise RunAborted(f"PostgreSQL refused {sql[:60]!r}: {r.stderr.strip()[-400:]}")
        return r.stdout.strip()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def death(self) -> str:
        """Why the postmaster is gone, for the run's reason."""
        assert self.proc is not None
        rc = self.proc.returncode
        how = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        return f"the PostgreSQL postmaster (pid {self.proc.pid}) died ({how})"

    def log_tail(self, lines: int = 3) -> str:
        with contextlib.suppress(OSError):
            text = self.log.read_text(errors="replace").strip().splitlines()
            return " | ".join(text[-lines:])
        return ""

    def server_reason(self, scan: int = 65536) -> str:
        """What the server's log says went wrong last (a full disk: "could not extend file
        ...: No space left on device"): a PANIC first, then an operating-system error, then
        any ERROR or FATAL; "" when it says nothing wrong."""
        try:
            with open(self.log, "rb") as fh:
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - scan))
                lines = fh.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        said = [(line, m) for line in lines if (m := _SEVERITY.search(line))]
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
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
