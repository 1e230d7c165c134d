"""`assay clean` (and `assay run` before it starts) removes only what assay made, proven on
disk: a crashed run's record is no proof, since anyone who can write into the results can
craft one naming any directory. Real directories, all under tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import leftovers
from assay.hosts import cgroup, sshleftovers
from assay.hosts.ssh import CONTROL_PREFIX, OWNER
from assay.platforms.base import MARK, Platform
from assay.postgres import leftovers as pg_leftovers
from assay.postgres.cluster import SOCKET_PREFIX
from assay.scenario.models import Target

FIXTURE = Path(__file__).parent / "fixtures" / "runs" / "exchange-fixture" / "run.json"
RUN = "20261201-100000_t_aaaaaa"
QUICK = """
name: t
workloads:
  db: {kind: oltp, data_iops: 50, log_iops: 5, dataset: 16MiB}
timeline: {duration: 2s}
"""
# a temporary target made by the code path `assay run` uses, in a process that then ends
MAKE = ("import json, sys; from assay.platforms.local import Driver; "
        "from assay.scenario.models import Target; p = Driver(Target()); d = p.prepare(); "
        "(d / 'data.0').write_text('x'); print(json.dumps({'path': str(d), **p.made_facts()}))")


@pytest.fixture(autouse=True)
def _here_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """clean() also looks in $TMPDIR (SSH control directories) and the blkio root: here,
    tmp_path's, so nothing of this machine is looked at."""
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    monkeypatch.setattr(cgroup, "BLKIO_ROOT", tmp_path / "no-blkio")


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def crashed_run(results: Path, target: dict[str, Any], name: str = RUN) -> Path:
    """A stored run that says it is running in a process that is gone: crashed."""
    d = results / name
    d.mkdir(parents=True)
    record = json.loads(FIXTURE.read_text())
    record.update(id=name, status="running", pid=dead_pid(), started=time.time())
    record.pop("boot_id", None)
    record["target"] = {**record["target"], "removed": False, "temporary": True, **target}
    (d / "run.json").write_text(json.dumps(record))
    return d


def made_target(tmp_path: Path) -> dict[str, Any]:
    """A temporary target as `assay run` makes it, its maker gone: what run.json records."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    out = subprocess.run([sys.executable, "-c", MAKE], capture_output=True, text=True,
                         env={**os.environ, "ASSAY_TMPDIR": str(scratch)}, check=True)
    facts: dict[str, Any] = json.loads(out.stdout)
    return facts


def victim(where: Path) -> Path:
    """Someone's directory named as assay names its own, with files in it."""
    where.mkdir(parents=True)
    (where / "thesis.tex").write_text("years of work")
    (where / "sub").mkdir()
    (where / "sub" / "data").write_text("more")
    return where


def test_a_crafted_run_naming_a_directory_outside_leaves_it_and_says_why(tmp_path: Path):
    results = tmp_path / "results"
    plain = victim(tmp_path / "home" / "assay-victim")
    crashed_run(results, {"path": str(plain)})  # an older assay's record: no proof either
    # a forgery that knows the directory's device and inode: still no mark of its run in it
    forged = victim(tmp_path / "home2" / "assay-victim")
    st = forged.stat()
    crashed_run(results, {"path": str(forged), "made": {"token": "0" * 32, "dev": st.st_dev,
                                                        "ino": st.st_ino}},
                name="20261201-100001_t_bbbbbb")
    done = leftovers.clean(results)
    assert (plain / "thesis.tex").exists() and (plain / "sub" / "data").exists()
    assert (forged / "thesis.tex").exists()
    assert f"left {plain}: not made by run {RUN} (its record holds no proof that assay made " \
           f"it: an older assay's run, or not assay's; remove it yourself if it is)" in done
    assert f"left {forged}: not made by run 20261201-100001_t_bbbbbb (no mark of assay in " \
           f"it ({MARK}))" in done
    assert not any(line.startswith("removed the temporary target") for line in done), done


def test_assay_clean_says_what_it_left_and_why(tmp_path: Path):
    results = tmp_path / "results"
    plain = victim(tmp_path / "home" / "assay-victim")
    crashed_run(results, {"path": str(plain)})
    env = {**os.environ, "TMPDIR": str(tmp_path / "systmp"), "ASSAY_BLKIO_ROOT":
           str(tmp_path / "no-blkio")}
    out = subprocess.run([sys.executable, "-m", "assay", "clean", "--results", str(results)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"left {plain}: not made by run {RUN} (its record holds no proof" in out.stdout
    assert (plain / "thesis.tex").exists() and (plain / "sub" / "data").exists()


def test_a_symbolic_link_at_the_recorded_path_is_never_followed(tmp_path: Path):
    results = tmp_path / "results"
    genuine = made_target(tmp_path)  # even a directory assay made, reached through a link
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "assay-link"
    link.symlink_to(genuine["path"])
    crashed_run(results, {"path": str(link), "made": genuine["made"]})
    done = leftovers.clean(results)
    assert link.is_symlink() and (Path(genuine["path"]) / "data.0").exists()
    assert done == [f"left {link}: not made by run {RUN} (a symbolic link (never followed))"]


def test_a_genuine_crashed_runs_target_goes_and_another_runs_mark_is_left(tmp_path: Path):
    results = tmp_path / "results"
    mine, theirs = made_target(tmp_path), made_target(tmp_path)
    for facts in (mine, theirs):
        assert (Path(facts["path"]) / MARK).is_file() and set(facts["made"]) == \
            {"token", "dev", "ino"}
    outside = victim(tmp_path / "outside")
    (Path(mine["path"]) / "escape").symlink_to(outside)  # removed, not followed
    run = crashed_run(results, {"path": mine["path"], "made": mine["made"]})
    other = "20261201-100002_t_cccccc"  # names theirs, with its own token: not its mark
    crashed_run(results, {"path": theirs["path"], "made": {**theirs["made"], "token": "f" * 32}},
                name=other)
    done = leftovers.clean(results)
    assert f"removed the temporary target {mine['path']} of crashed run {RUN}" in done
    assert not os.path.lexists(mine["path"]) and (outside / "thesis.tex").exists()
    assert json.loads((run / "run.json").read_text())["target"]["removed"] is True
    assert f"left {theirs['path']}: not made by run {other} (its mark names another run)" \
        in done
    assert (Path(theirs["path"]) / "data.0").exists()


def test_a_target_whose_maker_still_runs_is_left(tmp_path: Path, monkeypatch):
    """A copied record (or one that lies about its pid) does not take a live run's target."""
    monkeypatch.setenv("ASSAY_TMPDIR", str(tmp_path))
    platform = Platform(Target())
    d = platform.prepare()  # made by this process, which runs
    results = tmp_path / "results"
    crashed_run(results, {"path": str(d), **platform.made_facts()})
    done = leftovers.clean(results)
    assert d.is_dir() and (d / MARK).is_file()
    assert done == [f"left {d} of crashed run {RUN}: the assay that made it (pid "
                    f"{os.getpid()}) is still running"]


def test_a_real_runs_record_carries_the_proof_of_its_temporary_target(run_scenario):
    """run.json's target records `made` beside the driver's facts, as `assay run` writes it."""
    outcome, run = run_scenario(QUICK, keep=True)
    d = Path(run["target"]["path"])
    st = os.lstat(d)
    made = run["target"]["made"]
    assert run["target"]["temporary"] and (made["dev"], made["ino"]) == (st.st_dev, st.st_ino)
    assert json.loads((d / MARK).read_text())["token"] == made["token"]


# -- SSH control directories ($TMPDIR/assay-ssh-*) ----------------------------------------

def test_only_assay_ssh_control_directories_go(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = f"{dead_pid()} 12345"
    genuine = Path(tempfile.mkdtemp(prefix=CONTROL_PREFIX))  # as hosts/ssh.py makes it
    (genuine / OWNER).write_text(gone)
    (genuine / "master.log").write_text("")
    crafted = tmp_path / f"{CONTROL_PREFIX}victim"  # a name, a mark: and someone's files
    victim(crafted)
    crafted.chmod(0o700)
    (crafted / OWNER).write_text(gone)
    public = tmp_path / f"{CONTROL_PREFIX}shared"  # not private: assay makes its own 0700
    public.mkdir(mode=0o755)
    (public / OWNER).write_text(gone)
    done = sshleftovers.clean(unowned=True)
    assert not genuine.exists() and f"removed the SSH control directory {genuine}" in done
    assert (crafted / "thesis.tex").exists() and (crafted / "sub" / "data").exists()
    assert any(line.startswith(f"left {crafted}: not an SSH control directory of assay")
               for line in done), done
    assert public.is_dir() and any(line.startswith(f"left {public}:") for line in done)


# -- PostgreSQL leftovers -------------------------------------------------------------------

def pg_state(run: Path, name: str, **info: object) -> None:
    (run / "postgres" / name).mkdir(parents=True)
    (run / "postgres" / name / "cluster.json").write_text(json.dumps(info))


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory of a short path: a socket's path has at most 107 bytes, and
    pytest's own (longer under its workers) leaves too few for PostgreSQL's socket name."""
    d = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_postgres_leftovers_go_only_with_their_markers(tmp_path: Path, short_tmp: Path):
    run = tmp_path / "results" / "run1"
    mine = tmp_path / "t" / "pg-db.run"
    mine.mkdir(parents=True)
    (mine / "PG_VERSION").write_text("15\n")
    mine.with_name("pg-db.run.json").write_text(json.dumps(
        {"data": str(mine), "wal": None, "pid": dead_pid()}))
    sock = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX))
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock / ".s.PGSQL.5432"))
    (sock / ".s.PGSQL.5432.lock").write_text("1\n")
    pg_state(run, "db", data=str(mine), socket=str(sock))
    theirs = victim(tmp_path / "home" / "pg-victim.run")  # a crafted state names these
    elsewhere = victim(tmp_path / "home" / f"{SOCKET_PREFIX}victim")
    pg_state(run, "x", data=str(theirs), socket=str(elsewhere))
    other = victim(tmp_path / "home" / "pg-other.run")  # a marker naming another copy
    other.with_name("pg-other.run.json").write_text(json.dumps({"data": "/elsewhere"}))
    pg_state(run, "y", data=str(other))
    done = pg_leftovers.clean(run)
    assert not mine.exists() and not mine.with_name("pg-db.run.json").exists()
    assert not sock.exists()
    assert f"removed the PostgreSQL cluster {mine} of crashed run run1" in done
    assert f"removed the PostgreSQL socket directory {sock} of crashed run run1" in done
    for d in (theirs, elsewhere, other):
        assert (d / "thesis.tex").exists() and (d / "sub" / "data").exists(), d
    assert f"left {theirs}: not a PostgreSQL copy made by run run1 (no marker " \
           f"pg-victim.run.json beside it)" in done
    assert f"left {elsewhere}: not a socket directory of run run1 (not in the temporary " \
           f"directory, where assay makes it)" in done
    assert f"left {other}: not a PostgreSQL copy made by run run1 (its marker names another " \
           f"copy)" in done


# -- temporary files on SIGTERM -------------------------------------------------------------

@pytest.mark.timeout(60)
def test_assay_plan_ended_by_sigterm_leaves_no_scratch_directory(tmp_path: Path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    started = tmp_path / "fio-started"
    fio = tmp_path / "fio"  # a fio whose --parse-only takes long: the plan is mid-check
    fio.write_text(f"#!/bin/sh\n[ \"$1\" = --version ] && {{ echo fio-3.33; exit 0; }}\n"
                   f": > {started}\nexec sleep 30\n")
    fio.chmod(0o755)
    env = {**os.environ, "TMPDIR": str(scratch), "ASSAY_FIO": str(fio)}
    p = subprocess.Popen([sys.executable, "-m", "assay", "plan", "exchange-quick"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 40
        while not started.exists() and p.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert started.exists(), p.stderr.read().decode() if p.poll() is not None else ""
        assert list(scratch.glob("assay-plan-*"))  # the scratch directory, while it checks
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    assert list(scratch.glob("assay-plan-*")) == []
