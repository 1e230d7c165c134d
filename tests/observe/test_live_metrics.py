"""`assay run --metrics` scraped by Debian's Prometheus every second during a real fio run;
`promtool check metrics` on a live scrape; the finished run exported as OpenMetrics,
imported with `promtool tsdb create-blocks-from openmetrics` and queried back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay.metrics.duetime import due_windows, pair
from assay.plan import plan_text
from assay.results.blocklog import read_rows
from tests.conftest import needs_fio
from tests.observe.dashboard import dashboard_exprs
from tests.observe.prom import PROMTOOL, free_port, http_get, needs_prometheus, prometheus

pytestmark = [needs_fio, needs_prometheus, pytest.mark.slow]

SCENARIO = """\
name: live-oltp
description: paced OLTP watched by Prometheus
workloads:
  db:
    kind: oltp
    data_iops: 400
    log_iops: 40
    dataset: 64MiB
    load: {pacing: even}
timeline:
  warmup: 2s
  duration: 8s
  steps:
    - {action: annotate, at: 5s, text: "half way"}
thresholds:
  db: rate
  db.data.read.lat_p99: "< 2s"
"""
OM_ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def assay(*args: str, results: Path, **kw: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "ASSAY_RESULTS": str(results)}
    return subprocess.Popen([sys.executable, "-m", "assay", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def scrape(url: str, accept: str | None = None) -> tuple[int, dict[str, str], str]:
    status, headers, body = http_get(url, {"Accept": accept} if accept else None)
    return status, headers, body.decode()


def raw_samples(prom: Any, expr: str) -> dict[str, list[tuple[float, float]]]:
    """component -> [(time, value)] as Prometheus stored them."""
    out = {}
    for s in prom.query(f"{expr}[1h]"):
        out[s["metric"]["component"]] = [(float(t), float(v)) for t, v in s["values"]]
    return out


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("live")
    results = tmp / "results"
    scenario = tmp / "live.yaml"
    scenario.write_text(SCENARIO)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    out: dict[str, Any] = {"tmp": tmp, "results": results}
    with prometheus(tmp, scrape=f"127.0.0.1:{port}") as prom:
        proc = assay("run", str(scenario), "--metrics", f"127.0.0.1:{port}", results=results)
        try:
            deadline = time.monotonic() + 240
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    status, headers, text = scrape(url)
                except OSError:
                    time.sleep(0.3)
                    continue
                if 'phase="run"} 1' in text and "assay_achieved_iops" in text \
                        and "text" not in out:
                    out["text"], out["text_type"] = text, headers.get("Content-Type")
                    out["om_status"], om_headers, out["om"] = scrape(url, OM_ACCEPT)
                    out["om_type"] = om_headers.get("Content-Type")
                    out["other"] = http_get(url.replace("/metrics", "/etc/passwd"))[0]
                    out["post"] = http_get(url, method="POST")[0]
                time.sleep(0.5)
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out["rc"], out["stderr"] = proc.returncode, stdout + stderr
        time.sleep(1.5)  # Prometheus' last scrape is written
        out["iops"] = raw_samples(prom, "assay_achieved_iops")
        out["count"] = raw_samples(prom, "assay_latency_seconds_count")
        out["p99"] = raw_samples(prom, 'assay_latency_seconds{quantile="0.99"}')
        out["due"] = raw_samples(prom, "assay_due_latency_p99_seconds")
        out["panels"] = dashboard_results(prom, *[t for t, _ in out["iops"]["db.data.read"]])
        out["steps"] = prom.query("assay_timeline_steps_total[1h]")
        out["cpu"] = prom.query('assay_host_cpu_ratio{mode="total"}[1h]')
        out["thresholds"] = prom.query("assay_threshold_passing[1h]")
    runs = [p for p in results.iterdir() if (p / "run.json").exists()]
    assert len(runs) == 1, out["stderr"]
    out["run_dir"] = runs[0]
    out["run"] = json.loads((runs[0] / "run.json").read_text())
    return out


def due_p99_by_second(run_dir: Path, component: str) -> dict[int, float]:
    """Second -> p99 from the due time (ms), recomputed from the stored samples and lags."""
    jobs = due_windows(plan_text(SCENARIO, "live.yaml"))[component][0]
    lags: dict[int, dict[int, int]] = {}
    for r in read_rows(run_dir, "lags"):
        if r["c"] in jobs:
            acc = lags.setdefault(round(r["t"]), {})
            for k, v in r["bins"].items():
                acc[int(k)] = acc.get(int(k), 0) + v
    out = {}
    for r in read_rows(run_dir, "samples"):
        sec = round(r["t"])
        if r["c"] == component and sec in lags:
            p99 = pair({int(k): v for k, v in r["bins"].items()}, lags[sec]).percentiles(
                (99.0,))[99.0]
            if p99 is not None:
                out[sec] = p99 / 1e6
    return out


def dashboard_results(prom: Any, *times: float) -> dict[str, int]:
    """Every query of docs/grafana/assay.json (its variables set to all runs, all
    components), evaluated at each of `times`: expression -> the most series it returned."""
    out = {}
    for expr in dashboard_exprs():
        concrete = expr.replace("$run_id", ".*").replace("$component", ".*") \
            .replace("$__interval", "10s")
        out[expr] = max(len(prom.query(concrete, at=t)) for t in times)
    return out


def series(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in read_rows(run_dir, "series"):
        out.setdefault(r["c"], []).append(r)
    return out


def in_order(scraped: list[float], seconds: list[float]) -> bool:
    """Whether each scraped value is a second at or after the one the scrape before showed."""
    i = 0
    for v in scraped:
        while i < len(seconds) and abs(v - seconds[i]) >= 1e-6:
            i += 1
        if i == len(seconds):
            return False
    return True


def test_prometheus_scraped_the_run_and_its_values_are_the_runs(live: dict[str, Any]) -> None:
    assert live["rc"] in (0, 1), live["stderr"]  # passed or failed (a loaded machine): graded
    run, rows = live["run"], series(live["run_dir"])
    assert set(live["iops"]) == {"db.data.read", "db.data.write", "db.log.write"}
    for c, samples in live["iops"].items():
        per_second = [r["iops"] for r in rows[c]]
        # every value Prometheus holds is one of the run's seconds, exactly
        for _, v in samples:
            assert any(abs(v - x) < 1e-6 for x in per_second), (c, v, per_second)
        # in the run's order, and updated live: Prometheus' counter went through several of
        # the run's seconds (a paced run repeats its IO/s; when scrapes begin depends on
        # the machine's load, so no share of the seconds is asked)
        assert in_order([v for _, v in samples], per_second), (c, samples, per_second)
        assert len({v for _, v in live["count"][c]}) >= 3, (c, live["count"][c])
        # the last scrape (the endpoint stays 2 s after the run) holds the cumulative count
        # of every IO, or of all but the last second or two on a machine too loaded to scrape
        prefix = [sum(r["ios"] for r in rows[c][:i + 1]) for i in range(len(rows[c]))]
        counts = [v for _, v in live["count"][c]]
        assert counts[-1] in prefix[-3:], (c, counts[-3:], prefix)
        assert all(v in prefix for v in counts), (c, counts, prefix)
        # run.json's IOs of the measured window, as Prometheus' counter tells them: from the
        # last count scraped in the warm-up to the last one, off by at most the seconds the
        # scrapes fell between (one scrape interval at each end)
        warm = [p for p, r in zip(prefix, rows[c], strict=True) if r["phase"] == "warmup"]
        # no scrape in the 2 s warm-up (a loaded machine): its IOs, as the run stored them
        start = max([v for v in counts if v <= warm[-1]], default=warm[-1])
        slack = 2 * max(r["ios"] for r in rows[c])
        assert abs((counts[-1] - start) - run["stats"][c]["ios"]) <= slack, \
            (c, counts, start, run["stats"][c]["ios"], slack)
        assert all(v > 0 for _, v in live["p99"][c])
        # latency from the due time, live: each value is one second's fio bins paired with
        # that second's issue-log lags of the component's own jobs, as stored in the run
        expected = due_p99_by_second(live["run_dir"], c)
        assert live["due"][c], c
        for _, v in live["due"][c]:
            assert any(abs(v * 1000 - x) < 1e-6 for x in expected.values()), (c, v, expected)
    assert live["cpu"] and all(0 <= float(v) <= 1 for _, v in live["cpu"][0]["values"])
    # the timeline step, counted once it ended
    steps = {(s["metric"]["action"], s["metric"]["outcome"]): s["values"][-1][1]
             for s in live["steps"]}
    assert steps == {("annotate", "ok"): "1"}, steps
    verdicts = {(s["metric"]["threshold"], s["metric"]["component"]): s["values"][-1][1]
                for s in live["thresholds"]}
    assert verdicts[("db.data.read.lat_p99 < 2s", "db.data.read")] == "1"


def test_every_dashboard_query_draws_the_live_run(live: dict[str, Any]) -> None:
    empty = [e for e, n in live["panels"].items() if n == 0 and not annotation_of_loss(e)]
    assert not empty, empty


def annotation_of_loss(expr: str) -> bool:
    return "assay_host_active" in expr and "== 0" in expr  # no host was lost in this run


def test_live_scrape_passes_promtool_and_speaks_openmetrics(live: dict[str, Any]) -> None:
    assert "text" in live, live["stderr"]
    assert live["text_type"].startswith("text/plain; version=0.0.4")
    check = subprocess.run([str(PROMTOOL), "check", "metrics"], input=live["text"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert live["om_status"] == 200
    assert live["om_type"].startswith("application/openmetrics-text; version=1.0.0")
    assert live["om"].endswith("# EOF\n")
    assert "# TYPE assay_io_bytes counter" in live["om"]
    assert "# UNIT assay_latency_seconds seconds" in live["om"]
    assert live["post"] == 405 and live["other"] == 404


def test_exported_run_backfills_into_prometheus(live: dict[str, Any]) -> None:
    tmp, run_dir = live["tmp"], live["run_dir"]
    om = tmp / "run.om"
    env = {**os.environ, "ASSAY_RESULTS": str(live["results"])}
    r = subprocess.run([sys.executable, "-m", "assay", "export", run_dir.name, "--format",
                        "openmetrics", "-o", str(om)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    blocks = tmp / "backfill"
    made = subprocess.run([str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(om),
                           str(blocks)], capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    rows = series(run_dir)
    with prometheus(tmp, storage=blocks) as prom:
        got = raw_samples(prom, f'assay_achieved_iops{{run_id="{run_dir.name}"}}')
        count = raw_samples(prom, "assay_latency_seconds_count")
        # each second of the run, and just after its end (where the verdicts are stamped)
        panels = dashboard_results(prom, *[t for t, _ in got["db.data.read"]],
                                   live["run"]["ended"] + 1)
    # the dashboard draws the backfilled run too (due-time latency is live only: the
    # export cannot tell which fio jobs make a component; docs/observability.md)
    empty = [e for e, n in panels.items() if n == 0 and not annotation_of_loss(e)
             and "assay_due_latency" not in e]
    assert not empty, empty
    assert set(got) == set(rows)
    for c, samples in got.items():  # every second, with its value, in order
        assert [v for _, v in samples] == [r["iops"] for r in rows[c]]
        assert count[c][-1][1] == sum(r["ios"] for r in rows[c])
        # on the run's clock: each point sits at its second's `t` after the load started
        t0 = samples[0][0] - rows[c][0]["t"]
        assert all(abs(t - t0 - r["t"]) < 0.002 for (t, _), r in zip(samples, rows[c],
                                                                        strict=True))
        assert abs(t0 - live["run"]["started"]) < 60
