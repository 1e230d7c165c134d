"""Placement of workloads on an inventory's hosts (X-Ray's node slices, count per host,
stagger), each host's job files, and the cluster-only threshold forms."""

from __future__ import annotations

import re

import pytest

from assay.hosts import inventory
from assay.hosts.selection import PlacementError, select
from assay.plan import RUN_JOB, builtin_scenarios
from assay.plan.build import load, plan_text
from assay.scenario.yamlsource import ScenarioInvalid

INVENTORY = """\
[db]
n1 ansible_host=10.0.0.1 assay_path=/mnt/shared
n2 ansible_host=10.0.0.2 assay_path=/mnt/shared
[web]
n3 ansible_host=10.0.0.3 assay_path=/mnt/n3
n4 ansible_host=10.0.0.4 assay_path=/mnt/n4
"""
HOSTS = inventory.parse(INVENTORY, "inventory.ini")


def names(spec: object) -> list[str]:
    return [h.name for h in select(spec, HOSTS)]  # type: ignore[arg-type]


@pytest.mark.parametrize(("spec", "expected"), [
    (None, ["n1", "n2", "n3", "n4"]), ("all", ["n1", "n2", "n3", "n4"]),
    ("0", ["n1"]), ("-1", ["n4"]), ("1:", ["n2", "n3", "n4"]), (":n/2", ["n1", "n2"]),
    ("n/2:", ["n3", "n4"]), ("1:n-1", ["n2", "n3"]), (["n3", "n1"], ["n1", "n3"]),
    ("web", ["n3", "n4"]), ("n2", ["n2"]),
])
def test_hosts_are_picked_the_x_ray_way(spec, expected):
    assert names(spec) == expected


@pytest.mark.parametrize(("spec", "message"), [
    ("7", "outside the 4 hosts"), ("4:", "picks none"), (["n9"], "not in the inventory"),
    ("nodes", "neither all"),
])
def test_a_wrong_placement_says_why(spec, message):
    with pytest.raises(PlacementError, match=message):
        select(spec, HOSTS)


def scenario(extra: str = "", thresholds: str = "", steps: str = "") -> str:
    return f"""\
name: placed
workloads:
  db: {{kind: oltp, data_iops: 400, read_pct: 70, data_files: 1, log_files: 1, log_iops: 50,
       dataset: 64MiB{extra}}}
timeline: {{warmup: 2s, duration: 6s{steps}}}
thresholds: {{db.data.read.lat_p99: "< 50ms"{thresholds}}}
"""


def test_instances_have_their_own_files_and_rates_even_in_a_shared_directory():
    plan = plan_text(scenario(", hosts: ':n/2', count_per_host: 2, stagger: 5s"), "s.yaml",
                     hosts=HOSTS)
    assert plan.hosts == ["n1", "n2"]  # n1 and n2 share /mnt/shared
    assert plan.cluster is not None
    files = {h: {f for f, _ in hp.files} for h, hp in plan.cluster.hosts.items()}
    assert files["n1"].isdisjoint(files["n2"])
    assert {f.split("/")[0] for f in files["n1"]} == {"n1.0", "n1.1"}
    run = plan.jobfiles["n2"][RUN_JOB]
    # same job names per instance (they add up as numjobs clones do), their own files
    assert run.count("[db.data.1.read.8k]") == 2
    assert "filename=n2.0/db.data.1.dat" in run and "filename=n2.1/db.data.1.dat" in run
    # per-instance rates as planned for one instance; the staggered starts of n2's instances
    # (the 3rd and 4th of the cluster): 10s and 15s
    assert sorted(set(re.findall(r"startdelay=(\S+)", run))) == ["10s", "15s"]
    assert run.count("rate_iops=252\n") == 2
    # each instance its own issue log, read on the host by assay's agent
    assert "write_iolog=n2.0.db.data.1.read.8k.iolog" in run
    assert "write_iolog=n2.1.db.data.1.read.8k.iolog" in run
    assert "on each host, by assay's agent" in plan.intended_note
    # each host its own random sequences: identical data on every host would dedupe
    seeds = {h: re.search(r"\nrandseed=(\d+)\n", plan.jobfiles[h][RUN_JOB]).group(1)
             for h in plan.hosts}
    assert seeds["n1"] != seeds["n2"]
    # the cluster's target: 280 read IO/s per instance running, from each one's start (0,
    # 5, 10, 15 s) to its end (+ warm-up and measured time, 8 s): 2 at most, as they overlap;
    # a later instance from the end of its own 2 s warm-up (fio's ramp_time counts no IO)
    read = next(c for c in plan.components if c.name == "db.data.read")
    length = plan.warmup + plan.duration
    assert read.target_iops == pytest.approx(280) and read.start_s == 0
    assert [(x, round(v or 0)) for x, v in read.target_steps] == [
        (7, 560), (8, 280), (12, 560), (13, 280), (17, 560), (18, 280), (23, 0)]
    assert run.count("ramp_time=2s\nruntime=6s\n") >= 2  # its warm-up, then measured time
    assert plan.total_seconds == pytest.approx(length + 15)  # the load, staggered
    # each host's: its 2 instances, graded from its first one's start
    n2 = next(c for c in plan.cluster.hosts["n2"].specs if c.component == "db.data.read")
    assert n2.start_s == 12 and n2.target_iops == pytest.approx(280)  # 10 s + its warm-up
    assert max(v or 0 for _, v in n2.target_steps) == pytest.approx(2 * 280)
    assert plan.cluster.to_json()["n2"]["windows"] == {"db": [[10, length + 10],
                                                              [15, length + 15]]}


def test_each_host_and_start_skew_thresholds():
    plan = plan_text(scenario(thresholds=', each_host.db.data.read.lat_p99: "< 20ms", '
                                         'cluster.db.iops: ">= 90% target", '
                                         'start_skew: "< 10ms"'), "s.yaml", hosts=HOSTS)
    assert [t.text for t in plan.host_thresholds] == ["db.data.read.lat_p99 < 20ms"]
    assert "db.iops >= 90% target" in [t.text for t in plan.thresholds]
    assert plan.cluster is not None and plan.cluster.skew_limit_ms == 10.0


@pytest.mark.parametrize(("text", "where", "message"), [
    (scenario(", hosts: all"), "s.yaml:4", "needs an inventory"),
    (scenario(thresholds=', each_host.db.data.read.lat_p99: "< 20ms"'), "thresholds",
     "each_host thresholds need an inventory"),
    (scenario(thresholds=', start_skew: "< 10ms"'), "thresholds", "give --hosts"),
    (scenario(steps=", steps: [{action: host_fail, at: 2s, host: n1}]"), "host",
     "needs a cluster run"),
])
def test_cluster_keys_without_an_inventory_are_refused(text, where, message):
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "s.yaml")
    assert where in str(e.value) and message in str(e.value)


def test_a_placement_error_names_the_workload_and_its_line():
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(scenario(", hosts: '9'"), "s.yaml", hosts=HOSTS)
    assert "s.yaml:4" in str(e.value) and "workloads.db.hosts" in str(e.value)
    with pytest.raises(ScenarioInvalid, match="'n9' is not one"):
        plan_text(scenario(steps=", steps: [{action: host_fail, at: 2s, host: n9}]"),
                  "s.yaml", hosts=HOSTS)


def test_a_cluster_scenario_without_an_inventory_says_how_to_get_one():
    with pytest.raises(ScenarioInvalid) as e:
        load("node-failure")
    assert e.value.issues and all("--hosts FILE" in i.message and "assay lab create cluster"
                                  in i.message for i in e.value.issues)


def _filenames(text: str, prefill: bool) -> set[str]:
    """The files a job file names, its prefill sections' or the load's."""
    out, section = set(), ""
    for ln in text.splitlines():
        if ln.startswith("["):
            section = ln
        elif ln.startswith("filename=") and section.startswith("[prefill.") == prefill:
            out.add(ln.split("=", 1)[1])
    return out


@pytest.mark.parametrize("name", ["exchange-quick", "four-corners-quick", "checkpoint-quick"])
def test_streams_that_share_a_file_get_the_hosts_prefix_once(name):
    """Exchange's database reads and writes, the four corners and a checkpoint's save and
    restore each share their files: every host's paths carry its prefix once, and the
    prefill writes the very files the load reads."""
    hosts = inventory.parse("n1 assay_path=/mnt/a\nn2 assay_path=/mnt/b\n", "inventory.ini")
    plan = load(name, hosts=hosts)
    assert plan.cluster is not None
    for host in ("n1", "n2"):
        files = plan.jobfiles[host]
        loaded = _filenames(files[RUN_JOB], prefill=False)
        prefilled = _filenames(files["prefill.fio"], prefill=True)
        assert loaded and prefilled == loaded, host
        assert all(re.fullmatch(rf"{host}\.0/[^/]+", f) for f in loaded), sorted(loaded)
        assert {f for f, _ in plan.cluster.hosts[host].files} == loaded


def test_a_device_host_lays_out_files_whose_streams_share_them():
    hosts = inventory.parse("n1 assay_device=/dev/sdz\n", "inventory.ini")
    plan = load("exchange-quick", hosts=hosts)
    run, prefill = (plan.jobfiles["n1"][n] for n in (RUN_JOB, "prefill.fio"))
    assert "filename=/dev/sdz" in run and "n1.0/n1.0" not in run + prefill
    offsets = {ln for ln in run.splitlines() if ln.startswith("offset=")}
    assert offsets and offsets <= {ln for ln in prefill.splitlines() if ln.startswith("offset=")}


def test_a_workloads_subdir_prefixes_files_its_streams_share_once():
    text = builtin_scenarios()["exchange-quick"].replace("dataset: 1GiB",
                                                         "dataset: 1GiB\n    subdir: mx")
    plan = plan_text(text, "s.yaml")
    loaded = _filenames(plan.jobfile(), prefill=False)
    assert loaded == _filenames(plan.jobfile(name="prefill.fio"), prefill=True)
    assert all(re.fullmatch(r"mx/[^/]+", f) for f in loaded), sorted(loaded)


@pytest.mark.parametrize(("name", "workload"), [("swbuild-quick", "build"),
                                                ("ai-unet3d-quick", "train")])
def test_sets_of_files_on_a_raw_device_are_refused_with_the_workloads_line(name, workload):
    """A raw device holds files laid end to end, one region per fio job: a set of small files
    (fio's filename_format) or a job of several files is refused, not a KeyError."""
    hosts = inventory.parse("n1 assay_device=/dev/sdz\n", "inventory.ini")
    with pytest.raises(ScenarioInvalid) as e:
        load(name, hosts=hosts)
    [issue] = e.value.issues
    assert issue.line and f"workloads.{workload}" in str(issue) and "n1" in issue.message
    assert "raw device" in issue.message and "assay_path" in issue.message
    text = builtin_scenarios()[name].replace("\nworkloads:", "\ntarget: {device: /dev/sdz}\n"
                                             "workloads:", 1)
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "s.yaml")
    [issue] = e.value.issues
    assert "target.device" in str(issue) and workload in issue.message
