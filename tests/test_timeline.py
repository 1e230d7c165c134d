"""The timeline scheduler with real threads and commands, on a directory (no fio needed)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from assay.exitcodes import RunAborted
from assay.plan import Plan, plan_text
from assay.platforms import driver
from assay.results.rundir import RunDir, read_ndjson
from assay.scenario.yamlsource import ScenarioInvalid
from assay.timeline import TimelineRunner
from tests.conftest import needs_fio

HEAD = """name: t
workloads:
  db: {kind: oltp, data_iops: 100, dataset: 16MiB}
timeline:
  warmup: 0s
  duration: 30s
  steps:
"""


def plan_of(steps: str) -> Plan:
    return plan_text(HEAD + steps, "t.yaml")


def drive(plan: Plan, tmp_path: Path, seconds: float, platform: Any = None) \
        -> tuple[TimelineRunner, list[dict[str, Any]]]:
    """Tick the timeline in real time for `seconds` load seconds, then finish it."""
    rd = RunDir.create(tmp_path / "results", "t")
    if platform is None:
        platform = driver("local")(plan.scenario.target)
    platform.directory = tmp_path
    tl = TimelineRunner(plan, platform, rd)
    t0 = time.monotonic()
    tl.start(t0)
    try:
        while (t := time.monotonic() - t0) < seconds:
            tl.tick(t)
            time.sleep(0.02)
    finally:
        tl.finish()
        rd.close()
    return tl, [e for e in read_ndjson(rd.path / "events.ndjson") if e["kind"] == "step"]


def test_at_every_count_and_after(tmp_path: Path) -> None:
    plan = plan_of("""    - {name: mark, action: annotate, text: hello, at: 0.1s,
       every: 0.2s, count: 3}
    - {name: echo, action: command, after: mark, run: "echo {step} {n} {path}"}
""")
    _, events = drive(plan, tmp_path, 1.2)
    marks = [e for e in events if e["name"] == "mark"]
    echoes = [e for e in events if e["name"] == "echo"]
    assert [e["n"] for e in marks] == [1, 2, 3]
    assert [round(e["t_due"], 1) for e in marks] == [0.1, 0.3, 0.5]
    assert all(e["outcome"] == "ok" and e["output"] == "hello" for e in marks)
    assert len(echoes) == 3  # one after each `mark`
    assert echoes[0]["output"] == f"echo 1 {tmp_path}"
    assert all(e["t_start"] >= m["t_end"] for e, m in zip(echoes, marks, strict=True))


def test_long_action_does_not_block_and_records_its_duration(tmp_path: Path) -> None:
    plan = plan_of("""    - {name: slow, action: command, at: 0s, run: "sleep 0.6"}
    - {name: quick, action: annotate, text: tick, at: 0.2s}
""")
    _, events = drive(plan, tmp_path, 1.0)
    by = {e["name"]: e for e in events}
    assert by["quick"]["t_start"] < by["slow"]["t_end"]  # ran while `slow` still ran
    assert 0.5 < by["slow"]["seconds"] < 3


def test_failed_step_aborts_with_reason(tmp_path: Path) -> None:
    plan = plan_of("""    - {name: boom, action: command, at: 0.1s, run: "echo oops >&2; exit 3"}
""")
    with pytest.raises(RunAborted, match=r"step 'boom' \(command\) failed.*oops"):
        drive(plan, tmp_path, 2.0)


def test_timeout_and_unfinished(tmp_path: Path) -> None:
    plan = plan_of("""    - {name: stuck, action: command, at: 0s, run: "sleep 5", timeout: 0.3s}
""")
    with pytest.raises(RunAborted, match="timeout"):
        drive(plan, tmp_path, 2.0)
    plan = plan_of("""    - {name: wait, action: pause, at: 0s, for: 30s}
""")
    tl, events = drive(plan, tmp_path, 0.3)  # the load ends first
    assert events[0]["outcome"] == "unfinished" and tl.failure is None


def test_wait_until_command(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    plan = plan_of(f"""    - name: start
      action: command
      at: 0s
      run: "(sleep 0.4; touch {flag}) >/dev/null 2>&1 &"
      wait_until: {{command: "test -e {flag}", poll: 0.1s}}
      timeout: 5s
""")
    _, events = drive(plan, tmp_path, 1.5)
    assert events[0]["outcome"] == "ok" and 0.3 < events[0]["waited_s"] < 2


def test_snapshot_keep_newest_on_command_platform(tmp_path: Path) -> None:
    """The `command` driver: snapshots are whatever the scenario's templates do."""
    text = (HEAD.replace("name: t\n", "name: t\ntarget:\n  platform: command\n  options:\n"
                         "    snapshot: 'mkdir {path}/{name}'\n"
                         "    snapshot.delete: 'rmdir {path}/{name}'\n")
            + "    - {action: snapshot, at: 0s, every: 0.1s, count: 5, keep: 2}\n")
    plan = plan_text(text, "t.yaml")
    platform = driver("command")(plan.scenario.target)
    _, events = drive(plan, tmp_path, 0.9, platform)
    assert len(events) == 5 and all(e["outcome"] == "ok" for e in events)
    assert events[-1]["snapshots"] == 2 and events[-1]["deleted"]
    assert sorted(p.name for p in tmp_path.glob("assay-*")) == \
        sorted(platform.created_snapshots)
    assert len(platform.created_snapshots) == 2


def test_validation_names_file_line_field() -> None:
    with pytest.raises(ScenarioInvalid) as e:
        plan_of("""    - {action: snapshot, at: 1s}
    - {action: device, op: replace, after: nothing}
""")
    text = "\n".join(str(i) for i in e.value.issues)
    assert "t.yaml:8: timeline.steps[0].action: platform 'local' cannot do snapshot" in text
    assert "t.yaml:9: timeline.steps[1].after: no step is named 'nothing'" in text
    with pytest.raises(ScenarioInvalid, match="no step or action is named 'snap'"):
        plan_text(HEAD + "    - {action: annotate, text: x}\nthresholds:\n"
                  "  - lat_p99 < 5ms during snap\n", "t.yaml")
    # the xfs driver snapshots but cannot replace a device
    with pytest.raises(ScenarioInvalid, match="platform 'xfs' cannot do device.replace"):
        plan_text(HEAD.replace("name: t\n", "name: t\ntarget: {platform: xfs}\n")
                  + "    - {action: device, op: replace}\n", "t.yaml")


class _Watch:
    """A platform's own state series (Ceph's), run beside the steps on one clock."""

    def start(self, t0: float) -> None: ...
    def tick(self, t: float) -> None: ...
    def finish(self) -> None: ...


def test_steps_beside_a_platform_watch_still_reach_the_hosts_and_participants(
        tmp_path: Path) -> None:
    """The steps' runner gets what they act on when it is built, whether or not the platform
    watches its own state: a Ceph run's host_fail must see the hosts, pg_backup the
    databases, verify the writers (they were set after the fact, and a platform's watch hid
    the steps from it)."""
    from assay.timeline import Reach, Together, build

    plan = plan_of("    - {action: annotate, text: x, at: 1s}\n")
    platform = driver("local")(plan.scenario.target)
    platform.directory = tmp_path
    platform.watch = lambda path: _Watch()  # type: ignore[method-assign]
    watch, databases, verifier = object(), {"db": object()}, object()
    rd = RunDir.create(tmp_path / "results", "t")
    try:
        built = build(plan, platform, rd, Reach(None, watch, databases,  # type: ignore[arg-type]
                                                verifier))  # type: ignore[arg-type]
    finally:
        rd.close()
    assert isinstance(built, Together) and built.steps is not None
    assert built.steps.watch is watch
    assert built.steps.databases is databases
    assert built.steps.verifier is verifier


def test_end_after_a_step_is_due_its_delay_after_the_steps_last_occurrence(tmp_path: Path) \
        -> None:
    plan = plan_text(HEAD.replace("  steps:\n", "  end: after mark + 0.3s\n  steps:\n")
                     + "    - {name: mark, action: annotate, text: x, at: 0.1s, every: 0.2s,"
                       " count: 3}\n", "t.yaml")
    tl, events = drive(plan, tmp_path, 0.45)  # two of the three marks: not yet
    assert [e["n"] for e in events if e["name"] == "mark"] == [1, 2]
    assert tl.ended(0.45) is None and tl.ended(1e9) is None
    tl, events = drive(plan, tmp_path / "again", 1.2)
    last = [e for e in events if e["name"] == "mark"][-1]
    assert last["n"] == 3
    assert tl.ended(last["t_end"] + 0.29) is None
    assert tl.ended(last["t_end"] + 0.31) == "mark ended 0.3s before"


def test_end_rules_are_checked_before_any_io() -> None:
    def planned(end: str, steps: str) -> str:
        try:
            plan_text(HEAD.replace("  steps:\n", f"  end: {end}\n  steps:\n") + steps, "t.yaml")
        except ScenarioInvalid as e:
            return "\n".join(str(i) for i in e.issues)
        return ""
    once = "    - {name: mark, action: annotate, text: x, at: 1s}\n"
    assert planned("after mark + 10s", once) == ""
    assert planned("after mark", once) == ""
    assert "t.yaml:7: timeline.end: no step is named 'nothing' (steps: mark)" in \
        planned("after nothing", once)
    forever = "    - {name: mark, action: annotate, text: x, at: 1s, every: 5s}\n"
    assert "step 'mark' repeats every 5s until the load ends: give it a `count`" in \
        planned("after mark", forever)
    assert "expected `after STEP` or `after STEP + 10s`, got 'when mark ends'" in \
        planned("when mark ends", once)
    assert "expected a duration" in planned("after mark + soon", once)


@needs_fio
@pytest.mark.slow
def test_a_run_ends_its_delay_after_the_step_and_is_graded_up_to_there(run_scenario) -> None:
    """Real fio: a 10-minute timeline that ends 3 s after its step; graded on what ran (9 s:
    one late status dump of fio's on a loaded machine is then 5 % of it, not 15 %)."""
    out, run = run_scenario("""name: ends
workloads:
  db: {kind: oltp, data_iops: 50, log_iops: 10, data_files: 1, log_files: 1, dataset: 16MiB}
timeline:
  warmup: 1s
  duration: 10m
  end: after pause + 3s
  steps:
    - {name: pause, action: command, at: 5s, run: "sleep 1"}
thresholds:
  - db.iops >= 80% target
""")
    assert out.status == "passed", out.reason
    step = next(e for e in run["events"] if e["name"] == "pause")
    end = run["timeline_end"]
    assert end["reason"] == "pause ended 3s before"
    assert step["t_end"] + 3 <= end["t"] < step["t_end"] + 4
    assert run["elapsed_s"] < 60  # not the 10 minutes
    lo, hi = run["measured_window_s"]
    # graded to the end of fio's interval that held the end (fio stops a moment after asked)
    assert lo == 1 and end["t"] <= hi <= end["t"] + 2.5
    assert run["graded_s"] >= 0.95 * run["measured_s"]
    paced = {n: s for n, s in out.stats.items() if s.target_iops}
    assert paced and all(0.8 <= s.iops / s.target_iops <= 1.2 for s in paced.values()), paced
