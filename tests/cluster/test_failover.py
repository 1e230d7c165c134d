"""Failover and rejoin, fast: the plan (survivors, standby copies, refusals) and the engine
over recorded real fio (ReplayRunner). On real hosts: tests/cluster/test_lab_failover.py."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from assay.cluster.failover import add_window
from assay.metrics.sampler import ComponentSpec
from assay.plan.build import plan_text
from assay.plan.failover import restart_text
from assay.report.terminal import print_summary
from assay.results.blocklog import read_rows
from assay.results.rundir import read_ndjson, read_record
from assay.runners import ReplayRunner
from assay.runners.replay import ReplayRun
from assay.scenario.yamlsource import ScenarioInvalid
from tests.cluster.test_group import REPLAY, hosts_in, run

FAILOVER = (REPLAY / "scenario.yaml").read_text().replace(
    "load: {pacing: even}}", "load: {pacing: even},\n       failover: {after: 1s}}")


def test_each_instance_gets_a_survivor_round_robin_and_its_files_there(tmp_path):
    text = FAILOVER.replace("failover:", "count_per_host: 2, failover:")
    plan = plan_text(text, "s.yaml", hosts=hosts_in(tmp_path, ["n1", "n2", "n3"]))
    assert plan.cluster is not None
    where = {h: [(m.instance.k, m.to) for m in ms] for h, ms in plan.cluster.moves.items()}
    # from the host after its own, in turn: n3's two instances go to n1 then n2
    assert where == {"n1": [(0, "n2"), (1, "n3")], "n2": [(0, "n3"), (1, "n1")],
                     "n3": [(0, "n1"), (1, "n2")]}
    # each survivor's prefill writes the standby copies of what it may take, counted in
    # its files (the free-space check before any IO covers them)
    n1 = plan.cluster.hosts["n1"]
    assert {"n1.0", "n1.1", "n2.1.standby", "n3.0.standby"} == set(n1.subdirs)
    assert "filename=n3.0.standby/db.data.1.dat" in plan.jobfiles["n1"]["prefill.fio"]
    assert "standby" not in plan.jobfiles["n1"]["run.fio"]
    move = plan.cluster.moves["n3"][0]
    assert "filename=n3.0.standby/db.data.1.dat" in move.text
    assert plan.cluster.to_json()["n3"]["failover"][0] == {
        "workload": "db", "instance": 0, "to": "n1", "after_s": 1.0}


@pytest.mark.parametrize(("change", "hosts", "message"), [
    ("", None, "failover restarts a lost host's instances on other hosts: it needs a cluster"),
    ("", ["n1"], "failover needs a survivor: the inventory has one host (n1)"),
    ("failover: {after: 1s, to: [n3]}", ["n1", "n2", "n3"],
     "no survivor can take n3's instances (failover.to picks n3"),
    ("failover: {after: 1s, to: [n9]}", ["n1", "n2"], "failover.to: not in the inventory: n9"),
    ("failover: {after: -1s}", ["n1", "n2"], "failover.after"),
])
def test_failover_is_refused_at_plan_time_naming_file_line_and_field(tmp_path, change, hosts,
                                                                     message):
    text = FAILOVER.replace("failover: {after: 1s}", change) if change else FAILOVER
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "s.yaml", hosts=hosts_in(tmp_path, hosts) if hosts else None)
    said = str(e.value)
    assert message in said and "s.yaml:7" in said and "failover" in said, said


def test_a_restart_runs_from_the_schedules_current_point_to_the_instances_end():
    text = "[global]\nruntime=22s\ntime_based\n\n[a]\nrate_iops=10\nstartdelay=4s\n"
    assert restart_text(text, (0.0, 22.0), 8.0) == \
        "[global]\nruntime=14s\ntime_based\n\n[a]\nrate_iops=10\n"
    # a staggered instance not started yet waits for its own start
    assert restart_text(text, (10.0, 32.0), 8.0) == \
        "[global]\nruntime=22s\nstartdelay=2s\ntime_based\n\n[a]\nrate_iops=10\n"
    assert restart_text(text, (0.0, 22.0), 21.8) is None  # ended by then


def test_a_window_added_to_a_target_steps_it_up_and_down_keeping_what_was_due():
    spec = ComponentSpec("db.data.read", ["a"], "read", target_iops=840.0,
                         target_steps=((5.0, 560.0),))  # a host lost at 5 s
    add_window(spec, 280.0, 8.0)  # its instance back at 8 s
    assert [spec.rate_at(t) for t in (4, 6, 8, 20)] == [840, 560, 840, 840]
    assert spec.due(8.0) == pytest.approx(840 * 5 + 560 * 3)
    add_window(spec, -280.0, 12.0, 15.0)
    assert [spec.rate_at(t) for t in (11, 12, 15)] == [840, 560, 840]


class Moved(ReplayRunner):
    """A replayed host whose restarts (failover-*.fio) play the steady recording from the
    instant asked for: their dumps shifted to start there."""

    def start(self, name, env, *, at=None, sections=()):
        if not name.startswith("failover-"):
            return super().start(name, env, at=at, sections=sections)
        self.started.append(name)
        work = self.workdir / f"{name}.replay"  # its own copy of the dumps
        work.mkdir()
        player = ReplayRunner(REPLAY / "steady", self.host, work, speed=self.speed)
        rider = ReplayRun(player, "run.fio")
        docs = list(rider._docs())
        first = docs[0]
        shift = at * 1000 - (first["timestamp_ms"] - max(
            j["job_runtime"] for j in first["jobs"]))
        for doc in docs:
            doc["timestamp_ms"] += shift
        rider._copy.write_text("".join(json.dumps(d, indent=1) + "\n" for d in docs))  # as fio
        rider._started += shift / 1000
        player.now = at
        return rider


def test_a_lost_hosts_instance_restarts_on_its_survivor_and_is_graded_from_there(tmp_path):
    text = FAILOVER + '  db.data.read.iops: ">= 90% target after host_lost"\n'
    plan = plan_text(text, "s.yaml", hosts=hosts_in(tmp_path, ["n1", "n2", "n3"]))
    recordings = {"n1": "steady", "n2": "steady", "n3": "died"}
    runners: dict[str, Moved] = {}

    def factory(host, work):
        runners[host] = Moved(REPLAY / recordings[host], host, work, speed=4.0)
        return runners[host]

    out, rec = run(plan, tmp_path, factory)
    c = rec["cluster"]
    assert list(c["lost"]) == ["n3"]
    assert runners["n1"].started[-1] == "failover-n3.fio" and \
        "failover-n3.fio" not in runners["n2"].started
    [moved] = c["failover"]
    assert moved["kind"] == "failover" and moved["host"] == "n1" and moved["from"] == "n3"
    assert moved["instances"] == ["db@n3.0"] and moved["ios"] > 0
    loss = c["lost"]["n3"]["t"]
    # restarted after the loss was detected and 1 s more; its first IO at its start
    assert loss + 1.0 < moved["restart_s"] < loss + 4.0
    assert moved["first_io_s"] == pytest.approx(moved["restart_s"], abs=0.1)
    assert moved["gap_s"] == pytest.approx(moved["first_io_s"] - loss, abs=0.01)
    # its job file: the standby copy, from the schedule's current point
    job = (out.run_dir / "hosts" / "n1" / "failover-n3.fio").read_text()
    assert "filename=n3.0.standby/db.data.1.dat" in job
    runtime = int(job.split("runtime=")[1].split("ms")[0]) / 1000
    # to the instance's end (8 s), from its start: the instant its job file was cut for,
    # WRITE_S after it was cut
    assert runtime == pytest.approx(8.0 - moved["restart_s"], abs=0.05)
    # the merged target: three instances, two after the loss, three again from the restart
    rows = [r for r in read_ndjson(out.run_dir / "series.ndjson") if r["c"] == "db.data.read"]
    assert rows[0]["target_iops"] == pytest.approx(840)
    gap = [r["target_iops"] for r in rows if loss + 0.5 < r["t"] < moved["restart_s"]]
    assert gap and all(t == pytest.approx(560) for t in gap)
    assert rows[-1]["target_iops"] == pytest.approx(840)
    # every IO of the moved instance is in the merged series, beside the hosts' own
    merged = sum(r["ios"] for r in read_rows(out.run_dir, "samples"))
    hosts = sum(r["ios"] for h in ("n1", "n2", "n3")
                for r in read_rows(out.run_dir / "hosts" / h, "samples"))
    assert merged == hosts + moved["ios"]
    events = [e for e in read_ndjson(out.run_dir / "events.ndjson") if e["kind"] == "failover"]
    assert events and events[0]["source"] == "n3"
    # graded after the loss (whether a replay keeps the rate is timing: the lab test says)
    after = [t for t in rec["thresholds"] if "after host_lost" in t["expr"]]
    assert after and after[0]["observed"] > 0, after
    # graded: the moved instance did IO; its gap is the figure; the summary says it
    [did] = [t for t in c["thresholds"] if t["metric"] == "failover_gap_s"]
    assert did["passed"] and did["observed"] == moved["gap_s"]
    assert did["expr"] == "db@n3.0 restarted on n1 did IO"
    assert "restarted on" not in (rec["reason"] or "")  # counted, and not failed
    text = io.StringIO()
    print_summary(Console(file=text, width=200), read_record(out.run_dir), out.run_dir)
    assert f"moved: db@n3.0 on n1 at {moved['restart_s']}s, first IO at " \
           f"{moved['first_io_s']}s, {moved['gap_s']} s after n3's loss at {loss}s" \
        in text.getvalue(), text.getvalue()
