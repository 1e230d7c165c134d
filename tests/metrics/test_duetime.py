"""Latency from the due time for every fixed-rate component: a 1 s stall of fio (SIGSTOP) on
real fio, for even pacing, Poisson pacing and a component of over 3 million IOs, against the
truth the stall implies; and the folding pieces on their own."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

from assay.metrics.duetime import due_join, due_windows, pair
from assay.metrics.pacedjobs import paced_jobs
from assay.plan import load
from assay.results.blocklog import read_rows
from tests.conftest import needs_fio

STALLED = """\
name: due
{target}
workloads:
  db:
    kind: oltp
    data_iops: {iops}
    log_files: 0
    read_pct: 100
    dataset: 64MiB
    load: {{pacing: {pacing}, iodepth: 8}}
timeline: {{warmup: 1s, duration: {seconds}s}}
"""


def test_the_longest_lags_go_with_the_shortest_latencies():
    # 3 IOs stalled in the device (1 s from the submit, on time), 2 waited in fio's queue
    h = pair({1_000_000_000: 3, 100_000: 2}, {0: 3, 800_000_000: 1, 400_000_000: 1})
    assert h.count == 5
    assert h.max is not None and 995e6 <= h.max <= 1_005e6  # the stalled ones, not 1.8 s
    assert sum(v for k, v in h.bins.items() if 790e6 <= k <= 801e6) == 1
    # more IOs issued than completed that second: the lags still count
    assert pair({100_000: 1}, {0: 1, 500_000_000: 2}).count == 3


def test_a_sample_held_in_memory_joins_with_its_bins_as_stored():
    """A cluster's hosts are graded on samples held in memory, their bins as JSON text
    (`bins_json`): the join takes the latency from the submit from them as from a stored
    row's `bins`, not the lags alone."""
    lags = [{"t": 2.0, "c": "job", "bins": {"1000000": 4}}]
    stored = {"t": 2.0, "dt": 1.0, "c": "db.read", "bins": {"5000000": 4}}
    held = {**{k: v for k, v in stored.items() if k != "bins"}, "bins_json": '{"5000000":4}'}
    windows = {"db.read": (["job"], 0.0, 10.0)}
    figures = [due_join([s], lags, windows)["db.read"] for s in (stored, held)]
    assert figures[0] == figures[1]
    assert 5.9 <= figures[1]["lat_intended_p99_ms"] <= 6.1  # 1 ms late + 5 ms from the submit


def test_jobs_are_numbered_as_fio_numbers_them():
    jobs = {"a": {"rate_iops": 10, "bs": "4k", "rate_process": "poisson", "rw": "randread"},
            "threads": {"numjobs": 4, "rw": "randread", "bs": "8k"},
            "b": {"rate": "1m", "bs": "256k", "rw": "read"},
            "mixed": {"rate_iops": 10, "rw": "randrw", "bs": "4k"}}
    paced = paced_jobs(jobs)
    assert set(paced) == {"a", "b"}  # mixed directions: no single schedule
    assert paced["a"].thread_number == 1 and paced["b"].thread_number == 6
    assert paced["a"].poisson and not paced["b"].poisson and paced["b"].bps == 1 << 20


def stall(results, seconds: float, lengths: list[float]) -> threading.Thread:
    """SIGSTOP the run's fio for `seconds`, about 2.5 s into the load; the stall's measured
    length goes to `lengths`."""

    def run() -> None:
        end = time.time() + 60
        while time.time() < end:
            runs = list(results.glob("*/series.ndjson"))
            if runs and runs[0].read_text().count("\n") >= 2:
                break
            time.sleep(0.1)
        pids = subprocess.run(["pgrep", "-f", "hosts/local/run.fio"], capture_output=True,
                              text=True).stdout.split()
        t0 = time.monotonic()
        for pid in pids:
            os.kill(int(pid), signal.SIGSTOP)
        time.sleep(seconds)
        for pid in pids:
            os.kill(int(pid), signal.SIGCONT)
        lengths.append(time.monotonic() - t0)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def truth_p99_ms(stall_s: float, window_s: float) -> float:
    """IOs due during the stall wait for its end: at a constant rate their latencies from the
    due time spread evenly over [0, stall], and they are stall/window of all IOs; the 1 % of
    the window's IOs that waited longest waited at least stall - 1 % of the window."""
    return 1000 * (stall_s - 0.01 * window_s)


@needs_fio
@pytest.mark.parametrize(("pacing", "iops", "seconds", "target"), [
    ("even", 1000, 5, ""),
    ("poisson", 1000, 5, ""),
    # over 3 million IOs (fio's per-IO logs stopped at 3 M): no IO, only fio's pacing
    ("even", 300_000, 10, 'target: {ioengine: "null"}'),
], ids=["even", "poisson", "3M-IOs"])
def test_a_one_second_stall_shows_in_the_due_time_p99(run_scenario, results, pacing, iops,
                                                      seconds, target):
    lengths: list[float] = []
    staller = stall(results, 1.0, lengths)
    outcome, run = run_scenario(STALLED.format(iops=iops, pacing=pacing, seconds=seconds,
                                               target=target))
    staller.join()
    s = run["stats"]["db.data.read"]
    assert run["components"]["db.data.read"]["poisson"] == (pacing == "poisson")
    if iops > 100_000:
        assert sum(1 for _ in read_rows(outcome.run_dir, "samples")) and \
            s["ios"] > 3_000_000 - 1.5 * iops  # the stall costs no IOs: fio catches up
    truth = truth_p99_ms(lengths[0], s["seconds"])
    due = s["intended"]["lat_intended_p99_ms"]
    assert abs(due - truth) <= 0.10 * truth, (due, truth, s["intended"])
    assert s["lat_p99_ms"] < 0.5 * truth  # fio's own figure hides the stall
    # the issue logs are gone: nothing per IO is kept
    assert not list((outcome.run_dir / "hosts" / "local").glob("*.iolog"))


def test_every_fixed_rate_component_of_the_demo_is_timed_from_its_due_time():
    """`make demo` runs exchange-quick: Poisson database IO and log writes, even BDM reads."""
    plan = load("exchange-quick")
    windows = due_windows(plan)
    paced = [c for c in plan.specs if all(plan.jobs[j].options.get("rate_iops") or
                                          plan.jobs[j].options.get("rate") for j in c.jobs)]
    assert {c.component for c in paced} == set(windows) == {c.name for c in plan.components}
    assert {plan.jobs[j].options["rate_process"] for c in paced for j in c.jobs} == \
        {"poisson", "linear"}
    assert plan.intended_note.startswith("from fio's issue logs")
