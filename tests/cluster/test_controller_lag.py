"""A controller that falls behind its hosts loses none of them for it: a host is judged by
when it sent its dumps, the lag is said (run.json `cluster.controller_lag`), a run that
cannot keep up is aborted with that reason; a host that really goes silent is still lost."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from assay.cluster import merge
from assay.cluster.liveness import LAG_S, LOSS_S, PROBE_S
from assay.engine import Engine
from assay.plan.build import plan_text
from assay.run_options import RunOptions
from assay.runners import ReplayRunner
from assay.runners.base import Document
from tests.cluster.test_group import REPLAY, hosts_in


def slow_merge(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Every item the controller takes costs it `seconds` more: it falls behind the hosts."""
    merged = merge.ClusterRun._merge

    def slow(self: merge.ClusterRun, final: bool = False) -> Iterator[Document]:
        time.sleep(seconds)
        yield from merged(self, final)
    monkeypatch.setattr(merge.ClusterRun, "_merge", slow)


class SilentRunner(ReplayRunner):
    """A replayed host that goes silent after its third dump (its fio and host gone quiet),
    noting when."""

    quiet_at: float | None = None

    def start(self, name, env, *, at=None, sections=()):
        run = super().start(name, env, at=at, sections=sections)
        docs = run.documents

        def silent(poll: float = 0.2) -> Iterator[Document | None]:
            for i, doc in enumerate(docs(poll)):
                yield doc
                if doc is not None and i == 2 and name == "run.fio":
                    SilentRunner.quiet_at = time.time()
                    while not run._stopped:
                        time.sleep(0.1)
                    return
        run.documents = silent  # type: ignore[method-assign]
        return run


def run(tmp_path: Path, n: int, runner=ReplayRunner) -> tuple[dict, Path, str]:
    hosts = hosts_in(tmp_path, [f"n{i}" for i in range(n)], shared=True)
    plan = plan_text((REPLAY / "scenario.yaml").read_text(), str(REPLAY / "scenario.yaml"),
                     hosts=hosts)
    console = io.StringIO()
    out = Engine(plan, RunOptions(tmp_path / "results", runner=lambda h, w: (
        runner if h == "n0" else ReplayRunner)(REPLAY / "steady", h, w, speed=1.0)),
        Console(file=console)).execute()
    return json.loads((out.run_dir / "run.json").read_text()), out.run_dir, console.getvalue()


def test_a_controller_behind_its_hosts_loses_none_and_says_how_far(tmp_path, monkeypatch):
    # 16 hosts, each dump costing the controller 0.15 s: 2.4 s of work per second of the run;
    # the other hosts' last dumps and ends, read 4.5 s after the first host's end, used to
    # lose them all ("fio still running after the other hosts ended")
    slow_merge(monkeypatch, 0.15)
    rec, _, said = run(tmp_path, 16)
    c = rec["cluster"]
    assert c["lost"] == {}, c["lost"]
    assert rec["status"] != "aborted", rec["reason"]
    lag = c["controller_lag"]
    assert lag["max_s"] > 3 * LAG_S and lag["behind_s"] > 1 and lag["episodes"] >= 1, lag
    assert "behind the hosts" in said


def test_a_controller_that_cannot_keep_up_aborts_the_run_saying_so(tmp_path, monkeypatch):
    monkeypatch.setattr(merge, "LAG_ABORT_S", 2.0)
    slow_merge(monkeypatch, 0.3)
    rec, _, _ = run(tmp_path, 8)
    assert rec["status"] == "aborted"
    assert "controller fell" in rec["reason"] and "behind" in rec["reason"], rec["reason"]
    assert rec["cluster"]["lost"] == {}


@pytest.mark.parametrize("slow", [0.0, 0.1], ids=["controller-on-time", "controller-behind"])
def test_a_silent_host_is_still_lost_within_the_detectors_time(tmp_path, monkeypatch, slow):
    lost_at: list[float] = []
    reported = Engine._lost
    monkeypatch.setattr(Engine, "_lost", lambda self, loss: (
        lost_at.append(time.time()), reported(self, loss))[1])
    if slow:
        slow_merge(monkeypatch, slow)
    SilentRunner.quiet_at = None
    rec, _, _ = run(tmp_path, 4, SilentRunner)
    c = rec["cluster"]
    assert list(c["lost"]) == ["n0"] and "no status from fio" in c["lost"]["n0"]["reason"]
    assert SilentRunner.quiet_at is not None and lost_at
    # its silence counted from its last dump; the next was due 1 s after it; and as late as
    # the controller was when it judged
    late = lost_at[0] - SilentRunner.quiet_at
    assert late <= 1.0 + LOSS_S + PROBE_S + c["controller_lag"]["max_s"] + 0.5, late
