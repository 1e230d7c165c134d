"""A throw-away PostgreSQL cluster on this host, for a postgres workload placed here.

The host's half of assay/postgres/cluster.py and dataset.py, in the standard library only:
the binaries (given, else the newest under /usr/lib/postgresql/*/bin, as Debian installs
them), the server run as the package's `postgres` user when we are root (initdb refuses
root) with a parent-death signal (this agent killed: the postmaster quits at once), a Unix
socket only (no TCP port), and the loaded database made once per target and reused while
unchanged (`pg-NAME.loaded/` + `pg-NAME.loaded.json`), copied for each run (`pg-NAME.run/`).

Only what assay made is written over or removed: a loaded database needs its manifest, a
working copy the marker `pg-NAME.run.json` written before the copy was made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import time
from pathlib import Path

BIN_ROOT = Path("/usr/lib/postgresql")
USER = "postgres"
TOOLS = ("initdb", "postgres", "pgbench", "psql")
START_TIMEOUT_S = 60.0


class Refused(Exception):
    """What stops the database on this host, said for the controller's message."""


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


def kill_all(data: Path) -> int:
    pids = processes(data)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 10
    while processes(data) and time.monotonic() < end:
        time.sleep(0.05)
    return len(pids)


def remove(path: Path) -> None:
    kill_all(path)
    shutil.rmtree(path, ignore_errors=True)


class Server:
    """One postmaster: data directory, socket directory, log."""

    def __init__(self, bins: Path, data: Path, sockets: Path, log: Path, port: int):
        self.bin, self.data, self.sockets, self.log, self.port = bins, data, sockets, log, port
        self.proc: subprocess.Popen[bytes] | None = None

    def initdb(self) -> None:
        self.data.mkdir(parents=True)
        chown(self.data)
        r = subprocess.run(as_user([str(self.bin / "initdb"), "-D", str(self.data), "-U",
                                    "postgres", "--auth=trust", "--encoding=UTF8",
                                    "--locale=C", "--no-sync"]), capture_output=True, text=True)
        if r.returncode:
            raise Refused(f"initdb failed: {r.stderr.strip()[-400:]}")

    def start(self, settings: dict[str, str]) -> None:
        self.sockets.mkdir(mode=0o700, exist_ok=True)
        chown(self.sockets)
        opts = {**settings, "port": str(self.port), "listen_addresses": "",
                "unix_socket_directories": str(self.sockets)}
        argv = [str(self.bin / "postgres"), "-D", str(self.data)]
        for k, v in opts.items():
            argv += ["-c", f"{k}={v}"]
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(as_user(argv, pdeathsig=True), stdin=subprocess.DEVNULL,
                                         stdout=err, stderr=err, start_new_session=True)
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise Refused(f"PostgreSQL did not start: {self.tail()}")
            if self.psql("SELECT 1", check=False) == "1":
                return
            time.sleep(0.1)
        raise Refused(f"PostgreSQL did not accept connections within {START_TIMEOUT_S:g}s")

    def env(self) -> dict[str, str]:
        return {**os.environ, "PGHOST": str(self.sockets), "PGPORT": str(self.port),
                "PGUSER": "postgres", "PGDATABASE": "postgres"}

    def psql(self, sql: str, check: bool = True, timeout: float = 600.0) -> str:
        r = subprocess.run([str(self.bin / "psql"), "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True, env=self.env(), timeout=timeout)
        if check and r.returncode:
            raise Refused(f"PostgreSQL refused {sql[:60]!r}: {r.stderr.strip()[-300:]}")
        return r.stdout.strip()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def death(self) -> str:
        rc = self.proc.returncode if self.proc else None
        how = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        reason = self.reason()
        return f"the PostgreSQL postmaster died ({how})" + (f"; the server: {reason}"
                                                            if reason else "")

    def tail(self, lines: int = 3) -> str:
        with contextlib.suppress(OSError):
            return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-lines:])
        return ""

    def reason(self) -> str:
        """The server log's last PANIC, FATAL or ERROR line."""
        with contextlib.suppress(OSError):
            for line in reversed(self.log.read_text(errors="replace").splitlines()[-200:]):
                for word in ("PANIC:", "FATAL:", "ERROR:"):
                    if word in line:
                        return line[line.index(word):].strip()[:300]
        return ""

    def stop(self, timeout: float = 20.0) -> None:
        """Fast shutdown (SIGINT), then SIGKILL of whatever is left."""
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


def ensure_loaded(spec: dict, bins: Path, base: Path, state: Path, port: int) -> dict:
    """The pristine loaded cluster `pg-NAME.loaded` in `base`, made when missing or stale."""
    name = spec["name"]
    golden, manifest = base / f"pg-{name}.loaded", base / f"pg-{name}.loaded.json"
    ver = version(bins)
    key = hashlib.sha256(f"{spec['key']} {ver}".encode()).hexdigest()[:16]
    known: dict = {}
    if manifest.is_file():
        with contextlib.suppress(OSError, ValueError):
            known = json.loads(manifest.read_text())
    if golden.exists() and not known:
        raise Refused(f"{golden} exists and is not assay's (no {manifest.name} beside it): "
                      f"move it away, or give the workload another `subdir`")
    if not spec.get("fresh") and golden.is_dir() and known.get("key") == key:
        return {**known, "reused": True}
    remove(golden)  # assay's, stale
    manifest.unlink(missing_ok=True)
    t0 = time.monotonic()
    server = Server(bins, golden, state / "sock", state / "load.log", port)
    server.initdb()
    try:
        server.start({"max_wal_size": "4GB", "checkpoint_timeout": "30min"})
        if spec["driver"] == "pgbench":
            argv = [str(bins / "pgbench"), "-i", "-q", "-s", str(spec["size"]), "postgres"]
        else:
            argv = [str(bins / "psql"), "-Xq", "-v", "ON_ERROR_STOP=1", "-v",
                    f"warehouses={spec['size']}", "-f", spec["schema"], "postgres"]
        with open(state / "load.txt", "ab") as out:
            r = subprocess.run(argv, env=server.env(), stdout=out, stderr=subprocess.STDOUT)
        if r.returncode:
            tail = (state / "load.txt").read_text(errors="replace").strip().splitlines()[-3:]
            raise Refused(f"loading the database failed: {' | '.join(tail)}")
        server.psql("CHECKPOINT")
        size = int(server.psql("SELECT pg_database_size('postgres')"))
    finally:
        server.stop()
    info = {"key": key, "driver": spec["driver"], "size": spec["size"], "server_version": ver,
            "database_bytes": size, "load_s": round(time.monotonic() - t0, 2),
            "loaded_at": time.time()}
    manifest.write_text(json.dumps(info, indent=1) + "\n")
    return {**info, "reused": False}


def theirs(base: Path, name: str, wal: Path | None) -> None:
    """Refused: a directory of the database's names that assay did not make."""
    golden, work = base / f"pg-{name}.loaded", base / f"pg-{name}.run"
    if golden.exists() and not (base / f"pg-{name}.loaded.json").is_file():
        raise Refused(f"{golden} exists and is not assay's (no pg-{name}.loaded.json beside "
                      f"it): move it away, or give the workload another `subdir`")
    marker = work.with_name(work.name + ".json")
    for d in (work, wal):
        if d is not None and d.exists() and not marker.exists():
            raise Refused(f"{d} exists and is not assay's: move it away")


def claim(base: Path, name: str, wal: Path | None) -> None:
    """The run's copy and WAL directory are ours from here on: a crashed run's (its marker
    says so) is removed, anything else refused."""
    theirs(base, name, wal)
    work = base / f"pg-{name}.run"
    for d in (work, wal):
        if d is not None and d.exists():
            remove(d)
    work.with_name(work.name + ".json").write_text(json.dumps(
        {"data": str(work), "wal": str(wal) if wal else None, "pid": os.getpid()}) + "\n")


def working_copy(golden: Path, work: Path, wal: Path | None) -> None:
    """The run's copy of the loaded cluster (its WAL in `wal` when given), once claimed."""
    r = subprocess.run(["cp", "-a", "--reflink=auto", str(golden), str(work)],
                       capture_output=True, text=True)
    if r.returncode:
        raise Refused(f"cannot copy the loaded database to {work}: {r.stderr.strip()}")
    if wal is not None:
        shutil.move(str(work / "pg_wal"), str(wal))
        (work / "pg_wal").symlink_to(wal)
        chown(wal)
    for d in (work, wal):
        if d is not None:
            subprocess.run(["sync", "-f", str(d)], capture_output=True)


def discard(work: Path, wal: Path | None) -> None:
    """The run's copy, its WAL and its marker, gone."""
    for d in (work, wal):
        if d is not None:
            remove(d)
    work.with_name(work.name + ".json").unlink(missing_ok=True)
