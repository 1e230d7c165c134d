"""The verdict on real fio: per-database grading of an Exchange server, Jetstress' 15 s
counter samples, and the hosts' utilisation in run.json, the summary and thresholds."""

from __future__ import annotations

import io
import shutil

import pytest
from rich.console import Console

from assay.report.terminal import print_summary
from assay.results.rundir import read_ndjson, read_record
from assay.thresholds.evaluate import evaluate
from assay.thresholds.grammar import parse
from assay.verdict import host_summary, hosts_failure
from tests.conftest import needs_fio, needs_root

EXCHANGE = """\
name: two-databases
workloads:
  mail:
    kind: exchange
    mailboxes: 2000
    databases: 2
    dataset: 128MiB
timeline:
  warmup: 1s
  duration: 6s
  steps: [{steps}]
thresholds:
  - mail: jetstress-strict
  - host.cpu_pct <= 100
  - host.mem_used_pct_max <= 100
"""


@needs_fio
@needs_root
@pytest.mark.skipif(shutil.which("fsfreeze") is None, reason="fsfreeze is not installed")
def test_a_150ms_stall_passes_jetstress_strict_graded_per_database(run_scenario, loopfs):
    _, mnt = loopfs("xfs", "512M")
    # writes block while the filesystem is frozen: the O_DSYNC log writes that arrive in
    # those 150 ms take about 150 ms, every other IO is fast
    freeze = (f"{{action: command, at: 3s, run: 'fsfreeze -f {mnt}; sleep 0.15; "
              f"fsfreeze -u {mnt}'}}")
    outcome, run = run_scenario(EXCHANGE.format(steps=freeze), target_dir=mnt)
    stats = run["stats"]
    slow = max(stats[c]["lat_max_ms"] for c in stats if c.startswith("mail.log"))
    assert slow >= 100, "no IO waited for the thaw: the test proves nothing"
    assert outcome.status == "passed", [t for t in run["thresholds"] if not t["passed"]]
    graded = {(t["component"], t["metric"]) for t in run["thresholds"]}
    for db in ("mail.db1.read", "mail.db2.read"):
        assert (db, "lat_avg") in graded and (db, "lat_max_sample") in graded
    assert ("mail.log2.write", "lat_max_sample") in graded
    assert ("mail.db.read", "iops") in graded  # the server's target, as Jetstress
    assert ("mail.db.read", "lat_avg") not in graded  # the pooled average hides a database
    # hosts: a row per second in hosts.ndjson, statistics in run.json, graded
    rows = list(read_ndjson(outcome.run_dir / "hosts.ndjson"))
    assert len(rows) >= 5 and {"cpu_pct", "cpu_iowait_pct", "mem_used_pct"} <= set(rows[0])
    assert 0 < run["hosts"]["local"]["mem_used_pct"] <= 100
    assert any(t["component"] == "host.local" and t["passed"] for t in run["thresholds"])
    # the terminal summary: Jetstress' per-database table and the hosts
    buf = io.StringIO()
    print_summary(Console(file=buf, width=200), read_record(outcome.run_dir), outcome.run_dir)
    text = buf.getvalue()
    assert "per database" in text and "db1" in text and "db2" in text
    assert "Poisson arrivals" in text and "Host utilisation" in text


def test_host_statistics_over_the_measured_window_only():
    rows = [{"t": t, "host": "local", "cpu_pct": 10.0 * t, "net.eth0.rx_mbps": 1.0,
             "net.eth1.rx_mbps": 2.0} for t in range(1, 6)]
    s = host_summary(rows, 1.0, 4.0)["local"]
    assert s["seconds"] == 3 and s["cpu_pct"] == 30 and s["cpu_pct_max"] == 40
    assert s["net_rx_mbps"] == 3.0  # summed over the NICs


def test_a_host_that_sent_part_of_the_window_is_graded_on_it_and_said_so():
    rows = [{"t": t, "host": h, "cpu_pct": 50.0} for t in range(1, 21) for h in ("n1", "n2")
            if h == "n1" or t <= 8]  # n2 lost at 8 s
    hosts = host_summary(rows, 0.0, 20.0)
    results = evaluate([parse('host.cpu_pct < 90%')], [], {}, hosts=hosts)
    by = {r.component: r for r in results}
    assert by["host.n1"].passed and by["host.n1"].note == ""
    assert by["host.n2"].passed and by["host.n2"].note.startswith("over 8 of 20 s")
    missing = evaluate([parse('host.n3.cpu_pct < 90%')], [], {}, hosts=hosts)
    assert [r.passed for r in missing] == [False] and "host 'n3'" in missing[0].note


def test_a_hosts_failed_threshold_is_named_with_why() -> None:
    cluster = {"thresholds": [{"expr": "start_skew < 10ms", "observed": 12.5, "passed": False},
                              {"expr": "db@n2.0 back on n2 did IO", "observed": None,
                               "passed": False, "note": "could not write its job file"}],
               "graded": {"n1": {"thresholds": [
                   {"expr": "db.iops >= target", "passed": False,
                    "note": "fell 3.0s behind its schedule"},
                   {"expr": "db.lat_p99 < 20ms", "passed": False, "note": ""},
                   {"expr": "db.behind <= 1", "passed": True, "note": ""}]},
                   "n2": {"thresholds": [{"expr": "db.lat_p99 < 20ms", "passed": True}]}}}
    assert hosts_failure(cluster) == ("start_skew < 10ms (12.5); db@n2.0 back on n2 did IO "
                                      "(could not write its job file); n1: db.iops >= target "
                                      "(fell 3.0s behind its schedule); db.lat_p99 < 20ms")


def test_hosts_are_summarised_in_the_runs_order_this_machine_first():
    """Rows come in whatever order the hosts' agents send them; the summary (run.json, the
    terminal's Hosts table) lists them as the run does."""
    rows = [{"t": 1.0, "host": h, "cpu_pct": 10.0} for h in ("n3", "local", "n1", "x9", "n2")]
    assert list(host_summary(rows, 0.0, 2.0, ["n1", "n2", "n3"])) == \
        ["local", "n1", "n2", "n3", "x9"]
