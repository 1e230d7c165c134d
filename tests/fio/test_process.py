"""fio as a real child process: finding it, its own job check, streamed status documents, a
stop within the grace, stderr kept, a real blkio cgroup, the job file's variables."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.fio import process, rawout
from assay.fio.jsonstream import JsonStream
from assay.fio.process import FioProcess, find_fio, parse_only
from assay.plan import LOCAL
from tests.conftest import needs_fio
from tests.realfs import MakeBlkio, cgroup_of

# no disk IO and a modest rate: long runs cost neither disk nor much CPU
IDLE_JOB = """[global]
ioengine=null
size=64m
rw=randread
bs=4k
rate_iops=500
time_based
runtime={runtime}
[idle]
"""


def job(tmp_path: Path, text: str, name: str = "job.fio") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def fake_fio(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "fake-fio"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_find_fio_honours_assay_fio(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    exe = fake_fio(tmp_path, "exit 0\n")
    monkeypatch.setenv("ASSAY_FIO", str(exe))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # it wins even where PATH has none
    assert find_fio() == str(exe)


def test_a_stale_assay_fio_is_reported_clearly(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_FIO", str(tmp_path / "gone" / "fio"))
    with pytest.raises(UserError, match="ASSAY_FIO"):
        parse_only(job(tmp_path, IDLE_JOB.format(runtime="1s")))


def test_find_fio_without_fio_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.delenv("ASSAY_FIO", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no fio on it
    with pytest.raises(UserError, match=r"fio is not installed.*apt-get install fio.*ASSAY_FIO"):
        find_fio()
    with pytest.raises(UserError, match="fio is not installed"):
        FioProcess(job(tmp_path, IDLE_JOB), tmp_path)


@needs_fio
def test_find_fio_on_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_FIO", raising=False)
    assert find_fio() == shutil.which("fio")


@needs_fio
def test_parse_only_returns_fios_complaint(tmp_path: Path) -> None:
    assert parse_only(job(tmp_path, IDLE_JOB.format(runtime="1s"))) is None
    complaint = parse_only(job(tmp_path, "[x]\nrw=sideways\nsize=1m\n", "bad.fio"))
    assert complaint is not None and "sideways" in complaint


@needs_fio
def test_parse_only_sees_the_job_files_variables(tmp_path: Path) -> None:
    path = job(tmp_path, "[x]\nioengine=null\nrw=read\nsize=${ASSAY_SIZE}\n")
    assert parse_only(path, {"ASSAY_SIZE": "4k"}) is None
    complaint = parse_only(path)
    assert complaint is not None and "ASSAY_SIZE" in complaint


@needs_fio
def test_streams_status_documents_while_fio_runs(tmp_path: Path) -> None:
    fio = FioProcess(job(tmp_path, IDLE_JOB.format(runtime="3s")), tmp_path,
                     status_interval=1)
    fio.start()
    docs, running_at_first = [], None
    for doc in fio.documents(poll=0.1):
        if doc is None:
            continue
        if running_at_first is None:
            running_at_first = fio.proc is not None and fio.proc.poll() is None
        docs.append(doc)
    assert fio.wait() == 0
    assert running_at_first is True  # delivered as they came, not at the end
    assert len(docs) >= 3 and all(d["jobs"][0]["jobname"] == "idle" for d in docs)
    assert fio.last_doc is docs[-1] and docs[-1]["jobs"][0]["read"]["total_ios"] > 0
    saved = fio.stdout_path.read_text()
    stream = JsonStream()
    assert len(stream.feed(saved) + stream.close()) == len(docs)  # the raw record, whole
    assert fio.stdout_path.name == "fio.out.json" and fio.stderr_path.exists()


@needs_fio
def test_stop_ends_a_long_fio_with_its_final_report(tmp_path: Path) -> None:
    fio = FioProcess(job(tmp_path, IDLE_JOB.format(runtime="120s")), tmp_path, name="long")
    fio.start()
    docs = fio.documents(poll=0.1)
    while next(docs) is None:  # running: its first status dump came
        pass
    t0 = time.monotonic()
    fio.stop(grace=10)
    assert time.monotonic() - t0 < 10
    rest = [d for d in docs if d is not None]
    assert fio.wait() >= 0  # it ended by itself (fio 3.33 exits 128 when interrupted)
    final = rest[-1]["jobs"][0]
    assert 0 < final["job_runtime"] < 60_000  # cut short, but a full report
    assert json.loads(json.dumps(final))["read"]["total_ios"] > 0
    fio.stop()  # stopping an ended fio is harmless


def test_stop_kills_what_ignores_the_interrupt(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_FIO", str(fake_fio(tmp_path, "trap '' INT\nexec sleep 60\n")))
    fio = FioProcess(job(tmp_path, "[x]\n"), tmp_path)
    fio.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    fio.stop(grace=0.5)
    assert 0.4 < time.monotonic() - t0 < 3
    assert fio.wait() == -9
    assert list(fio.documents(poll=0.05)) == []


def test_stderr_tail_keeps_the_last_meaningful_lines(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    body = "for i in 1 2 3 4 5 6 7; do echo \"line $i\" >&2; echo >&2; done\nexit 1\n"
    monkeypatch.setenv("ASSAY_FIO", str(fake_fio(tmp_path, body)))
    fio = FioProcess(job(tmp_path, "[x]\n"), tmp_path, name="noisy")
    fio.start()
    assert fio.wait() == 1
    assert fio.stderr_tail(3) == "line 5\nline 6\nline 7"
    assert fio.stderr_tail().splitlines()[0] == "line 3"
    assert fio.stderr_path == tmp_path / "noisy.stderr.txt"


@needs_fio
def test_stderr_says_why_real_fio_died(tmp_path: Path) -> None:
    fio = FioProcess(job(tmp_path, "[x]\nioengine=no-such-engine\nrw=read\nsize=1m\n"),
                     tmp_path)
    fio.start()
    assert fio.wait() != 0
    assert "no-such-engine" in fio.stderr_tail()


@needs_fio
def test_cgroup_procs_puts_fio_and_its_jobs_in_the_group(tmp_path: Path,
                                                         blkio: MakeBlkio) -> None:
    group = blkio()
    procs = Path(group.procs()[LOCAL])
    name = f"/{group.hosts[LOCAL].name}"
    fio = FioProcess(job(tmp_path, IDLE_JOB.format(runtime="60s") + "numjobs=2\n"), tmp_path,
                     cgroup_procs=procs)
    fio.start()
    try:
        docs = fio.documents(poll=0.1)
        while next(docs) is None:
            pass
        assert fio.proc is not None
        pid = fio.proc.pid
        assert Path(f"/proc/{pid}/comm").read_text().strip() == "fio"  # the shell became fio
        assert cgroup_of(pid) == name
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        assert len(children) == 2  # numjobs=2: both forked inside the group
        assert all(cgroup_of(int(c)) == name for c in children)
        inside = procs.read_text().split()
        assert {str(pid), *children} <= set(inside)
        assert cgroup_of(os.getpid()) != name  # only fio moved
    finally:
        fio.stop(grace=10)
        fio.wait()


@needs_fio
def test_env_variables_reach_the_job_file(tmp_path: Path) -> None:
    target = tmp_path / "target dir"
    target.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    text = ("[global]\ndirectory=${ASSAY_TARGET}\nioengine=psync\n[w]\nfilename=w.dat\n"
            "rw=write\nbs=64k\nsize=1m\n")
    fio = FioProcess(job(work, text), work, env={"ASSAY_TARGET": str(target)})
    fio.start()
    assert fio.wait() == 0, fio.stderr_tail()
    assert (target / "w.dat").stat().st_size == 1 << 20
    assert not (work / "w.dat").exists()


def test_no_status_interval_and_extra_args(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    exe = fake_fio(tmp_path, "exit 0\n")
    monkeypatch.setenv("ASSAY_FIO", str(exe))
    fio = FioProcess(job(tmp_path, "[x]\n"), tmp_path, status_interval=0,
                     extra_args=["--section=x"])
    assert fio.args == [str(exe), "--output-format=json+", str(tmp_path / "job.fio"),
                        "--section=x"]
    assert process.find_fio() == str(exe)


@needs_fio
def test_fios_raw_output_is_kept_up_to_a_cap_then_its_last_document(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A day of json+ dumps would be tens of GB: past the cap only the final result is kept."""
    monkeypatch.setattr(rawout, "RAW_CAP", 3000)  # about one status dump
    fio = FioProcess(job(tmp_path, IDLE_JOB.format(runtime="3s")), tmp_path,
                     status_interval=1)
    fio.start()
    docs = [d for d in fio.documents(poll=0.1) if d is not None]
    assert fio.wait() == 0 and len(docs) >= 3
    saved = fio.stdout_path.read_text()
    head, _, last = saved.partition("# assay: fio's output past")
    assert last, "the cap was not applied"
    assert len(head) < 3000 + 10_000  # the line that crossed the cap, no more
    assert json.loads(last.split("\n", 1)[1]) == docs[-1]  # the whole run's result
