"""Each host's utilisation each second (participants/utilisation.py): the agent's
`utilisation` command on every host, this machine's probe as `local`, a lost host's rows
ending at its loss, and a host whose agent cannot run said so without ending the run. The
agent runs for real here (LocalRunner: this interpreter, as over SSH a host's python3); on
the lab's hosts: tests/cluster/test_lab.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from assay.participants.base import Traits
from assay.participants.utilisation import Utilisation
from assay.runners import LocalRunner, ReplayRunner
from tests.cluster.test_group import REPLAY


def test_the_agent_sends_a_row_each_interval_and_ends_when_its_stdin_closes() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "assay.agent", "utilisation", "0.2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    rows = [json.loads(proc.stdout.readline()) for _ in range(3)]
    began = time.monotonic()
    proc.stdin.close()
    assert proc.wait(timeout=5) == 0 and time.monotonic() - began < 2.0
    for r in rows:
        assert 0 <= r["cpu_pct"] <= 100 and 0 < r["mem_used_pct"] <= 100
        assert abs(r["t"] - time.time()) < 10
    gaps = [b["t"] - a["t"] for a, b in zip(rows, rows[1:], strict=False)]
    assert all(0.1 < g < 0.35 for g in gaps), gaps  # on the interval's boundaries


class Broken(LocalRunner):
    def agent(self, command: str, args=()):  # type: ignore[no-untyped-def, override]
        raise OSError("ssh: connect to host n3 port 22: No route to host")


def test_every_hosts_rows_on_the_axis_a_lost_hosts_end_and_a_broken_host_is_said(
        tmp_path: Path) -> None:
    runners = {h: LocalRunner(h, tmp_path / h) for h in ("n1", "n2")}
    for r in runners.values():
        r.workdir.mkdir()
    runners["n3"] = Broken("n3", tmp_path)
    lost: list[str] = []
    u = Utilisation(runners, lost)
    assert Traits.HOSTS in u.traits
    origin = time.time()
    u.start()
    time.sleep(2.6)
    rows = u.host_rows(2.0, origin)
    by_host = {h: [r for r in rows if r["host"] == h] for h in ("local", "n1", "n2", "n3")}
    assert len(by_host["local"]) == 1 and by_host["local"][0]["t"] == 2.0
    for h in ("n1", "n2"):  # a row a second from each, placed by its arrival
        assert 2 <= len(by_host[h]) <= 3, rows
        assert all(0 <= r["t"] <= time.time() - origin and 0 <= r["cpu_pct"] <= 100
                   for r in by_host[h])
    assert not by_host["n3"]
    lost.append("n2")  # lost: what it sent before is kept, then nothing more of it
    assert len([r for r in u.host_rows(2.5, origin) if r["host"] == "n2"]) <= 1
    time.sleep(1.2)
    later = u.host_rows(3.5, origin)
    assert {r["host"] for r in later} == {"local", "n1"}
    ended = list(u.agents.values())
    section = u.collect("passed")
    assert section is not None and section["hosts"] == ["n1", "n2"]
    assert list(section["errors"]) == ["n3"] and "No route to host" in section["errors"]["n3"]
    assert not u.agents  # every agent ended, its pipes closed (a search's trials add up)
    assert all(p.stdout.closed and p.stderr.closed for p in ended)


def test_a_local_run_measures_this_machine_only_and_a_replayed_host_nothing(
        tmp_path: Path) -> None:
    alone = Utilisation()
    alone.start()
    [row] = alone.host_rows(1.0, time.time() - 1)
    assert row["host"] == "local" and alone.collect("passed") is None
    # a replayed host has no /proc of its own: this machine's is not measured for it
    replayed = Utilisation({"n1": ReplayRunner(REPLAY / "due-steady", "n1", tmp_path)})
    replayed.start()
    time.sleep(1.5)
    assert [r["host"] for r in replayed.host_rows(1.0, time.time() - 2)] == ["local"]
    section = replayed.collect("passed")
    assert section is not None and section["hosts"] == [] and "n1" in section["errors"]
