import os
import shutil
import subprocess

import pytest

from assay.plan import PREFILL_JOB, RUN_JOB, builtin_scenarios, plan_text
from tests.cluster import example_hosts


def plan(yaml_workload: str, extra: str = ""):
    return plan_text(f"name: t\nworkloads:\n  w: {yaml_workload}\n{extra}", "t.yaml")


def targets(p) -> dict[str, float | None]:
    return {c.name: c.target_iops for c in p.components}


def test_oltp_standard_is_xrays_4200_iops():
    t = targets(plan("{kind: oltp, preset: standard}"))
    assert t == {"w.data.read": 2000, "w.data.write": 2000, "w.log.write": 200}


def test_oltp_high_and_medium():
    assert sum(targets(plan("{kind: oltp, preset: high}")).values()) == 6400
    assert sum(targets(plan("{kind: oltp, preset: medium}")).values()) == 6300


def test_even_pacing_rates_are_exact_per_block_size_job():
    p = plan("{kind: oltp, preset: standard, dataset: 1GiB, load: {pacing: even}}")
    data_jobs = [j for s in p.streams if s.name == "data" for j in s.jobs]
    # 4 files x 2 directions x 2 block sizes, each paced in bytes at its own block size
    assert len(data_jobs) == 16
    iops = sum(j.options["rate"] / (8192 if j.options["bs"] == "8k" else 32768)
               for j in data_jobs)
    assert iops == pytest.approx(4000)


def test_exchange_target_is_mailboxes_times_iops_per_mailbox():
    p = plan("{kind: exchange, mailboxes: 60000, messages_per_day: 150, databases: 4, "
             "dataset: 1GiB}")
    t = targets(p)
    transactional = t["w.db.read"] + t["w.db.write"]
    assert transactional == pytest.approx(7260)  # 60,000 x 0.121 (the published example)
    assert t["w.db.read"] / transactional == pytest.approx(0.6)  # 3:2
    assert t["w.bdm.read"] == pytest.approx(4 * 4)  # 1 MiB/s of 256k reads per database


def test_exchange_bdm_keeps_its_own_rate_when_the_load_is_scaled_down():
    # Jetstress' BDM reads bytes/s per database whatever the transactional target; scaled
    # with it, one read every few seconds would hold back every status dump of fio
    p = plan("{kind: exchange, mailboxes: 10000, iops_per_mailbox: 0.121, databases: 2, "
             "dataset: 96MiB, load: {scale: 0.0625}}")
    t = targets(p)
    assert t["w.db.read"] + t["w.db.write"] == pytest.approx(10000 * 0.121 * 0.0625)
    assert t["w.bdm.read"] == pytest.approx(2 * 4)
    bdm = [j for s in p.streams if s.name == "bdm" for j in s.jobs]
    assert bdm and sum(j.options["rate"] for j in bdm) == pytest.approx(2 * 1024 * 1024, abs=2)


def test_exchange_without_headroom_and_explicit_iops():
    t = targets(plan("{kind: exchange, mailboxes: 1000, iops_per_mailbox: 0.5, dataset: 1GiB}"))
    assert t["w.db.read"] + t["w.db.write"] == pytest.approx(500)
    t = targets(plan("{kind: exchange, mailboxes: 1000, headroom: false, dataset: 1GiB}"))
    assert t["w.db.read"] + t["w.db.write"] == pytest.approx(1000 * 0.101)


def test_closed_loop_has_no_targets():
    t = targets(plan("{kind: oltp, data_iops: 100, load: {model: closed, threads: 2}}"))
    assert t["w.data.read"] is None and t["w.data.write"] is None


def test_data_realism_reaches_fio():
    p = plan("{kind: oltp, preset: standard, data: {compressibility: 2, dedupe: 4}, "
             "access: {distribution: hotcold, hot_io: 90, hot_data: 10}}")
    job = next(j for s in p.streams for j in s.jobs if j.options["rw"] == "randwrite")
    assert job.options["buffer_compress_percentage"] == 50
    assert job.options["dedupe_percentage"] == 75
    assert job.options["random_distribution"] == "zoned:90/10:10/90"


def test_vdi_profiles():
    assert sum(targets(plan("{kind: vdi, profile: power, desktops: 10}")).values()) == 260
    assert sum(targets(plan("{kind: vdi, profile: task, desktops: 100}")).values()) == 800


def test_micro_runs_corners_as_phases():
    p = plan("{kind: micro, phase: 10s, gap: 0}", "timeline: {duration: 5s}\n")
    assert p.duration == 40  # 4 corners x 10 s
    starts = sorted({c.start_s for c in p.components})
    assert starts == [0, 10, 20, 30]


def test_four_corners_is_xrays_layout():
    p = plan_text(builtin_scenarios()["four-corners"], "four-corners")
    assert [s.name for s in p.streams] == ["randread", "seqread", "randwrite", "seqwrite"]
    assert len(p.files) == 6 and {size for _, size in p.files} == {2 << 30}
    for s in p.streams:
        assert len(s.jobs) == 6 and all(j.options["iodepth"] == 128 for j in s.jobs)
    windows = [(c.start_s, c.end_s) for c in p.components]
    # a 300 s warm-up, then 60 s corners with 60 s idle between them
    assert windows == [(300, 360), (420, 480), (540, 600), (660, 720)]
    delays = [{j.options.get("startdelay") for j in s.jobs} for s in p.streams]
    assert delays == [{None}, {"420s"}, {"540s"}, {"660s"}]
    assert p.total_seconds == 720


def test_user_fio_job_file(tmp_path):
    (tmp_path / "mine.fio").write_text("[global]\nbs=16k\nruntime=5\n[scan]\nrw=read\n"
                                       "filename=/dev/sda\n")
    p = plan_text("name: t\nworkloads:\n  w: {kind: fio, job: mine.fio, dataset: 64MiB}\n",
                  "t.yaml", tmp_path)
    (job,) = [j for s in p.streams for j in s.jobs]
    assert job.options["bs"] == "16k" and job.options["rw"] == "read"
    assert job.options["filename"] == "w.scan.dat"  # assay owns where data lives
    assert "runtime" not in job.options



def test_a_user_fixed_rate_job_without_one_schedule_is_named_in_the_due_time_note(tmp_path):
    (tmp_path / "mine.fio").write_text("[global]\nbs=8k\nrate_iops=200\n[paced]\nrw=randread\n"
                                       "[mixed]\nrw=randrw\nrwmixread=70\n")
    p = plan_text("name: t\nworkloads:\n  w: {kind: fio, job: mine.fio, dataset: 64MiB}\n",
                  "t.yaml", tmp_path)
    logged = {j.name for s in p.streams for j in s.jobs if "write_iolog" in j.options}
    assert logged == {"w.paced"}
    assert p.intended_note.startswith("from fio's issue logs")
    assert "not for w.mixed:" in p.intended_note and "w.paced" not in p.intended_note

@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("name", sorted(builtin_scenarios()))
def test_fio_accepts_every_generated_job_file(tmp_path, name):
    p = plan_text(builtin_scenarios()[name], name,
                  hosts=example_hosts(builtin_scenarios()[name]))
    env = {**os.environ, "ASSAY_TARGET": str(tmp_path), "ASSAY_DIRECT": "1"}
    for job in (RUN_JOB, PREFILL_JOB):
        path = tmp_path / job
        path.write_text(p.jobfile(p.hosts[0], job))
        r = subprocess.run(["fio", "--parse-only", str(path)], capture_output=True, text=True,
                           env=env)
        assert r.returncode == 0, r.stderr


def test_a_workload_can_arrive_and_leave_during_the_run():
    p = plan_text("name: t\nworkloads:\n  db: {kind: oltp, preset: standard}\n"
                  "  backup: {kind: backup, start: 10s, stop: 20s}\n"
                  "timeline: {warmup: 5s, duration: 30s}\n", "t.yaml")
    backup = [j for s in p.streams if s.workload == "backup" for j in s.jobs]
    assert all(j.options["startdelay"] == "15s" and j.options["runtime"] == "10s"
               for j in backup)
    windows = {(c.start_s, c.end_s) for c in p.components if c.workload == "backup"}
    assert windows == {(15.0, 25.0)}
    db = [j for s in p.streams if s.workload == "db" for j in s.jobs]
    assert not any("startdelay" in j.options for j in db)


def test_a_workload_window_must_fit_the_run():
    from assay.scenario.yamlsource import ScenarioInvalid

    with pytest.raises(ScenarioInvalid, match="stop: after the end of the run"):
        plan_text("name: t\nworkloads:\n  b: {kind: backup, start: 10s, stop: 2m}\n"
                  "timeline: {duration: 1m}\n", "t.yaml")
    with pytest.raises(ScenarioInvalid, match="must come after"):
        plan_text("name: t\nworkloads:\n  b: {kind: backup, start: 10s, stop: 5s}\n", "t.yaml")


def test_duration_on_the_command_line_wins_over_the_corner_phase():
    text = "name: t\nworkloads:\n  c: {kind: micro, phase: 30s, gap: 10s}\n"
    assert plan_text(text, "t.yaml").duration == 150
    short = plan_text(text, "t.yaml", duration=15)
    assert short.duration == 15  # corners and gaps shrink in proportion: 3 s and 1 s
    assert [c.start_s for c in short.components] == [0, 4, 8, 12]
