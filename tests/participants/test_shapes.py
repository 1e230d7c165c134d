"""One code path for one host and many: the same replayed run on this machine (a local run),
on an inventory of one host and on three, checked the same way. Real fio output and real
agent rows, replayed (tests/fixtures/replay/due-steady); the lab runs the same end to end
(tests/cluster/test_lab*.py)."""

from __future__ import annotations

import io
import json
import shutil
import types
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay import participants
from assay.engine import Engine
from assay.participants import ParticipantBase, Where
from assay.plan.build import plan_text
from assay.report.terminal import print_summary
from assay.results.rundir import read_record
from assay.run_options import RunOptions
from assay.runners import ReplayRunner
from tests.cluster.test_group import REPLAY, hosts_in

SHAPES: dict[str, list[str] | None] = {"local": None, "one host": ["n1"],
                                       "three hosts": ["n1", "n2", "n3"]}
DUE = '  db.data.read.lat_intended_p99: "< 500ms"\n'


class Recorder(ParticipantBase):
    """A plug-in participant that notes each step of its lifecycle and the hosts it runs on."""

    name = "recorder"

    def __init__(self, where: Where):
        self.where = where
        self.calls: list[str] = []

    def prefill(self) -> None:
        self.calls.append("prefill")

    def prepare(self) -> dict[str, Any] | None:
        self.calls.append("prepare")
        return None

    def start(self) -> None:
        self.calls.append("start")

    def finish(self, now: float, rc: int) -> list[Any]:
        self.calls.append(f"finish {rc}")
        return []

    def stop(self) -> list[Any]:
        self.calls.append("stop")
        return []

    def collect(self, status: str) -> dict[str, Any] | None:
        self.calls.append(f"collect {status}")
        return {"calls": self.calls, "hosts": sorted(self.where.runners)}


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = types.SimpleNamespace(make=Recorder)
    monkeypatch.setitem(participants.REGISTRY._registered, "recorder", plugin)


def run(shape: str, tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    names = SHAPES[shape]
    text = (REPLAY / "scenario.yaml").read_text() + DUE
    plan = plan_text(text, str(REPLAY / "scenario.yaml"),
                     hosts=hosts_in(tmp_path, names) if names else None)
    out = Engine(plan, RunOptions(tmp_path / "results", runner=lambda host, work: ReplayRunner(
        REPLAY / "due-steady", host, work)), Console(file=io.StringIO())).execute()
    return out, json.loads((out.run_dir / "run.json").read_text())


@pytest.mark.parametrize("shape", SHAPES)
def test_one_path_for_one_host_and_many(shape: str, tmp_path: Path, recorder: None) -> None:
    out, rec = run(shape, tmp_path)
    hosts = SHAPES[shape] or ["local"]
    assert out.status == "passed", out.reason
    # every participant's lifecycle, in order, on every host the run has
    assert rec["participants"]["recorder"] == {
        "calls": ["prefill", "prepare", "start", "finish 0", "collect done"], "hosts": hosts}
    # the merged series holds every host's IOs: each host's rate, times the hosts
    one = rec["stats"]["db.data.read"]
    assert one["ios"] > 0 and one["target_iops"] == pytest.approx(280 * len(hosts), rel=0.01)
    # latency from the due time, from the agents' rows, graded on every shape
    due = one["intended"]["lat_intended_p99_ms"]
    assert due is not None and due < 100
    [t] = [t for t in rec["thresholds"] if t["metric"] == "lat_intended_p99"]
    assert t["passed"] and t["observed"] == pytest.approx(due, rel=0.01)


class CtrlC:
    """Ctrl-C on the engine's thread at the third stored second (the RunWatcher's seat)."""

    def __init__(self) -> None:
        self.seconds = 0

    def opened(self, run_dir: Path, live: Any) -> None: ...

    def rows(self, stream: str, rows: list[dict[str, Any]]) -> None:
        if stream == "samples":
            self.seconds += 1
            if self.seconds == 3:
                raise KeyboardInterrupt


@pytest.mark.parametrize("shape", ["local", "three hosts"])
def test_a_run_cut_short_stops_its_participants_then_collects_them(
        shape: str, tmp_path: Path, recorder: None) -> None:
    names = SHAPES[shape]
    plan = plan_text((REPLAY / "scenario.yaml").read_text(), str(REPLAY / "scenario.yaml"),
                     hosts=hosts_in(tmp_path, names) if names else None)
    out = Engine(plan, RunOptions(tmp_path / "results", watcher=CtrlC(),
                                  runner=lambda host, work: ReplayRunner(
                                      REPLAY / "steady", host, work)),
                 Console(file=io.StringIO())).execute()
    rec = json.loads((out.run_dir / "run.json").read_text())
    assert out.status == "interrupted"
    assert rec["participants"]["recorder"]["calls"] == [
        "prefill", "prepare", "start", "stop", "collect interrupted"]


class Broken(ParticipantBase):
    name = "broken"

    def __init__(self, where: Where):
        pass

    def collect(self, status: str) -> dict[str, Any] | None:
        raise RuntimeError("its server would not stop")


@pytest.mark.parametrize("shape", ["local", "three hosts"])
def test_a_participant_that_cannot_end_aborts_the_run_and_the_others_still_end(
        shape: str, tmp_path: Path, recorder: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No verdict on a run whose participant did not end (its section is missing: an integrity
    pass not recorded would read as nothing found); the one after it is ended all the same."""
    registered = participants.REGISTRY._registered
    monkeypatch.setattr(participants.REGISTRY, "_registered", {
        "broken": types.SimpleNamespace(make=Broken), **registered})
    out, rec = run(shape, tmp_path)
    assert out.status == "aborted" and rec["status"] == "aborted"
    assert "a participant could not end: RuntimeError: its server would not stop" in out.reason
    assert rec["participants"]["recorder"]["calls"][-1] == "collect done"


@pytest.mark.parametrize("shape", ["local", "three hosts"])
def test_an_agent_that_fails_is_named_with_its_host_and_reason(shape: str,
                                                                tmp_path: Path) -> None:
    # the agent's rows as recorded, but it ends without its last line (it died)
    recording = tmp_path / "died-agent"
    shutil.copytree(REPLAY / "due-steady", recording)
    log = recording / "issuelog.ndjson"
    log.write_text("".join(ln for ln in log.read_text().splitlines(keepends=True)
                           if '"end"' not in ln))
    names = SHAPES[shape]
    plan = plan_text((REPLAY / "scenario.yaml").read_text() + DUE, str(REPLAY / "scenario.yaml"),
                     hosts=hosts_in(tmp_path, names) if names else None)
    out = Engine(plan, RunOptions(tmp_path / "results", runner=lambda host, work: ReplayRunner(
        recording, host, work)), Console(file=io.StringIO())).execute()
    rec = json.loads((out.run_dir / "run.json").read_text())
    due = rec["cluster"]["due_time"] if names else rec["due_time"]
    hosts = names or ["local"]
    assert due["hosts"] == hosts
    assert set(due["errors"]) == set(hosts)
    assert all("ended without its last line" in why for why in due["errors"].values())
    console = Console(file=io.StringIO(), width=200)
    print_summary(console, read_record(out.run_dir), out.run_dir)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    for host in hosts:  # said once per host, in the summary
        assert shown.count(f"p99 from due on {host}:") == 1, shown
