"""SshRunner on a real lab cluster (sshd in network namespaces) with real fio: the same
behaviours as LocalRunner's, plus a synchronised start across hosts and nothing left running
on a host when the process holding the sessions is killed outright."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.fio import rawout
from assay.platforms.labcluster import Cluster
from assay.runners import Runner
from assay.runners.ssh import SshRunner, ssh_runner
from assay.runners.sshsessions import MARK
from tests.conftest import needs_fio
from tests.runners.test_local import JOB
from tests.sshlab import cluster, hosts_of, needs_netns  # noqa: F401

pytestmark = [needs_netns, needs_fio]


def env_of(runner: SshRunner) -> dict[str, str]:
    assert runner.target
    return {"ASSAY_TARGET": runner.target, "ASSAY_DIRECT": "0"}


def fio_on(c: Cluster) -> dict[str, list[str]]:
    """fio processes (fio itself and its job processes) in each host's namespace."""
    out: dict[str, list[str]] = {}
    for h in c.hosts:
        pids = subprocess.run(["ip", "netns", "pids", h.netns], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if comm == "fio":
                out.setdefault(h.name, []).append(pid)
    return out


@pytest.fixture
def runners(cluster: Cluster, tmp_path: Path):  # noqa: F811
    """One prepared runner per lab host, closed afterwards."""
    made = []
    for h in hosts_of(cluster):
        work = tmp_path / "hosts" / h.name
        work.mkdir(parents=True)
        r = SshRunner(h, work)
        made.append(r)
        assert r.target
        r.prepare(Path(r.target), [])
    yield made
    for r in made:
        r.close()


def test_job_file_is_kept_verbatim_here_and_there_and_checked_by_fio(runners) -> None:
    runner = runners[0]
    text = JOB % "2s" + "# ünïcode, a tab\t and a CR\r\n"
    path = runner.write_job("run.fio", text)
    assert path.read_bytes() == text.encode()
    remote = runner.run(["sha256sum", f"{runner.remote_dir}/run.fio"]).stdout.split()[0]
    assert remote == hashlib.sha256(text.encode()).hexdigest()
    assert runner.check_job("run.fio", env_of(runner)) is None
    runner.write_job("bad.fio", "[x]\nrw=sideways\n")
    assert "sideways" in (runner.check_job("bad.fio", env_of(runner)) or "")
    started = runner.start("bad.fio", env_of(runner))  # fio's own status, not ssh's
    assert not [d for d in started.documents() if d is not None] and started.wait() == 1
    assert "sideways" in started.stderr_tail()
    # the remote run directory is the runner's: removed when it is closed
    where = runner.remote_dir
    runner.close()
    assert not Path(where).exists()  # the lab's hosts share this machine's filesystem


def test_starts_at_the_instant_streams_each_second_and_fetches_logs(runners) -> None:
    runner = runners[0]
    assert abs(runner.offset) < 0.005 and 0 < runner.rtt < 0.1  # one machine: one clock
    runner.write_job("run.fio", JOB % "3s")
    at = runner.clock() + 1.0
    fio = runner.start("run.fio", env_of(runner), at=at, sections=["a"])
    assert at <= fio.started < at + 0.05, fio.started - at  # the host's clock
    arrived, docs = [], []
    for d in fio.documents():
        if d is not None:
            arrived.append(time.monotonic())
            docs.append(d)
    assert fio.wait() == 0, fio.stderr_tail()
    assert len(docs) >= 3 and fio.last_doc is docs[-1]  # one dump a second, then the report
    gaps = sorted(b - a for a, b in zip(arrived, arrived[1:], strict=False))
    assert 0.7 < gaps[len(gaps) // 2] < 1.3, gaps  # streamed as they come, not at the end
    assert {j["jobname"] for d in docs for j in d["jobs"]} == {"a"}  # only that section
    logs = runner.fetch_logs()
    assert [p.name for p in logs] == ["a_lat.1.log"] and logs[0].stat().st_size > 0
    assert not list(runner.workdir.glob("*_clat.*")) and not list(runner.workdir.glob("*_slat.*"))
    assert (runner.workdir / "run.out.json").read_text().lstrip().startswith("{")  # verbatim
    assert "assay-remote" not in (runner.workdir / "run.stderr.txt").read_text()


def test_stop_ends_fio_early_and_keeps_its_final_report(runners, cluster: Cluster) -> None:  # noqa: F811
    runner = runners[1]
    runner.write_job("run.fio", JOB % "60s")
    fio = runner.start("run.fio", env_of(runner))
    t0 = time.monotonic()
    for doc in fio.documents():
        if doc is not None:
            break
    assert fio_on(cluster).get(runner.host)
    fio.stop()
    rest = [d for d in fio.documents() if d is not None]
    assert fio.wait() == 128  # what fio itself exits with when stopped by SIGINT
    assert time.monotonic() - t0 < 15
    assert rest and fio.last_doc is rest[-1] and rest[-1]["jobs"]  # the final report
    assert not fio_on(cluster).get(runner.host)


def test_three_hosts_started_for_one_instant_begin_together(runners) -> None:
    for r in runners:
        r.write_job("run.fio", JOB % "1s")
    at = max(r.clock() for r in runners) + 1.5
    runs = [r.start("run.fio", env_of(r), at=at, sections=["b"]) for r in runners]
    started = [f.started for f in runs]
    for f in runs:
        list(f.documents())
        assert f.wait() == 0, f.stderr_tail()
    skew = max(started) - min(started)
    print(f"\nstart skew over {len(runs)} hosts: {skew * 1000:.1f} ms "
          f"(late after the instant: {[round((s - at) * 1000, 1) for s in started]} ms)")
    assert all(s >= at for s in started)
    # a few ms when the hosts are machines of their own; here three hosts and the rest of
    # the suite share two cores, and a wake-up can wait tens of ms for one (bench/start_skew.py
    # measures it quietly). 5 % of a sampling second still lines the hosts' seconds up
    assert skew < 0.050


KILLED = """\
import sys, time
from pathlib import Path
from assay.hosts import inventory
from assay.runners.ssh import SshRunner
job, base = sys.argv[2], Path(sys.argv[3])
for h in inventory.load(sys.argv[1]):
    (base / h.name).mkdir()
    r = SshRunner(h, base / h.name)
    r.prepare(Path(h.path), [])
    r.write_job("run.fio", job)
    f = r.start("run.fio", {"ASSAY_TARGET": h.path, "ASSAY_DIRECT": "0"})
    print(h.name, f.started, r.remote_dir, r.ssh.control.parent, flush=True)
time.sleep(600)
"""


def test_sigkill_of_the_session_holder_leaves_nothing_on_any_host(cluster: Cluster,  # noqa: F811
                                                                  tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", KILLED, cluster.inventory, JOB % "60s",
                             str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines = [proc.stdout.readline().split() for _ in cluster.hosts]
    remote_dirs = [w[2] for w in lines]
    end = time.monotonic() + 10
    while time.monotonic() < end:  # fio and its job processes running on every host
        running = fio_on(cluster)
        if all(len(running.get(h.name, [])) >= 3 for h in cluster.hosts):
            break
        time.sleep(0.1)
    assert all(len(running.get(h.name, [])) >= 3 for h in cluster.hosts), running
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = time.monotonic()
    while fio_on(cluster) and time.monotonic() < killed + 10:
        time.sleep(0.1)
    assert not fio_on(cluster), fio_on(cluster)
    print(f"\nno fio left on any host {time.monotonic() - killed:.2f} s after SIGKILL")
    while any(Path(d).exists() for d in remote_dirs) and time.monotonic() < killed + 10:
        time.sleep(0.1)
    assert not any(Path(d).exists() for d in remote_dirs)  # the remote run directories too
    for w in lines:  # the killed process's control sockets: its ssh masters end by themselves
        shutil.rmtree(w[3], ignore_errors=True)


def test_a_target_that_cannot_be_written_is_a_clear_error(cluster: Cluster,  # noqa: F811
                                                          tmp_path: Path) -> None:
    host = hosts_of(cluster)[2]
    locked = Path(cluster.hosts[2].mountpoint) / f"locked-{uuid.uuid4().hex[:6]}"
    locked.mkdir()
    subprocess.run(["chattr", "+i", str(locked)], check=True)  # even root cannot write
    try:
        with SshRunner(dataclasses.replace(host, path=str(locked)), tmp_path) as runner, \
                pytest.raises(UserError) as e:
            runner.prepare(locked, ["db"])
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    msg = str(e.value)
    assert msg.startswith(f"n3: cannot write to the target {locked} there (user root): ")
    assert "Operation not permitted" in msg


def test_runs_commands_with_metacharacters_inert_and_is_the_engines_factory(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    pwned = tmp_path / "pwned"
    words = [f"$(touch {pwned})", f"`touch {pwned}`", f"a' ; touch {pwned}; '", "*", "$HOME"]
    factory = functools.partial(ssh_runner, hosts_of(cluster))
    runner: Runner = factory("n2", tmp_path)
    assert isinstance(runner, SshRunner) and runner.host == "n2"
    with runner:
        r = runner.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")
        echoed = runner.run(["printf", "%s\\0", *words])
        assert echoed.stdout.split("\0")[:-1] == words and not pwned.exists()
        subs = ["db", "it's; touch x"]
        assert runner.target
        runner.prepare(Path(runner.target), subs)
        assert all((Path(runner.target) / s).is_dir() for s in subs)
    with pytest.raises(UserError, match="not in the inventory"):
        factory("n9", tmp_path)


def test_close_stops_what_still_runs_and_removes_the_remote_directory(
        runners, cluster: Cluster) -> None:  # noqa: F811
    runner = runners[2]
    runner.write_job("run.fio", JOB % "60s")
    fio = runner.start("run.fio", env_of(runner), at=runner.clock() + 0.3)
    assert fio.started and fio.pid
    where = runner.remote_dir
    t0 = time.monotonic()
    runner.close()
    assert time.monotonic() - t0 < 8
    assert not fio_on(cluster).get(runner.host) and not Path(where).exists()
    # 128: fio ended by the SIGINTs close sends for 5 s; 143 (sh's status of a SIGTERM): a fio
    # still setting up its jobs on a loaded machine ignores them, and the hang-up ends it
    assert fio.wait() in (128, 143) and (runner.workdir / "run.out.json").stat().st_size > 0


def test_fios_raw_output_is_kept_up_to_the_cap_then_its_final_report(
        runners, monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote fio's json+ dumps are capped as a local fio's are (a 5-minute 3-host run kept
    244 MB a host without it); the file still ends with the whole run's result."""
    monkeypatch.setattr(rawout, "RAW_CAP", 4 << 10)  # less than one status dump
    runner = runners[0]
    runner.write_job("run.fio", JOB % "3s")
    fio = runner.start("run.fio", env_of(runner))
    docs = [d for d in fio.documents() if d is not None]
    assert fio.wait() == 0, fio.stderr_tail()
    assert len(docs) >= 3
    saved = (runner.workdir / "run.out.json").read_bytes()
    head, marker, rest = saved.partition(b"\n# assay: fio's output past")
    assert marker, "the cap was not applied"
    assert len(head) < (4 << 10) + (64 << 10)  # the chunk read that crossed the cap, no more
    final = json.loads(rest.split(b"\n", 1)[1])
    assert final == docs[-1] and final["jobs"]  # the whole run's result
    assert not fio.write_error


def kill_holder(where: Path) -> None:
    """End the shell holding a remote run directory outright: its own cleanup never runs,
    as when a host restarts."""
    pid = int((where / MARK).read_text().split()[0])
    os.killpg(pid, signal.SIGKILL)
    end = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert where.is_dir()


def test_abandon_removes_the_run_directory_of_a_host_that_answers_again(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    runner = SshRunner(hosts_of(cluster)[1], tmp_path)
    where = Path(runner.remote_dir)
    kill_holder(where)
    runner.abandon()
    assert not where.exists()


def test_a_host_back_after_its_sessions_ended_gets_a_new_run_directory(
        runners, cluster: Cluster) -> None:  # noqa: F811
    """A cut longer than SSH's keepalive ends the session holding the run directory; when the
    link is back the host learns of it and removes the directory. A rejoin's job file then
    goes into a new one and runs (it found no directory: the Ceph node-failure run in CI)."""
    runner = runners[1]
    runner.write_job("run.fio", JOB % "1s")
    old = Path(runner.remote_dir)
    assert runner._anchor is not None
    runner._anchor.kill()  # our end of the session gone, as when the master connection died
    end = time.monotonic() + 10
    while old.exists() and time.monotonic() < end:  # the host removes it (its shell's trap)
        time.sleep(0.05)
    assert not old.exists()
    runner.write_job("rejoin.fio", JOB % "2s")
    new = Path(runner.remote_dir)
    assert new != old and (new / "rejoin.fio").read_text() == JOB % "2s"
    fio = runner.start("rejoin.fio", env_of(runner))
    docs = [d for d in fio.documents() if d is not None]
    assert fio.wait() == 0, fio.stderr_tail()
    assert sum(j["write"]["total_ios"] + j["read"]["total_ios"] for j in docs[-1]["jobs"]) > 0
    runner.close()
    assert not new.exists()


def test_the_run_directory_is_removed_when_the_hosts_sshd_drops_the_connection(
        runners, cluster: Cluster) -> None:  # noqa: F811
    """A reset connection (a cut host's link back: sshd learns its peer is gone) closes the
    sessions' pipes before the holder hears of it: its removal must not need them (it died
    of SIGPIPE, leaving the directory, on the Ceph lab)."""
    runner = runners[0]
    where = Path(runner.remote_dir)
    [netns] = [h.netns for h in cluster.hosts if h.name == runner.host]
    pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True,
                          text=True).stdout.split()
    ours = [int(p) for p in pids if "@notty" in _cmdline(p)]  # sshd serving our connection
    assert ours
    for pid in ours:
        os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 10
    while where.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert not where.exists()


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_assay_clean_hosts_removes_a_run_directory_left_behind_and_nothing_else(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    host = hosts_of(cluster)[0]
    left = SshRunner(host, tmp_path / "left")
    live = SshRunner(host, tmp_path / "live")
    where = Path(left.remote_dir)
    kill_holder(where)
    left.close()
    base = where.parent
    tag = uuid.uuid4().hex[:8]
    unmarked = base / f"assay-{tag}.ABCDEFGH"  # named like ours, without the mark
    misnamed = base / f"assay-{tag}"  # the mark of a gone shell, not named like ours
    for d in (unmarked, misnamed):
        d.mkdir()
        (d / "keep").write_text("x")
    (misnamed / MARK).write_text(f"{2 ** 22 + 7} x\n")
    try:
        r = subprocess.run([sys.executable, "-m", "assay", "clean", "--results",
                            str(tmp_path / "results"), "--hosts", cluster.inventory],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        said = " ".join(r.stdout.split())
        # the lab's hosts share this machine's /tmp: any of them may be the one that removes it
        assert re.search(rf"n\d: removed the run directory {re.escape(str(where))} a run left "
                         rf"there", said), said
        assert not where.exists()
        assert Path(live.remote_dir).is_dir()  # a run still holding its directory
        assert (unmarked / "keep").is_file() and (misnamed / "keep").is_file()
    finally:
        live.close()
        for d in (unmarked, misnamed):
            shutil.rmtree(d, ignore_errors=True)
