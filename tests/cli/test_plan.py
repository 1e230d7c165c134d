"""`assay plan` prints exactly what a run stores: the job files, byte for byte."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import assay_in_process, needs_fio

SCENARIO = """\
name: plan-equals-run
workloads:
  db: {kind: oltp, data_iops: 200, data_files: 1, log_files: 1, dataset: 32MiB,
       load: {pacing: even}}
timeline: {warmup: 1s, duration: 2s}
thresholds: {db: rate}
"""


def assay(*args: str, results, cwd) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_RESULTS": str(results)}
    # in this process (tests/conftest.py): nothing here is signalled, no start-up per call
    return assay_in_process(*args, env=env, cwd=cwd)


@needs_fio
def test_plan_prints_the_job_files_a_run_stores(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    results = tmp_path / "results"
    run = assay("run", str(scenario), "--set", "db.data_iops=300", results=results,
                cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    (host,) = results.glob("*/hosts/local")
    stored = (host / "run.fio").read_text()
    printed = assay("plan", str(scenario), "--set", "db.data_iops=300", "--fio",
                    results=results, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == stored
    human = assay("plan", str(scenario), "--set", "db.data_iops=300", results=results,
                  cwd=tmp_path).stdout
    assert all(line in human.splitlines() for line in stored.splitlines() if line)
    assert "write_iolog=" in stored  # the issue logs a run asks for are in the plan
    assert "fio --parse-only: ok" in human


def test_cache_and_ftt_size_an_hcibench_working_set_by_its_rule(tmp_path):
    """HCIBench: working set = cache x 0.25 (hybrid) / (FTT + 1)."""
    out = assay("plan", "hcibench-4k70r", "--cache", "800GB", "--ftt", "1", "--set",
                "io.media=hybrid", "--json", "--no-check", results=tmp_path, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    dataset = json.loads(out.stdout)["dataset_bytes"]
    assert abs(dataset - 800e9 * 0.25 / 2) < 0.001 * 800e9 * 0.25 / 2  # whole MiB per file
    none = assay("plan", "oltp-standard", "--cache", "1GB", results=tmp_path, cwd=tmp_path)
    assert none.returncode == 2 and "HCIBench" in none.stderr


def test_a_cluster_scenario_is_planned_on_an_example_inventory_and_not_run(tmp_path):
    shown = assay("plan", "node-failure", "--no-check", "--json", results=tmp_path / "r",
                  cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    plan = json.loads(shown.stdout)
    assert set(plan["jobfiles"]) == {"n1", "n2", "n3"}
    assert any("example inventory" in n and "--hosts FILE" in n for n in plan["notes"])
    text = assay("plan", "node-failure", "--no-check", results=tmp_path / "r", cwd=tmp_path)
    assert text.returncode == 0 and "example inventory" in text.stdout
    # a run needs the real hosts: refused before anything is made
    run = assay("run", "node-failure", results=tmp_path / "r", cwd=tmp_path)
    assert run.returncode == 2 and "--hosts FILE" in run.stderr
    assert not (tmp_path / "r").exists()


def test_a_cluster_scenario_with_another_error_is_refused_with_every_problem(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: c\nworkloads:\n  db: {kind: oltp, preset: standard, "
                        "hosts: all, stop: 99s}\ntimeline: {duration: 10s}\n")
    shown = assay("plan", str(scenario), "--no-check", results=tmp_path / "r", cwd=tmp_path)
    assert shown.returncode == 2
    assert "workloads.db.stop" in shown.stderr and "--hosts FILE" in shown.stderr


def test_a_staggered_placement_plans_its_load_and_its_stepping_target(tmp_path):
    (tmp_path / "inventory.ini").write_text("".join(
        f"n{i} ansible_host=192.0.2.{i} assay_path={tmp_path / f't{i}'}\n" for i in (1, 2, 3)))
    (tmp_path / "s.yaml").write_text(SCENARIO.replace(
        "load: {pacing: even}}", 'load: {pacing: even}, hosts: "1:", count_per_host: 2, '
        "stagger: 1s}"))
    shown = assay("plan", "s.yaml", "--hosts", "inventory.ini", "--no-check",
                  results=tmp_path / "r", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    # 4 instances of 3 s each, 1 s apart, each graded after its own 1 s warm-up (2 at most at
    # once): measured to the last one's end
    assert "1s-6s measured" in said, said
    assert "components (every instance's rate added up; jobs and depth are one instance's):" \
        in said, said
    assert "100.0 IO/s, even arrivals from 0s, up to 200.0 as the staggered instances start " \
           "and end" in said, said
