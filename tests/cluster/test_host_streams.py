"""Each host's own streams of a cluster run (`samples`, `lags` in its directory
`hosts/<host>/`) are stored as the run's own are: sealed into compressed blocks as the run
goes, read back by the same readers, whole after a run that ends normally, by Ctrl-C or with
a host lost. What they hold grades each host as the run graded it; the controller holds none
of it in memory. Replayed hosts (tests/fixtures/replay), 2 s blocks: the
recordings' 10 seconds span several."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay import verdict
from assay.cluster.hostseries import HostSeries
from assay.engine import Engine
from assay.metrics.duetime import due_join, due_windows, in_time_order
from assay.plan.build import plan_text
from assay.results import blocklog
from assay.results.blocklog import read_rows
from assay.results.rundir import RunDir, read_ndjson
from assay.run_options import Interrupted, RunOptions
from assay.runners import ReplayRunner
from tests.cluster.test_duetime import THRESHOLDS
from tests.cluster.test_group import REPLAY, hosts_in

DUE = {"n1": "due-steady", "n2": "due-stall", "n3": "due-steady"}


class CtrlC:
    """A watcher that stops the run as Ctrl-C would, after some seconds were stored."""

    def __init__(self, seconds: int):
        self.left = seconds

    def opened(self, run_dir: Path, live: Any) -> None:
        pass

    def rows(self, stream: str, rows: list[dict[str, Any]]) -> None:
        if stream == "series":
            self.left -= 1
            if not self.left:
                raise Interrupted()


def run(tmp_path: Path, recordings: dict[str, str], extra: str = "", watcher: Any = None):
    text = (REPLAY / "scenario.yaml").read_text() + extra
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts_in(tmp_path, list(
        recordings)))
    out = Engine(plan, RunOptions(tmp_path / "results", watcher=watcher,
                                  runner=lambda h, w: ReplayRunner(REPLAY / recordings[h], h, w)),
                 Console(file=io.StringIO())).execute()
    return plan, out, json.loads((out.run_dir / "run.json").read_text())


def regraded(plan, run_dir: Path, host: str) -> dict[str, Any]:
    """A host's statistics graded again from its rows as read back from the run directory."""
    own = HostSeries(plan, RunDir(run_dir)).host_plan(host)
    samples = list(read_rows(run_dir / "hosts" / host, "samples"))
    lags = sorted(read_rows(run_dir / "hosts" / host, "lags"), key=lambda r: float(r["t"]))
    steps = [e for e in read_ndjson(run_dir / "events.ndjson") if e.get("kind") == "step"]
    due = due_join(samples, lags, due_windows(own)) if lags else None
    v = verdict.grade(own, samples, steps, [], due=due)
    return {k: s.to_json() for k, s in v.stats.items()}


def lag_rows(rows: Any) -> Counter[tuple[Any, ...]]:
    return Counter((r["host"], r["t"], r["c"], json.dumps(r["bins"], sort_keys=True))
                   for r in rows)


def hosts_lags(run_dir: Path) -> list[dict[str, Any]]:
    return [{"host": h.name, **r} for h in (run_dir / "hosts").iterdir()
            for r in read_rows(h, "lags")]


def sealed(run_dir: Path, name: str) -> None:
    """Blocks hold the stream; the plain tail only its last seconds."""
    rows = list(read_rows(run_dir, name))
    tail = list(read_ndjson(run_dir / f"{name}.ndjson"))
    assert (run_dir / f"{name}.blocks").stat().st_size > 0, name
    assert len(tail) < len(rows) / 2, (name, len(tail), len(rows))


@pytest.fixture(autouse=True)
def short_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocklog, "BLOCK_S", 2.0)


@pytest.mark.parametrize("stop", [None, 6], ids=["to-the-end", "ctrl-c"])
def test_host_streams_are_blocks_and_grade_each_host_as_the_run_did(tmp_path, stop):
    plan, out, rec = run(tmp_path, DUE, THRESHOLDS, CtrlC(stop) if stop else None)
    assert out.status == ("interrupted" if stop else "failed"), out.reason
    d = out.run_dir
    for h in DUE:
        for name in ("samples", "lags"):
            sealed(d / "hosts" / h, name)
    # every host's lag row, once: the same rows as the run's `lags` stream holds, read
    # back in time order there
    merged = list(in_time_order(read_rows(d, "lags")))
    assert lag_rows(hosts_lags(d)) == lag_rows(merged)
    assert [r["t"] for r in merged] == sorted(r["t"] for r in merged)
    graded = rec["cluster"]["graded"]
    for h in DUE:
        rows = list(read_rows(d / "hosts" / h, "samples"))
        assert graded[h]["ios"] == sum(r["ios"] for r in rows) > 0
        assert graded[h]["stats"] == regraded(plan, d, h)
    p99 = {h: graded[h]["stats"]["db.data.read"]["intended"]["lat_intended_p99_ms"]
           for h in DUE}
    if not stop:  # n2 stalled for a second: its figure is the rows' own, not the others'
        assert p99["n2"] > 10 * max(p99["n1"], p99["n3"])


def test_a_lost_hosts_rows_up_to_its_loss_are_read_back(tmp_path):
    plan, out, rec = run(tmp_path, {"n1": "steady", "n2": "steady", "n3": "died"})
    assert list(rec["cluster"]["lost"]) == ["n3"]
    d = out.run_dir
    for h in ("n1", "n2", "n3"):
        sealed(d / "hosts" / h, "samples")
    graded = rec["cluster"]["graded"]
    for h in ("n1", "n2", "n3"):
        assert graded[h]["stats"] == regraded(plan, d, h)
    ios = {h: sum(r["ios"] for r in read_rows(d / "hosts" / h, "samples")) for h in graded}
    assert ios == {h: g["ios"] for h, g in graded.items()} and 0 < ios["n3"] < ios["n1"]


def test_an_older_runs_plain_host_streams_read_the_same(tmp_path):
    """A host directory without blocks: every row in <stream>.ndjson."""
    _, out, _ = run(tmp_path, DUE, THRESHOLDS)
    for h in DUE:
        old = tmp_path / "old" / h
        old.mkdir(parents=True)
        for name in ("samples", "lags"):
            rows = list(read_rows(out.run_dir / "hosts" / h, name))
            (old / f"{name}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
            assert rows and list(read_rows(old, name)) == rows
