"""A cluster run's integrity session (integrity/hosts.py) on local "hosts": each is a
LocalRunner, so the agent's integrity command runs here for real, the same command a host
runs over SSH. A host lost mid-run is not verified, and the pass that misses it is incomplete:
no integrity threshold can pass on the others alone."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assay.integrity.hosts import HostsSession, merge
from assay.runners import LocalRunner
from assay.scenario.models import IntegritySpec
from assay.thresholds.evaluate import integrity_result
from assay.thresholds.grammar import parse
from tests.realfs import Machine, machine, needs_root  # noqa: F401

BLOCKS = (1 << 20) // 8192


def group(tmp_path: Path, names: list[str]) -> Any:
    """What HostsSession uses of a RunnerGroup: runners, losses, the placement, the run dir."""
    hosts = {}
    for h in names:
        (tmp_path / h / "target").mkdir(parents=True)
        hosts[h] = SimpleNamespace(instances={"db": 1}, host=SimpleNamespace(
            path=str(tmp_path / h / "target")))
    rd = tmp_path / "run"
    rd.mkdir()
    return SimpleNamespace(
        runners={h: LocalRunner(h, (tmp_path / h / "work")) for h in names}, lost={},
        plan=SimpleNamespace(cluster=SimpleNamespace(hosts=hosts), name="s",
                             scenario=SimpleNamespace(target=SimpleNamespace(platform="local")),
                             thresholds=[parse("integrity.lost == 0")]),
        rd=SimpleNamespace(path=rd))


def session(tmp_path: Path, names: list[str]) -> tuple[HostsSession, Any]:
    for h in names:
        (tmp_path / h / "work").mkdir(parents=True)
    g = group(tmp_path, names)
    spec = IntegritySpec(size=1 << 20, block=8192, rate=200)
    return HostsSession("r1", spec, ["db"], g, True, 7), g


def test_each_host_writes_and_verifies_its_own_blocks_and_the_journals_come_back(
        tmp_path: Path) -> None:
    s, g = session(tmp_path, ["a", "b"])
    try:
        s.prefill()
        assert all((tmp_path / h / "target/assay-integrity" / f"{h}.db.blk").stat().st_size
                   == 1 << 20 for h in ("a", "b"))
        s.start()
        time.sleep(1.5)
        mid = s.verify("check#1", 1.5)
        assert mid["status"] == "completed" and mid["checked"] == 2 * BLOCKS
        assert mid["ok"] == 2 * BLOCKS and set(mid["hosts"]) == {"a", "b"}
        record = s.finish(3.0)
    finally:
        s.end()
    assert record["status"] == "verified" and record["lost"] == record["corrupt"] == 0
    assert [p["label"] for p in record["passes"]] == ["check#1", "final"]
    for f in record["files"]:  # each host's writer acknowledged writes; its journal is back
        assert f["acknowledged"] > 100 and f["write_errors"] == 0 and f["journal_back"]
        assert (s.journal_dir / f["host"] / "db.gen").stat().st_size == 4 * BLOCKS
    assert record["hosts"]["a"]["checked"] == BLOCKS and record["hosts"]["b"]["lost"] == 0
    # each host graded on its own blocks too
    assert [t["passed"] for t in record["hosts"]["a"]["thresholds"]] == [True]


def test_a_host_lost_mid_run_is_not_verified_and_no_threshold_passes_without_it(
        tmp_path: Path) -> None:
    s, g = session(tmp_path, ["a", "b"])
    try:
        s.prefill()
        s.start()
        time.sleep(0.5)
        g.lost["b"] = {"reason": "no answer for 3.5 s"}  # what the group records on a loss
        os.kill(s.writers["b"].pid, signal.SIGKILL)
        record = s.finish(2.0)
    finally:
        s.end()
    final = record["passes"][-1]
    assert final["status"] == "incomplete" and "b: the host was lost" in final["reason"]
    assert final["hosts"]["a"]["status"] == "completed"
    assert final["hosts"]["b"]["status"] == "not verified"
    assert record["status"] == "not verified" and record["hosts"]["b"]["status"] == \
        "not verified"
    result = integrity_result(parse("integrity.lost == 0"), record)
    assert not result.passed and result.note == "no complete verify pass ran"
    [alone] = record["hosts"]["b"]["thresholds"]  # b's own grade fails too; a's passes
    assert not alone["passed"] and record["hosts"]["a"]["thresholds"][0]["passed"]


def test_a_merged_pass_sums_the_hosts_and_names_the_host_of_each_problem() -> None:
    def host(corrupt: list[int], status: str = "completed") -> dict[str, Any]:
        return {"status": status, "seconds": 0.5, "bytes": 8192 * 10, "blocks": 10,
                "checked": 10, "ok": 10 - len(corrupt), "corrupt": len(corrupt), "lost": 0,
                "stale": 0, "unreadable": 0, "workloads": {"db": {
                    "blocks": 10, "checked": 10, "corrupt": len(corrupt),
                    "offsets": {"corrupt": corrupt} if corrupt else {}}}}

    merged = merge("final", 30.0, {"n1": host([]), "n2": host([8192, 16384])})
    assert merged["status"] == "completed" and merged["corrupt"] == 2 and merged["ok"] == 18
    assert merged["workloads"]["db"]["offsets"]["corrupt"] == ["n2:8192", "n2:16384"]
    assert merged["mbps"] == round(2 * 8192 * 10 / 1e6 / 0.5, 1)
    late = merge("final", 30.0, {"n1": host([]), "n2": {"status": "not verified",
                                                        "reason": "the host was lost"}})
    assert late["status"] == "incomplete" and late["checked"] == 10
    assert late["reason"] == "not verified on n2: the host was lost"


def test_the_archives_integrity_command_runs_on_a_bare_python(tmp_path: Path) -> None:
    """What a host runs: the zipapp on `python3 -I` (no site-packages: no assay, no isal)."""
    import json
    import subprocess

    from assay.agent.integrity import ORDERS, unpack
    from assay.runners import agent

    (tmp_path / agent.ARCHIVE).write_bytes(agent.archive())
    spec = {"areas": [{"workload": "db", "path": str(tmp_path / "t" / "db.blk"), "block": 4096,
                       "blocks": 256, "writer": 9}], "rate": 200, "direct": True, "seed": 3}
    proc = subprocess.Popen(["python3", "-I", agent.ARCHIVE, "integrity", json.dumps(spec)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    rows = agent.rows(proc.stdout)
    try:
        first = next(rows)
        assert first["prefilled"]["db"]["blocks"] == 256
        os.kill(first["pid"], getattr(signal, f"SIG{ORDERS['start']}"))
        time.sleep(1.2)
        os.kill(first["pid"], getattr(signal, f"SIG{ORDERS['verify']}"))
        passed = next(r for r in rows if "pass" in r)["pass"]
        os.kill(first["pid"], getattr(signal, f"SIG{ORDERS['end']}"))
        rest = list(rows)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert passed["status"] == "completed" and passed["ok"] == passed["checked"] == 256
    [stopped] = [r for r in rest if "stopped" in r]
    assert stopped["stopped"]["db"]["acknowledged"] > 50
    [journal] = [r for r in rest if r.get("journal") == "db"]
    assert len(unpack(journal["gen"])) == 4 * 256  # the checkpoint, one u32 per block


def test_verify_later_checks_each_hosts_blocks_there_against_its_journal(
        tmp_path: Path) -> None:
    """`assay verify RUN --hosts` for a cluster run (integrity/hostverify.py): each host's
    agent checks its own blocks again, against the journal the run brought back."""
    import threading

    from assay.exitcodes import UserError
    from assay.hosts.inventory import Host
    from assay.integrity import hostverify

    s, g = session(tmp_path, ["a", "b"])
    try:
        s.prefill()
        s.start()
        time.sleep(1.0)
        section = s.finish(1.0)
    finally:
        s.end()
    assert section["status"] == "verified"
    run_dir = g.rd.path
    inventory = [Host("a", "192.0.2.1"), Host("b", "192.0.2.2")]
    here = lambda host, work: LocalRunner(host.name, work)  # noqa: E731 - the agent, here
    specs = hostverify.specs(run_dir, section, inventory)
    later = hostverify.on_hosts(specs, threading.Event(), here)
    assert later["status"] == "completed" and set(later["hosts"]) == {"a", "b"}
    assert later["checked"] == later["ok"] == 2 * BLOCKS and later["label"] == "assay verify"
    # a block of b's damaged since: found, on b, at its offset
    blk = tmp_path / "b" / "target" / "assay-integrity" / "b.db.blk"
    with open(blk, "r+b") as f:
        f.seek(8192 * 7 + 100)
        f.write(b"\xff\xff\xff\xff")
    later = hostverify.on_hosts(hostverify.specs(run_dir, section, inventory),
                                threading.Event(), here)
    assert later["corrupt"] == 1 and later["hosts"]["a"]["corrupt"] == 0
    assert later["workloads"]["db"]["offsets"]["corrupt"] == [f"b:{8192 * 7}"]
    # b's file gone: b is not verified, and the pass has no verdict
    blk.unlink()
    later = hostverify.on_hosts(hostverify.specs(run_dir, section, inventory),
                                threading.Event(), here)
    assert later["status"] == "incomplete" and "not verified on b:" in later["reason"]
    assert "is gone" in later["reason"] and later["hosts"]["a"]["status"] == "completed"
    # refused before any host is reached: no inventory, or one without the run's hosts
    with pytest.raises(UserError, match=r"give --hosts INVENTORY"):
        hostverify.specs(run_dir, section, None)
    with pytest.raises(UserError, match=r"the inventory has no host b: run run ran on a, b"):
        hostverify.specs(run_dir, section, inventory[:1])
    (run_dir / "integrity" / "a" / "db.gen").write_bytes(b"")  # a damaged journal
    with pytest.raises(UserError, match=r"journal of workload 'db' is missing or damaged"):
        hostverify.specs(run_dir, section, inventory)


def test_verify_later_shows_the_bytes_every_host_has_read_as_one_figure() -> None:
    """Each host's agent says what it has read so far (a total, once a second): the pass's
    meter adds the hosts' increments, and shows at most once a second."""
    import subprocess
    import threading

    from assay.hosts.inventory import Host
    from assay.integrity import hostverify
    from assay.integrity.offline import Meter

    class Said:  # a host whose agent read 100, then 250 bytes, and passed
        def write_job(self, name: str, text: str) -> None:
            pass

        def agent(self, command: str, args: list[str]) -> subprocess.Popen[bytes]:
            rows = '{"progress":100}\n{"progress":250}\n{"pass":{"status":"completed"}}\n'
            return subprocess.Popen(["printf", rows], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)

        def close(self) -> None:
            pass

    shown: list[tuple[int, int]] = []
    meter = Meter(1000, lambda read, total: shown.append((read, total)))
    specs = {h: (Host(h, "192.0.2.1"), {}) for h in ("a", "b")}
    done = hostverify.on_hosts(specs, threading.Event(), lambda h, w: Said(),  # type: ignore
                               meter)
    assert done["status"] == "completed" and meter.read == 500  # 250 on each host
    assert len(shown) == 1 and shown[0][1] == 1000  # the first report; the rest within 1 s
    meter.done()  # the pass ended: the bar ends where it did
    assert shown[-1] == (500, 1000)


@needs_root
def test_a_host_whose_target_fills_is_named_with_why(
        tmp_path: Path, machine: Machine) -> None:  # noqa: F811
    """A full filesystem under the blocks (the space check before any IO counts them, but
    another writer may fill it): the host's agent says why (a short write is an error, not
    blocks journaled that the device did not take), and the run names the host and why."""
    s, g = session(tmp_path, ["a", "b"])
    g.plan.cluster.hosts["b"].host.path = str(machine.tmpfs("512k"))  # 1 MiB of blocks
    try:
        with pytest.raises(OSError, match=r"b: the integrity blocks could not be written: "
                                          r"prefill: (a short write|No space left)"):
            s.prefill()
    finally:
        s.end()


def test_an_agent_that_ended_is_named_by_its_last_stderr_line_and_asking_does_not_wait(
        tmp_path: Path) -> None:
    """The command ended without an error row (python3 missing, a crash): the run names the
    host's last stderr line. `gone` is asked once a second, so it never waits itself."""
    import subprocess

    from assay.integrity.hostwriter import HostWriter

    class Dies:
        def agent(self, command: str, args: list[str]) -> subprocess.Popen[bytes]:
            # its output closes a second before it ends
            return subprocess.Popen(["sh", "-c", "exec 1>&-; echo starting >&2; "
                                     "echo 'boom: no python' >&2; sleep 1; exit 3"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    g = SimpleNamespace(runners={"a": Dies()}, lost={})
    w = HostWriter("a", g, {}, tmp_path / "a.ndjson")  # type: ignore[arg-type]
    assert w.ended.wait(10)
    began = time.monotonic()
    assert w.gone == "the integrity command ended (boom: no python)"
    assert time.monotonic() - began < 0.1
    with pytest.raises(OSError, match=r"a: the integrity blocks could not be written: "
                                      r"the integrity command ended \(boom: no python\)"):
        w.wait_ready()
    w.end()
