"""The agent's `pgbackup` on this machine (as on a host), with a stand-in pg_basebackup that
writes a copy and then waits: what it says when the copy is done or fails, and that a stop
mid-copy (the step's timeout, the run's end) ends it and leaves no copy behind. The real
pg_basebackup runs in tests/postgres/test_engine_postgres.py and on the lab's hosts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# writes 3 files of 1000 bytes into -D, then sleeps $WAIT s and exits $RC
STAND_IN = """#!/bin/sh
[ "$1" = -D ] || exit 9
mkdir -p "$2" && for i in 1 2 3; do head -c 1000 /dev/zero > "$2/f$i"; done
echo "$PGHOST $PGPORT $PGUSER $*" > "$2/../argv"
echo $$ > "$2/../pid"
sleep "${WAIT:-0}"
[ "${RC:-0}" = 0 ] || { echo "pg_basebackup: error: could not connect" >&2; exit "$RC"; }
"""


def agent(tmp_path: Path, wait: float = 0, rc: int = 0, **spec: object) \
        -> subprocess.Popen[str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "pg_basebackup").write_text(STAND_IN)
    (bindir / "pg_basebackup").chmod(0o755)
    full = {"bindir": str(bindir), "socket": "/run/sock", "port": 5433,
            "dest": str(tmp_path / "pg-backups" / "copy"), "max_rate": None, "keep": False,
            "mine": True, **spec}
    return subprocess.Popen([sys.executable, "-m", "assay.agent", "pgbackup", json.dumps(full)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "WAIT": str(wait), "RC": str(rc)})


def ended(p: subprocess.Popen[str]) -> tuple[str, str]:
    """Its output once it has ended by itself (its stdin open all along, as the step keeps
    it: closing it would stop the copy)."""
    p.wait(60)
    assert p.stdout is not None and p.stderr is not None
    return p.stdout.read(), p.stderr.read()


def test_a_copy_is_measured_then_removed_with_the_directory_assay_made(tmp_path: Path) -> None:
    p = agent(tmp_path, max_rate=4 << 20)
    out, err = ended(p)
    assert p.returncode == 0, err
    done = json.loads(out.splitlines()[-1])["done"]
    assert done["bytes"] == 3000 and 0 < done["seconds"] < 30
    said = (tmp_path / "pg-backups" / "argv").read_text().split()
    assert said[:3] == ["/run/sock", "5433", "postgres"]  # the server's socket, as postgres
    assert said[3:] == ["-D", str(tmp_path / "pg-backups" / "copy"), "-X", "stream", "-c",
                        "fast", "-r", "4096k"]
    assert not (tmp_path / "pg-backups" / "copy").exists()
    assert (tmp_path / "pg-backups").exists()  # our argv and pid files keep it: not empty


def test_a_kept_copy_stays_and_a_given_directory_is_never_removed(tmp_path: Path) -> None:
    p = agent(tmp_path, keep=True)
    assert p.wait(60) == 0 and (tmp_path / "pg-backups" / "copy" / "f3").exists()
    (tmp_path / "to").mkdir()
    p = agent(tmp_path, rc=1, dest=str(tmp_path / "to" / "copy"), mine=False)
    out, _ = ended(p)
    assert p.returncode == 1
    assert json.loads(out.splitlines()[-1]) == {
        "error": "pg_basebackup failed (1): pg_basebackup: error: could not connect"}
    assert not (tmp_path / "to" / "copy").exists() and (tmp_path / "to").is_dir()
    (tmp_path / "to" / "copy").mkdir()  # not this step's: refused, and left as it was
    (tmp_path / "to" / "copy" / "theirs").write_text("x")
    out, _ = ended(agent(tmp_path, dest=str(tmp_path / "to" / "copy"), mine=False))
    assert json.loads(out) == {"error": f"{tmp_path}/to/copy exists and is not this step's copy"}
    assert (tmp_path / "to" / "copy" / "theirs").read_text() == "x"


def test_a_stop_mid_copy_ends_pg_basebackup_and_leaves_no_copy(tmp_path: Path) -> None:
    for stop in ("stdin", "term"):
        p = agent(tmp_path, wait=60)
        pid_file = tmp_path / "pg-backups" / "pid"
        end = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip()) \
                and time.monotonic() < end:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert (tmp_path / "pg-backups" / "copy" / "f1").exists()
        if stop == "stdin":  # the controller gone: its pipe, or the SSH session, closes
            assert p.stdin is not None
            p.stdin.close()
        else:
            p.send_signal(signal.SIGTERM)
        assert p.wait(15) == 1
        assert p.stdout is not None
        assert json.loads(p.stdout.read()) == {"error": "stopped before the copy was done"}
        assert not (tmp_path / "pg-backups" / "copy").exists()
        end = time.monotonic() + 5
        while Path(f"/proc/{child}").exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert not Path(f"/proc/{child}").exists(), "pg_basebackup still runs"
        pid_file.unlink()
