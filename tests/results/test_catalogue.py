"""The run directories are the truth; the catalogue is an index that repairs itself, and a
results directory that cannot be written still lists its runs."""

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from assay.results import liveness
from assay.results.catalogue import Catalogue
from assay.results.liveness import effective_status
from tests.conftest import assay_in_process


def make_run(root: Path, name: str, **fields) -> Path:
    d = root / name
    d.mkdir(parents=True)
    data = {"status": "passed", "started": time.time(), "scenario": {"name": name.split("_")[1]},
            "verdict": {"passed": 1, "failed": 0}, **fields}
    (d / "run.json").write_text(json.dumps(data))
    return d


def runs(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return assay_in_process("runs", "--results", str(root), *args)  # no start-up each


def listed(root: Path, *args: str) -> dict[str, str]:
    r = runs(root, "--json", *args)
    assert r.returncode == 0, r.stderr
    return {row["id"]: row["status"] for row in json.loads(r.stdout)}


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "results"
    make_run(root, "20260101-000000_alpha_aaaaaa", started=1000.0)
    make_run(root, "20260102-000000_beta_bbbbbb", started=2000.0)
    return root


def test_a_missing_catalogue_is_built_from_the_run_directories(results):
    assert listed(results) == {"20260101-000000_alpha_aaaaaa": "passed",
                               "20260102-000000_beta_bbbbbb": "passed"}
    assert (results / "catalogue.sqlite").exists()


def test_a_file_that_is_not_a_database_is_rebuilt(results):
    (results / "catalogue.sqlite").write_bytes(b"this is not sqlite\n" * 100)
    r = runs(results, "--json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 2


def test_an_old_catalogue_is_rebuilt(results):
    con = sqlite3.connect(results / "catalogue.sqlite")  # version 1: no mtime, no user_version
    con.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, path TEXT NOT NULL, scenario TEXT "
                "NOT NULL, started REAL, duration_s REAL, status TEXT, target TEXT, platform "
                "TEXT, summary TEXT, parent TEXT)")
    con.execute("INSERT INTO runs VALUES ('gone', '/nowhere', 'x', 1, 1, 'passed', '', '', "
                "'{}', NULL)")
    con.commit()
    con.close()
    assert set(listed(results)) == {"20260101-000000_alpha_aaaaaa",
                                    "20260102-000000_beta_bbbbbb"}


def test_new_runs_gone_runs_and_changed_runs_are_picked_up(results):
    listed(results)  # the catalogue now exists
    make_run(results, "20260103-000000_gamma_cccccc")  # a run the engine did not record
    os.rename(results / "20260101-000000_alpha_aaaaaa", results.parent / "moved-away")
    beta = results / "20260102-000000_beta_bbbbbb" / "run.json"
    beta.write_text(json.dumps({**json.loads(beta.read_text()), "status": "failed"}))
    os.utime(beta, (time.time() + 5, time.time() + 5))  # a later write, whatever the clock
    assert listed(results) == {"20260102-000000_beta_bbbbbb": "failed",
                               "20260103-000000_gamma_cccccc": "passed"}
    assert Catalogue(results).find("aaaaaa") is None


def test_rebuild_on_request(results):
    r = runs(results, "--rebuild")
    assert r.returncode == 0, r.stderr
    assert "from 2 run directories" in r.stdout


def test_an_unreadable_run_json_is_listed_not_lost(results):
    d = results / "20260104-000000_torn_dddddd"
    d.mkdir()
    (d / "run.json").write_text('{"status": "runn')
    assert listed(results)["20260104-000000_torn_dddddd"] == "unreadable"


def test_find_by_prefix_suffix_and_last(results):
    cat = Catalogue(results)
    assert cat.find("bbbbbb").name == "20260102-000000_beta_bbbbbb"
    assert cat.find("20260101").name == "20260101-000000_alpha_aaaaaa"
    assert cat.find("last").name == "20260102-000000_beta_bbbbbb"
    assert cat.find("2026") is None  # ambiguous


# -- results that cannot be written ---------------------------------------------------------

def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def small_fs(tmp_path):
    """A 1 MiB tmpfs (root only): a results directory we can fill or make read-only."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    mnt = tmp_path / f"fs-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)):
        pytest.skip("cannot mount a tmpfs here")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_read_only_results_directory_still_lists_its_runs(small_fs):
    make_run(small_fs, "20260101-000000_alpha_aaaaaa")
    make_run(small_fs, "20260102-000000_beta_bbbbbb", status="running", pid=2**22 + 7)
    assert _mount("-o", "remount,ro", str(small_fs))
    r = runs(small_fs, "--json")
    assert r.returncode == 0, r.stderr
    assert {row["id"]: row["status"] for row in json.loads(r.stdout)} == {
        "20260101-000000_alpha_aaaaaa": "passed", "20260102-000000_beta_bbbbbb": "crashed"}
    assert "listed from their directories" in r.stderr
    assert Catalogue(small_fs).find("aaaaaa") == small_fs / "20260101-000000_alpha_aaaaaa"


def test_a_full_disk_still_lists_its_runs(small_fs):
    make_run(small_fs, "20260101-000000_alpha_aaaaaa")
    with open(small_fs / "filler", "wb", buffering=0) as fh, pytest.raises(OSError):
        while True:
            fh.write(b"\0" * 65536)
    r = runs(small_fs)
    assert r.returncode == 0, r.stderr
    assert "20260101-000000_alpha_aaaaaa" in r.stdout and "note:" in r.stderr


# -- liveness ---------------------------------------------------------------------------------

def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_running_run_whose_process_is_gone_is_crashed():
    assert effective_status({"status": "running", "pid": dead_pid()}) == "crashed"
    assert effective_status({"status": "running", "pid": os.getpid(),
                             "started": time.time()}) == "running"
    assert effective_status({"status": "passed", "pid": dead_pid()}) == "passed"


def test_a_reused_pid_does_not_keep_a_run_alive():
    long_ago = time.time() - 86400 * 365  # the run began long before this process
    assert effective_status({"status": "running", "pid": os.getpid(),
                             "started": long_ago}) == "crashed"


def test_a_reboot_ends_every_running_run():
    if liveness.current_boot_id() is None:
        pytest.skip("no boot id on this system")
    run = {"status": "running", "pid": os.getpid(), "started": time.time()}
    assert effective_status({**run, "boot_id": liveness.current_boot_id()}) == "running"
    assert effective_status({**run, "boot_id": "00000000-0000-0000-0000-000000000000"}) \
        == "crashed"


@pytest.mark.parametrize("pid", [True, -1, 0, "123", 2**80])
def test_odd_pids_are_not_trusted(pid, tmp_path):
    assert effective_status({"status": "running", "pid": pid}, tmp_path) in ("running",
                                                                              "crashed")


def test_old_runs_without_a_pid_are_crashed_once_quiet_for_ten_minutes(tmp_path):
    d = make_run(tmp_path, "20260101-000000_old_aaaaaa", status="running")
    run = json.loads((d / "run.json").read_text())
    assert effective_status(run, d) == "running"
    assert effective_status(run, d, now=time.time() + liveness.STALE_AFTER + 1) == "crashed"
    (d / "series.ndjson").write_text("{}\n")  # still writing its seconds
    os.utime(d / "series.ndjson", (time.time() + 3600, time.time() + 3600))
    assert effective_status(run, d, now=time.time() + liveness.STALE_AFTER + 1) == "running"
