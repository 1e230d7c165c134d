"""The engine end to end through the ReplayRunner: recorded real fio output (a steady run, a
stall, a status gap, a fio that dies, a full target) played back in milliseconds, through the
sampler, timeline, live and final verdicts and the run directory."""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from assay.engine import Engine, Outcome, RunOptions
from assay.plan import Plan, load
from assay.results.record import parse_record
from assay.results.rundir import read_json, read_ndjson
from assay.run_options import Interrupted
from assay.runners import ReplayRunner

REPLAY = Path(__file__).parent / "fixtures" / "replay"


def replay(case: str, tmp_path: Path, plan: Plan | None = None, **options) -> Outcome:
    plan = plan or load(str(REPLAY / "scenario.yaml"))
    runner = functools.partial(ReplayRunner, REPLAY / case)
    opts = RunOptions(tmp_path / "results", runner=runner, **options)
    return Engine(plan, opts, Console(file=io.StringIO())).execute()


def series(outcome: Outcome, component: str) -> list[dict]:
    return [r for r in read_ndjson(outcome.run_dir / "series.ndjson") if r["c"] == component]


def test_a_steady_run_passes_at_its_rate(tmp_path):
    out = replay("steady", tmp_path)
    assert out.status == "passed", out.reason
    read = out.stats["db.data.read"]
    assert read.target_iops == pytest.approx(280)
    assert read.iops == pytest.approx(280, rel=0.03)
    assert 5.5 <= read.seconds <= 6.5  # the measured window, after the 2 s warm-up
    assert len(series(out, "db.data.read")) >= 7
    run = read_json(out.run_dir / "run.json")
    assert run["status"] == "passed" and run["verdict"]["failed"] == 0
    # the job file stored is the plan's, byte for byte; the variables are recorded
    stored = (out.run_dir / "hosts" / "local" / "run.fio").read_text()
    assert stored == load(str(REPLAY / "scenario.yaml")).jobfile()
    assert set(run["plan"]["variables"]) == {"ASSAY_TARGET", "ASSAY_DIRECT"}
    # per-IO logs of the even-paced jobs came back: latency from the due time is measured
    assert read.intended and read.intended["lat_intended_p99_ms"] > 0


def test_a_stall_fails_the_rate_and_shows_in_latency(tmp_path):
    steady = replay("steady", tmp_path / "a")
    out = replay("stall", tmp_path / "b")
    assert out.status == "failed"
    failed = {r.threshold.text for r in out.results if not r.passed}
    assert any("behind" in t or "target" in t for t in failed)
    read = out.stats["db.data.read"]
    assert read.behind_max_s > 1.0
    # from the due time, the 2 s stall is in the p99; fio's own p99 from the submit hides it
    assert read.intended["lat_intended_p99_ms"] > 10 * steady.stats["db.data.read"].lat_p99_ms


def test_a_stall_stops_a_run_early_when_asked(tmp_path):
    out = replay("stall", tmp_path, stop_early=True)
    assert out.status == "failed" and out.reason.startswith("stopped early")
    run = read_json(out.run_dir / "run.json")
    assert run["status"] == "failed" and "behind" in run["reason"]


def test_a_status_gap_is_one_long_interval_not_lost_io(tmp_path):
    out = replay("gap", tmp_path)
    rows = series(out, "db.data.read")
    gap = max(rows, key=lambda r: r["dt"])
    assert gap["dt"] >= 2.5  # fio said nothing for about 3 s
    # the IO done meanwhile is counted in that interval, at the rate, and nothing fell behind
    assert gap["ios"] / gap["dt"] == pytest.approx(280, rel=0.03)
    assert out.stats["db.data.read"].iops == pytest.approx(280, rel=0.03)
    assert out.stats["db.data.read"].behind_max_s < 1.0


def test_a_dying_fio_aborts_and_keeps_what_was_measured(tmp_path):
    out = replay("died", tmp_path)
    assert out.status == "aborted"
    assert "fio exited with status -9" in out.reason
    run = read_json(out.run_dir / "run.json")
    assert run["status"] == "aborted" and run["reason"] == out.reason
    assert series(out, "db.data.read")  # the seconds before the kill are kept
    assert any("graded on the" in w for w in run["warnings"])


def test_a_full_target_aborts_with_that_reason(tmp_path):
    out = replay("enospc", tmp_path)
    assert out.status == "aborted"
    assert "No space left on device" in out.reason


def test_timeline_steps_become_events_and_phases(tmp_path):
    text = (REPLAY / "scenario.yaml").read_text() + (
        "  db.data.write.lat_p99: \"< 50ms during mark\"\n")
    text = text.replace("timeline: {warmup: 2s, duration: 6s}",
                        "timeline:\n  warmup: 2s\n  duration: 6s\n  steps:\n"
                        "    - {name: mark, action: annotate, text: hello, at: 2s}")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    out = replay("steady", tmp_path, plan=load(str(path)))
    run = read_json(out.run_dir / "run.json")
    assert [e["name"] for e in run["events"]] == ["mark"]
    assert 3.5 <= run["events"][0]["t_start"] <= 5.5  # 2 s after the 2 s warm-up
    assert any("during mark" in r["expr"] for r in run["thresholds"])
    assert json.dumps(run["phases"])  # before / during / after were computed


def test_a_warmup_longer_than_the_measured_time_is_warned(tmp_path):
    text = (REPLAY / "scenario.yaml").read_text().replace("{warmup: 2s, duration: 6s}",
                                                          "{warmup: 5s, duration: 3s}")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    out = replay("steady", tmp_path, plan=load(str(path)))
    run = read_json(out.run_dir / "run.json")
    assert any("warm-up (5s) is longer than the measured time (3s)" in w
               for w in run["warnings"])


class RejectingRunner(ReplayRunner):
    def check_job(self, name, env):
        return "unknown option 'bogus'"


class InterruptedRunner(ReplayRunner):
    def write_job(self, name, text):  # Ctrl-C while the run is being prepared
        raise Interrupted()


@pytest.mark.parametrize(("runner", "status", "reason"), [
    (RejectingRunner, "aborted", "fio rejected the job file: unknown option 'bogus'"),
    (InterruptedRunner, "interrupted", "interrupted by the user"),
])
def test_a_run_ended_while_it_is_prepared_leaves_a_readable_record(tmp_path, runner, status,
                                                                    reason):
    plan = load(str(REPLAY / "scenario.yaml"))
    opts = RunOptions(tmp_path / "results", runner=functools.partial(runner, REPLAY / "steady"))
    out = Engine(plan, opts, Console(file=io.StringIO())).execute()
    assert (out.status, out.reason) == (status, reason)
    run = parse_record(read_json(out.run_dir / "run.json"))
    assert run.status == status and run.scenario.name == plan.name
    assert not run.thresholds and all(s.ios == 0 for s in run.stats.values())


def test_late_status_dumps_end_incomplete_not_passed(tmp_path):
    """fio's dumps came late (the first after 4.3 s, its job_runtime 466 ms): the old time axis
    graded the 6 s window on 2.45 s and PASSED. On fio's clock the first 1.3 s of the window
    share a sample with the warm-up: the run is incomplete and no threshold passes."""
    out = replay("late", tmp_path, plan=load(str(REPLAY / "late" / "scenario.yaml")))
    assert out.status == "incomplete", out.reason
    assert int(out.exit_code) == 3
    assert "graded" in out.reason and "of the 6.0s measured" in out.reason
    run = read_json(out.run_dir / "run.json")
    assert run["status"] == "incomplete" and run["measured_s"] == pytest.approx(6.0)
    assert 4.0 < run["graded_s"] < 0.95 * 6.0  # not the compressed 2.45 s either
    assert run["thresholds"] and not any(t["graded"] or t["passed"] for t in run["thresholds"])
    assert run["verdict"] == {"passed": 0, "failed": 0, "not_graded": len(run["thresholds"])}
    # the series runs to the end of fio's 8 s, on its own clock
    assert abs(max(r["t"] for r in series(out, "db.data.read")) - 8.0) < 0.7


def test_a_steady_run_is_graded_on_its_whole_window(tmp_path):
    run = read_json(replay("steady", tmp_path).run_dir / "run.json")
    assert run["status"] == "passed" and run["graded_s"] == pytest.approx(run["measured_s"])


class StoppedAfterSixDumps(ReplayRunner):
    """Ctrl-C six status dumps into the run."""

    def start(self, name, env, *, at=None, sections=()):
        run = super().start(name, env, at=at, sections=sections)
        docs = run.documents

        def documents(poll=0.2):
            for n, doc in enumerate(docs(poll)):
                if n == 6:
                    raise Interrupted()
                yield doc
        run.documents = documents
        return run


def test_an_interrupted_run_says_the_time_it_measured_not_the_time_planned(tmp_path):
    from assay.plan import plan_text
    from assay.report.terminal import print_summary

    text = (REPLAY / "scenario.yaml").read_text()
    plan = plan_text(text, "long.yaml", tmp_path, 288 * 3600.0)  # 288h planned
    opts = RunOptions(tmp_path / "results",
                      runner=functools.partial(StoppedAfterSixDumps, REPLAY / "steady"))
    out = Engine(plan, opts, Console(file=io.StringIO())).execute()
    assert out.status == "interrupted"
    run = parse_record(read_json(out.run_dir / "run.json"))
    start, end = run.measured_window_s
    last = max(r["t"] for r in series(out, "db.data.read"))
    assert start == 2.0 and end == pytest.approx(last, abs=0.01) and 3 < end - start < 6
    assert run.measured_s == pytest.approx(end - start)
    buf = io.StringIO()
    print_summary(Console(file=buf, width=200), run, out.run_dir)
    said = buf.getvalue()
    assert f"measured {end - start:.0f}s" in said and "288h" not in said
