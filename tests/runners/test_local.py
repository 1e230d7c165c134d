"""LocalRunner with real fio: job files kept verbatim, a start at a chosen instant, status
dumps streamed each second, a stop that keeps fio's last words, logs fetched, commands run."""

from __future__ import annotations

import time

import pytest

from assay.runners import LocalRunner
from tests.conftest import needs_fio

JOB = """\
[global]
directory=${ASSAY_TARGET}
direct=${ASSAY_DIRECT}
ioengine=psync
time_based
runtime=%s
[a]
filename=a.dat
size=4m
rw=randread
bs=4k
rate_iops=200
write_lat_log=a
[b]
filename=b.dat
size=4m
rw=write
bs=1m
"""


@pytest.fixture
def runner(tmp_path):
    work = tmp_path / "host"
    work.mkdir()
    return LocalRunner("local", work)


def env(tmp_path):
    return {"ASSAY_TARGET": str(tmp_path), "ASSAY_DIRECT": "0"}


@needs_fio
def test_job_file_is_kept_verbatim_and_checked_by_fio(runner, tmp_path):
    path = runner.write_job("run.fio", JOB % "2s")
    assert path.read_text() == JOB % "2s"
    assert runner.check_job("run.fio", env(tmp_path)) is None
    runner.write_job("bad.fio", "[x]\nrw=sideways\n")
    assert "sideways" in (runner.check_job("bad.fio", env(tmp_path)) or "")


@needs_fio
def test_starts_at_the_instant_streams_each_second_and_fetches_logs(runner, tmp_path):
    runner.write_job("run.fio", JOB % "3s")
    at = time.time() + 1.0
    fio = runner.start("run.fio", env(tmp_path), at=at, sections=["a"])
    assert fio.started >= at - 0.01  # not before the instant asked for
    docs = [d for d in fio.documents() if d is not None]
    assert fio.wait() == 0
    assert len(docs) >= 3  # one dump a second, and the final report
    assert {j["jobname"] for d in docs for j in d["jobs"]} == {"a"}  # only that section
    logs = runner.fetch_logs()
    assert [p.name.split("_lat.")[0] for p in logs] == ["a"]
    assert not list(runner.workdir.glob("*_clat.*")) and not list(runner.workdir.glob("*_slat.*"))
    assert (runner.workdir / "run.out.json").stat().st_size > 0  # the raw record


@needs_fio
def test_stop_ends_fio_early_and_keeps_its_final_report(runner, tmp_path):
    runner.write_job("run.fio", JOB % "60s")
    fio = runner.start("run.fio", env(tmp_path))
    t0 = time.monotonic()
    for doc in fio.documents():
        if doc is not None:
            break
    fio.stop()
    rest = [d for d in fio.documents() if d is not None]
    fio.wait()  # fio exits 128 when stopped by SIGINT
    assert time.monotonic() - t0 < 15
    assert rest and fio.last_doc is rest[-1]


def test_runs_commands_on_the_host(runner):
    r = runner.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")
