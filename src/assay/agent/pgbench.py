"""`pgbench check|run SPEC`: a postgres workload's database on this host, and its load.

    check SPEC   one row: {"ok": true, "bindir": ..., "version": ...} or {"ok": false,
                 "problem": ...}: PostgreSQL is installed, its user exists and reaches the
                 directories the database goes in, where nothing of the database's names
                 is someone else's (no IO)
    run SPEC     prepares (load once, reused while unchanged; the run's copy; the server),
                 says {"ready": {...}} (its "server": where pgbackup finds it), waits
                 for the controller's start file `pg-NAME.go`
                 ({"at": epoch s on this host's clock, "seconds": N, "procs": the blkio
                 group's cgroup.procs when the run throttles}), runs pgbench from that
                 instant for N s and sends one row a second (pgfold.py), then {"end": ...};
                 then stops the server, removes the copy and says {"removed": true}

SPEC is one JSON argument (cluster/postgres.py writes it). The run's state (logs, socket)
is `pg-NAME/` in the current directory, the run's remote directory. A file `pg-NAME.stop`
ends the load early; SIGTERM (the session ended: the controller is gone) ends it at once,
removing the copy first; so does a start that does not come within SPEC's `wait_s`. On a
failure the row is {"error": why}, and the exit status 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .pgdata import claim, discard, ensure_loaded, theirs, working_copy
from .pgfold import Fold
from .pgserver import Refused, Server, account, bindir, processes, reachable, version

MIN_SHARED_BUFFERS = 16 << 20
SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes, with the socket's own name
_term: list[int] = []  # SIGTERM came: the session ended


def emit(row: dict) -> None:
    with contextlib.suppress(OSError):  # the controller gone: the rows have no reader
        print(json.dumps(row, separators=(",", ":")), flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("check", "run"):
        print("usage: agent.pyz pgbench {check,run} SPEC", file=sys.stderr)
        return 2
    spec = json.loads(argv[1])
    if argv[0] == "check":
        try:
            bins = bindir(spec.get("bindir"))
            account()
            for db in spec.get("databases", []):
                base = Path(db["base"])
                wal = Path(db["wal"]) / f"pg-{db['name']}.wal" if db.get("wal") else None
                for path in (base, *([wal.parent] if wal else [])):
                    reachable(nearest(path))  # assay makes what is missing in them
                theirs(base, db["name"], wal)
        except Refused as e:
            emit({"ok": False, "problem": str(e)})
            return 1
        emit({"ok": True, "bindir": str(bins), "version": version(bins)})
        return 0
    signal.signal(signal.SIGTERM, lambda *_: _term.append(1))
    return Load(spec).run()


class Load:
    def __init__(self, spec: dict):
        self.spec = spec
        name = spec["name"]
        here = Path.cwd()
        self.state = here / f"pg-{name}"
        self.go, self.stop = here / f"pg-{name}.go", here / f"pg-{name}.stop"
        base = Path(spec["base"])
        self.base = base
        self.work = base / f"pg-{name}.run"
        self.wal = Path(spec["wal"]) / f"pg-{name}.wal" if spec.get("wal") else None
        self.server: Server | None = None
        self.pgbench: subprocess.Popen[bytes] | None = None
        self.copied = False
        self.sockets: Path | None = None

    def run(self) -> int:
        try:
            self.prepare()
            go = self.wait_go()
            if go is not None:
                self.load(go)
            return 0
        except Refused as e:
            emit({"error": str(e)})
            return 1
        finally:
            self.cleanup()

    def prepare(self) -> None:
        t0 = time.monotonic()
        self.state.mkdir(exist_ok=True)
        Path.cwd().chmod(0o711)  # our run directory: the server's user reaches its socket
        bins = bindir(self.spec.get("bindir"))
        account()
        for d in (self.base, *([self.wal.parent] if self.wal else [])):
            d.mkdir(parents=True, exist_ok=True)
            reachable(d)
        sockets = self.state / "sock"
        if len(str(sockets)) > SOCKET_PATH_MAX - 20:  # a long $TMPDIR: a short path instead
            sockets = Path(tempfile.mkdtemp(prefix="assay-pg-"))
        self.sockets = sockets
        port = free_port()
        dataset = ensure_loaded(self.spec, bins, self.base, self.state, port)
        claim(self.base, self.spec["name"], self.wal)
        self.copied = True  # from here on, the copy is ours to remove
        working_copy(self.base / f"pg-{self.spec['name']}.loaded", self.work, self.wal)
        conf = dict(self.spec["settings"])
        sb = self.spec.get("shared_buffers") or max(
            MIN_SHARED_BUFFERS, int(dataset["database_bytes"] * self.spec["cache"]))
        conf["shared_buffers"] = f"{sb // 1024}kB"
        self.server = Server(bins, self.work, sockets, self.state / "server.log", port)
        self.server.start(conf)
        emit({"ready": {"server_version": dataset["server_version"], "settings": conf,
                        "dataset": dataset, "data_directory": str(self.work),
                        "wal_directory": str(self.wal or self.work / "pg_wal"),
                        "cache_to_dataset": round(sb / max(dataset["database_bytes"], 1), 3),
                        "prepare_s": round(time.monotonic() - t0, 3),
                        # how pg_backup reaches it (the agent's pgbackup), not recorded
                        "server": {"bindir": str(bins), "socket": str(sockets), "port": port}}})

    def wait_go(self) -> dict | None:
        """The start file; None when told to stop, or when no start came in `wait_s` (the
        controller is gone without the session ending: a half-open connection)."""
        end = time.monotonic() + float(self.spec.get("wait_s", 3600))
        while not _term and not self.stop.exists():
            if time.monotonic() > end:
                emit({"error": "no start came from assay: the database is removed"})
                return None
            with contextlib.suppress(OSError, ValueError):
                go = json.loads(self.go.read_text())
                if isinstance(go, dict) and "at" in go:
                    return go
            self.check()
            time.sleep(0.02)
        return None

    def check(self) -> None:
        if self.server is not None and not self.server.alive():
            raise Refused(self.server.death())

    def load(self, go: dict) -> None:
        assert self.server is not None
        argv = [str(self.server.bin / "pgbench"), *self.spec["pgbench"],
                "-T", str(max(1, round(go["seconds"]))), "postgres"]
        for pid in processes(self.work) if go.get("procs") else ():  # the server into the
            with contextlib.suppress(OSError):  # host's blkio group, as fio is: throttled too
                Path(go["procs"]).write_text(str(pid))
        while time.time() < go["at"] and not _term:
            time.sleep(min(0.01, max(go["at"] - time.time(), 0)))
        started = time.time()
        with open(self.state / "pgbench.txt", "ab") as out:
            self.pgbench = subprocess.Popen(argv, env=self.server.env(), stdout=out,
                                            stderr=subprocess.STDOUT, cwd=self.state,
                                            start_new_session=True)
        emit({"started": started, "late_ms": round((started - go["at"]) * 1000, 3),
              "pgbench": " ".join(argv)})
        fold = Fold(self.state / "tx", go["at"],  # second k: [at+k, at+k+1) on every host
                    {int(k): v for k, v in self.spec.get("streams", {}).items()},
                    bool(self.spec.get("rate")))
        while self.pgbench.poll() is None:
            if _term or self.stop.exists():
                self.end_pgbench()
                break
            for row in fold.rows(time.time()):
                emit(row)
            self.check()
            time.sleep(0.25)
        rc = self.pgbench.wait()
        for row in fold.rows(time.time(), final=True):
            emit(row)
        self.check()
        if rc != 0 and not _term and not self.stop.exists():
            reason = self.server.reason()
            raise Refused((f"the server: {reason}; " if reason else "")
                          + f"pgbench exited with status {rc}: {self.tail()}")
        emit({"end": fold.totals, "rc": rc})

    def tail(self, lines: int = 3) -> str:
        with contextlib.suppress(OSError):
            text = (self.state / "pgbench.txt").read_text(errors="replace").splitlines()
            return " | ".join([x for x in text if not x.startswith("progress:")][-lines:])
        return ""

    def end_pgbench(self) -> None:
        """pgbench writes out its logs when its sessions end (a signal would lose them)."""
        assert self.pgbench is not None and self.server is not None
        if self.server.alive() and not _term:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE application_name = 'pgbench'", check=False, timeout=5)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.pgbench.wait(5)
                return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgbench.pid, signal.SIGKILL)
        self.pgbench.wait()

    def cleanup(self) -> None:
        """Whatever ended the run: pgbench, the server, the copy, gone; fast when the session
        ended (SIGTERM: we have 2 s before SIGKILL)."""
        if self.pgbench is not None and self.pgbench.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pgbench.pid, signal.SIGKILL)
            self.pgbench.wait()
        if self.server is not None and not _term:
            self.server.stop()
        if self.copied:
            discard(self.work, self.wal)  # SIGKILLs what is left of the server
        if self.sockets is not None and not self.sockets.is_relative_to(self.state):
            shutil.rmtree(self.sockets, ignore_errors=True)
        if not _term:
            emit({"removed": True})


def nearest(path: Path) -> Path:
    """`path`, or its nearest parent that exists."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_port() -> int:
    """A port number no local server uses (it only names the socket file)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
