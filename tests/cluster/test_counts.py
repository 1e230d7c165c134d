"""Cluster runs counted and refused right, fast (recorded real fio through ReplayRunner; the
same paths on real hosts: tests/cluster/test_lab_first_run.py)."""

from __future__ import annotations

from pathlib import Path

from assay.cluster.hostcheck import _facts
from assay.plan.build import plan_text
from assay.runners import ReplayRunner
from assay.runners.base import CommandResult
from tests.cluster.test_group import REPLAY, hosts_in, run


def test_each_host_and_start_skew_verdicts_are_counted(tmp_path: Path) -> None:
    text = (REPLAY / "scenario.yaml").read_text() + \
        '  each_host.db.data.read.lat_p99: "< 1us"\n' \
        '  each_host.db.data.read.iops: "> 0"\n'
    hosts = hosts_in(tmp_path, ["n1", "n2", "n3"])
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts)
    out, rec = run(plan, tmp_path, lambda h, w: ReplayRunner(REPLAY / "steady", h, w))
    assert out.status == "failed"
    merged = rec["thresholds"]
    graded = rec["cluster"]["graded"]
    per_host = [t for g in graded.values() for t in g["thresholds"]]
    assert len(per_host) == 6  # 2 per host
    assert rec["verdict"]["failed"] == sum(not t["passed"] for t in merged + per_host) >= 3
    assert rec["verdict"]["passed"] == sum(t["passed"] for t in merged + per_host) >= 3


def test_the_header_announces_the_count_the_summary_ends_with(tmp_path: Path) -> None:
    """Each threshold once per component it matches, each host's own, the cluster's start
    skew: counted before the run as the verdict counts them after it."""
    import io
    import re

    from rich.console import Console

    from assay.cli.run import banner

    text = (REPLAY / "scenario.yaml").read_text() + \
        '  each_host.db.data.read.iops: "> 0"\n  start_skew: "< 500ms"\n'
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts_in(tmp_path, ["n1", "n2",
                                                                                    "n3"]))
    header = io.StringIO()
    banner(Console(file=header, width=200), plan, "3 hosts")
    said = header.getvalue()
    announced = re.search(r"thresholds (\d+)", said)
    out, rec = run(plan, tmp_path, lambda h, w: ReplayRunner(REPLAY / "steady", h, w))
    v = rec["verdict"]
    assert announced and int(announced.group(1)) == v["passed"] + v["failed"] + \
        v["not_graded"] == 11, said
    # `db: rate` is a rate and a schedule check on each of 3 components, the p99 one: 7
    assert "7 on the merged series, 1 on each of 3 hosts, 1 of the cluster (start_skew)" in said


def test_a_host_taken_down_is_counted_up_to_its_loss() -> None:
    """node-failure's last host is lost at 2m: its `after host_fail` thresholds are not graded
    (cluster/hostseries.py), so they are not announced either."""
    from assay.hosts import inventory
    from assay.plan import builtin_scenarios
    from assay.plan.tally import tally

    plan = plan_text(builtin_scenarios()["node-failure"], "node-failure",
                     hosts=inventory.example())
    said = tally(plan).describe()
    assert said == "21: 1 on the merged series, 20 on the hosts' own series (n1 8, n2 8, n3 4)"


def test_device_target_plans_on_a_cluster_and_on_one_host(tmp_path: Path) -> None:
    """`target`: the disk under each host's target, a local run's one host included (its
    groups are tests/participants/test_blkio.py's)."""
    text = (REPLAY / "scenario.yaml").read_text().replace(
        "workloads:", "target:\n  throttle: [{device: target, read_iops: 100}]\nworkloads:")
    for hosts in (hosts_in(tmp_path, ["n1", "n2"]), None):
        plan = plan_text(text, "t.yaml", hosts=hosts)
        assert plan.scenario.target.throttle[0].device == "target"
        assert plan.scenario.target.throttle[0].read_iops == 100


def test_host_facts_are_numbers_and_unknowns_are_left_out() -> None:
    facts = _facts(CommandResult(0, "Linux 6.1.0\n2\n25276100608\next4\n-\n", ""))
    assert facts == {"kernel": "Linux 6.1.0", "cpus": 2, "mem_bytes": 25276100608, "fs": "ext4"}


def test_the_summary_says_why_a_host_has_no_p99_from_due(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from assay.report.terminal import print_summary
    from assay.results.rundir import read_record

    plan = plan_text((REPLAY / "scenario.yaml").read_text(), str(REPLAY / "scenario.yaml"),
                     hosts=hosts_in(tmp_path, ["n1", "n2"]))
    # n2's recording has no issue logs: the agent there (run for real) reads none
    recordings = {"n1": "due-steady", "n2": "steady"}
    out, rec = run(plan, tmp_path, lambda h, w: ReplayRunner(REPLAY / recordings[h], h, w))
    assert rec["intended_latency"].startswith("from fio's issue logs")
    assert list(rec["cluster"]["due_time"]["errors"]) == ["n2"]
    graded = rec["cluster"]["graded"]
    assert graded["n1"]["stats"]["db.data.read"]["intended"] is not None
    assert graded["n2"]["stats"]["db.data.read"]["intended"] is None
    text = io.StringIO()
    print_summary(Console(file=text, width=200), read_record(out.run_dir), out.run_dir)
    said = text.getvalue()
    assert "p99 from due" in said
    assert "p99 from due on n2: its issue logs held no IO" in said


def test_after_a_loss_the_target_and_percentage_are_the_survivors(tmp_path: Path) -> None:
    text = (REPLAY / "scenario.yaml").read_text()
    plan = plan_text(text, str(REPLAY / "scenario.yaml"),
                     hosts=hosts_in(tmp_path, ["n1", "n2", "n3"], shared=True))
    recordings = {"n1": "steady", "n2": "steady", "n3": "died"}
    out, rec = run(plan, tmp_path, lambda h, w: ReplayRunner(REPLAY / recordings[h], h, w))
    lost_t = rec["cluster"]["lost"]["n3"]["t"]
    read = rec["stats"]["db.data.read"]
    full = 3 * 400 * 0.7  # three instances of 280 read IO/s
    start, end = rec["measured_window_s"]
    # the time-weighted target: three hosts' until the loss, two hosts' after it
    expected = (full * (max(lost_t, start) - start) + full * 2 / 3 * (end - max(lost_t, start))) \
        / (end - start)
    assert lost_t < end and read["target_iops"] < full * 0.99
    assert abs(read["target_iops"] - expected) < full * 0.05, (read["target_iops"], expected)
    assert read["achieved_pct"] > 95  # the survivors kept their rate: not a red 70 %
    rate = [t for t in rec["thresholds"] if t["metric"] == "iops"]
    assert rate and all(t["passed"] for t in rate), rate


def test_the_merged_series_and_each_hosts_are_on_one_clock(tmp_path: Path) -> None:
    from assay.results.blocklog import read_rows

    plan = plan_text((REPLAY / "scenario.yaml").read_text(), str(REPLAY / "scenario.yaml"),
                     hosts=hosts_in(tmp_path, ["n1", "n2", "n3"], shared=True))
    recordings = {"n1": "steady", "n2": "gap", "n3": "steady"}
    out, rec = run(plan, tmp_path, lambda h, w: ReplayRunner(REPLAY / recordings[h], h, w))
    merged = {r["t"] for r in read_rows(out.run_dir, "samples")}
    for h in ("n1", "n2", "n3"):  # a host's first second ends when its jobs had run one
        own = sorted({r["t"] for r in read_rows(out.run_dir / "hosts" / h, "samples")})
        assert len(own) > 4 and set(own[1:]) <= merged, (h, own, sorted(merged))
    # so a host's rate and the cluster's are over the same seconds: they add up
    start, end = rec["measured_window_s"]
    hosts = sum(s["iops"] for g in rec["cluster"]["graded"].values()
                for c, s in g["stats"].items() if c == "db.data.read")
    assert abs(rec["stats"]["db.data.read"]["iops"] - hosts) <= 0.005 * hosts, hosts
