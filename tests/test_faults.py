"""The fault matrix, with real fio: whatever ends a run, it ends with a defined status and exit
code, its partial results stay readable (`show`, `report`, `export`), the catalogue agrees,
and nothing is left behind: no fio, no temporary target, no mount.

Signals are sent to an assay started with SIGINT ignored, as a script's `cmd &` leaves it:
assay installs its own handlers whatever it inherits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import assay_in_process, needs_fio, needs_root

SCENARIO = """\
name: fault
workloads:
  db: {kind: oltp, data_iops: 300, data_files: 2, log_files: 1, log_iops: 30, dataset: 48MiB,
       load: {pacing: even}}
timeline: {duration: 40s}
thresholds: {db: rate}
"""

pytestmark = [needs_fio]


class Case:
    def __init__(self, tmp_path: Path, results: Path | None = None):
        self.tmp = tmp_path
        self.results = results or tmp_path / "results"
        self.scratch = tmp_path / "scratch"  # temporary targets go here (ASSAY_TMPDIR)
        self.scratch.mkdir(exist_ok=True)
        self.scenario = tmp_path / "fault.yaml"
        self.scenario.write_text(SCENARIO)
        self.env = {**os.environ, "ASSAY_RESULTS": str(self.results),
                    "ASSAY_TMPDIR": str(self.scratch)}

    def start(self, *args: str) -> subprocess.Popen[str]:
        def ignore_sigint() -> None:  # as `assay run ... &` from a script inherits it
            signal.signal(signal.SIGINT, signal.SIG_IGN)

        return subprocess.Popen([sys.executable, "-m", "assay", "run", str(self.scenario),
                                 *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=ignore_sigint)

    def assay(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A verb after the fault (runs, show, report, export, clean) or a refusal: in this
        process (tests/conftest.py), nothing signals it; the run the fault hits is a process."""
        return assay_in_process(*args, env=self.env)

    def run_dir(self, timeout: float = 60) -> Path:
        """The run directory, once a few seconds have been measured."""
        end = time.time() + timeout
        while time.time() < end:
            for p in self.results.glob("*/series.ndjson"):
                if len(p.read_text().splitlines()) >= 9:
                    return p.parent
            time.sleep(0.2)
        raise AssertionError("no seconds were measured")

    def check(self, run_dir: Path, status: str) -> None:
        """The aftermath every fault must leave."""
        runs = self.assay("runs", "--json")
        assert runs.returncode == 0, runs.stderr
        (row,) = [r for r in json.loads(runs.stdout) if r["id"] == run_dir.name]
        assert row["status"] == status
        for verb in (["show", run_dir.name], ["report", run_dir.name, "-o",
                                              str(self.tmp / "r.html")],
                     ["export", run_dir.name, "--format", "junit"]):
            r = self.assay(*verb)
            assert r.returncode == 0 and "Traceback" not in r.stderr, (verb, r.stderr)
        assert (self.tmp / "r.html").stat().st_size > 10_000
        assert no_fio_of(run_dir, within=3.0)


def no_fio_of(run_dir: Path, within: float) -> bool:
    end = time.time() + within
    while time.time() < end:
        if not subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True).stdout:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("sig,status,code", [(signal.SIGINT, "interrupted", 130),
                                             (signal.SIGTERM, "interrupted", 130)])
def test_a_signal_ends_the_run_interrupted_with_its_seconds(tmp_path, sig, status, code):
    case = Case(tmp_path)
    p = case.start()
    run_dir = case.run_dir()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == status and run["stats"]["db.data.read"]["ios"] > 0
    assert any("graded on the" in w for w in run["warnings"])  # partial data, said so
    case.check(run_dir, status)
    assert not any(case.scratch.iterdir())  # the temporary target is gone


def test_a_killed_fio_aborts_the_run(tmp_path):
    case = Case(tmp_path)
    p = case.start()
    run_dir = case.run_dir()
    subprocess.run(["pkill", "-KILL", "-f", f"{run_dir}/hosts/local/run.fio"], check=False)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    assert "fio exited" in json.loads((run_dir / "run.json").read_text())["reason"]
    case.check(run_dir, "aborted")


def test_a_killed_assay_takes_fio_with_it_and_is_shown_crashed(tmp_path):
    case = Case(tmp_path)
    p = case.start()
    run_dir = case.run_dir()
    p.kill()  # SIGKILL: no handler of ours runs
    p.communicate(timeout=10)
    assert no_fio_of(run_dir, within=3.0)  # fio's guard ended fio and its job processes
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
    case.check(run_dir, "crashed")
    assert any(case.scratch.iterdir())  # its temporary target is still there ...
    cleaned = case.assay("clean")
    assert cleaned.returncode == 0 and run_dir.name in cleaned.stdout
    assert not any(case.scratch.iterdir())  # ... until `assay clean` (or the next run)
    assert json.loads((run_dir / "run.json").read_text())["target"]["removed"] is True


def test_a_second_run_on_the_same_target_is_refused(tmp_path):
    case = Case(tmp_path)
    target = tmp_path / "target"
    target.mkdir()
    p = case.start("--path", str(target))
    run_dir = case.run_dir()
    second = case.assay("run", str(case.scenario), "--path", str(target))
    assert second.returncode == 2
    assert "in use by assay run 'fault'" in second.stderr and str(p.pid) in second.stderr
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    case.check(run_dir, "interrupted")
    assert not (target / ".assay-lock").exists()


@needs_root
def test_a_full_results_disk_aborts_the_run_plainly(tmp_path):
    mnt = tmp_path / "results"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], check=True)
    try:
        case = Case(tmp_path, mnt)
        # leave about 200 KiB: run.json and the first seconds fit, the rest does not
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        (mnt / "filler").write_bytes(b"\0" * (free - (200 << 10)))
        p = case.start("--duration", "20s")
        out, err = p.communicate(timeout=90)
        assert p.returncode == 3, err
        assert "No space left on device: " in out + err and "Traceback" not in err
        assert ".ndjson" in out + err or "run.json" in out + err  # which file could not grow
        assert no_fio_of(mnt, within=3.0)
        (run_dir,) = [d for d in mnt.iterdir() if d.is_dir()]
        (mnt / "filler").unlink()  # space again: the run is listed, its seconds readable
        # run.json says aborted, or (when not even that could be written) running, which the
        # catalogue shows as crashed: never a verdict
        stored = json.loads((run_dir / "run.json").read_text())["status"]
        assert stored in ("aborted", "running")
        case.check(run_dir, "aborted" if stored == "aborted" else "crashed")
        # no half-written temporary file is left in the results (.run.json.tmp, ...)
        assert not [p.name for p in mnt.rglob("*.tmp")]
        # and the seconds it measured are shown, with their statistics
        doc = json.loads(case.assay("show", run_dir.name, "--json").stdout)
        assert doc["measured_s"] and doc["workloads"], doc
        assert not any(case.scratch.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@needs_root
def test_a_read_only_results_disk_refuses_the_run_before_any_io(tmp_path):
    mnt = tmp_path / "results"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,ro", "tmpfs", str(mnt)], check=True)
    try:
        case = Case(tmp_path, mnt)
        r = case.assay("run", str(case.scenario), "--duration", "2s")
        assert r.returncode == 3 and "Read-only file system" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        assert case.assay("runs").returncode == 0
        assert not any(case.scratch.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_failing_action_aborts_the_run_and_leaves_it_readable(tmp_path):
    case = Case(tmp_path)
    case.scenario.write_text(SCENARIO.replace(
        "timeline: {duration: 40s}",
        "timeline:\n  duration: 40s\n  steps:\n"
        "    - {name: breaks, action: command, run: 'echo broken >&2; exit 3', at: 3s}"))
    p = case.start()
    _, err = p.communicate(timeout=90)
    assert p.returncode == 3, err
    (run_dir,) = [d for d in case.results.iterdir() if d.is_dir()]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "aborted" and "breaks" in run["reason"]
    case.check(run_dir, "aborted")
    assert not any(case.scratch.iterdir())
