import pytest

from assay.fio.jsonstream import split_documents
from assay.metrics.sampler import ComponentSpec, Sampler
from tests.conftest import FIXTURES

DOCS = list(split_documents((FIXTURES / "fio" / "status-interval-jsonplus.json").read_text()))


def test_interval_samples_add_up_to_fio_final_totals():
    specs = [ComponentSpec("t.db.read", ["db"], "read"),
             ComponentSpec("t.db.write", ["db"], "write"),
             ComponentSpec("t.log.write", ["log"], "write")]
    sampler = Sampler(specs)
    sampler.start(DOCS[0]["timestamp_ms"] - 1000)
    samples = [s for d in DOCS for s in sampler.feed(d)]
    final = {j["jobname"]: j for j in DOCS[-1]["jobs"]}
    for spec in specs:
        mine = [s for s in samples if s.component == spec.component]
        fio = final[spec.jobs[0]][spec.direction]
        assert sum(s.ios for s in mine) == fio["lat_ns"]["N"]
        assert sum(s.bytes for s in mine) == fio["io_bytes"]
        assert sum(s.hist.count for s in mine) == fio["lat_ns"]["N"]
        # the largest per-interval maximum is fio's maximum for the whole job
        assert max(s.lat_max_ns or 0 for s in mine) == fio["lat_ns"]["max"]
        assert all(s.dt > 0 for s in mine)


def test_fixed_rate_component_behind_schedule_is_flagged():
    spec = ComponentSpec("t.db.read", ["db"], "read", target_iops=100_000)
    sampler = Sampler([spec])
    sampler.start(DOCS[0]["timestamp_ms"] - 1000)
    samples = [s for d in DOCS for s in sampler.feed(d)]
    assert samples[-1].behind_s > 1.0  # ~500 IO/s done against a 100k schedule


def test_on_schedule_component_is_not_flagged():
    spec = ComponentSpec("t.log.write", ["log"], "write", target_iops=100)
    sampler = Sampler([spec])
    sampler.start(DOCS[0]["timestamp_ms"] - 1000)
    samples = [s for d in DOCS for s in sampler.feed(d)]
    assert max(s.behind_s for s in samples) < 0.5


def test_warmup_samples_are_labelled():
    sampler = Sampler([ComponentSpec("t.db.read", ["db"], "read")], warmup_s=1.5)
    sampler.start(DOCS[0]["timestamp_ms"] - 1000)
    phases = [s.phase for d in DOCS for s in sampler.feed(d)]
    assert phases[0] == "warmup" and phases[-1] == "run"


def _late_docs():
    """The `late` recording: 18 Poisson jobs at 1-12 IO/s whose first dump came 4.3 s after
    fio started, saying job_runtime 466 ms (tests/fixtures/replay/record.py)."""
    import json

    from tests.conftest import FIXTURES as F

    rec = F / "replay" / "late"
    started = json.loads((rec / "run.json").read_text())["started"] * 1000
    return list(split_documents((rec / "run.out.json").read_text())), started


def test_late_first_dump_does_not_compress_the_time_axis():
    from assay.plan import load
    from tests.conftest import FIXTURES as F

    docs, started = _late_docs()
    plan = load(str(F / "replay" / "late" / "scenario.yaml"))
    sampler = Sampler(plan.specs, warmup_s=plan.warmup)
    sampler.start(started)
    samples = [s for d in docs for s in sampler.feed(d)]
    first = docs[0]
    assert first["timestamp_ms"] - started > 3000  # the dump was late...
    assert max(j["job_runtime"] for j in first["jobs"]) < 1000  # ...and its runtime lies
    # the axis runs on fio's clock: the last sample ends where fio's 8 s of jobs did, not
    # 3-4 s short of it (today's anchor on job_runtime graded the 6 s window on 2.45 s)
    assert abs(samples[-1].t - 8.0) < 0.7
    # the first sample holds the IOs of the time the jobs really ran, at their rate
    reads = [s for s in samples if s.component == "db.data.read"]
    assert reads[0].dt > 2.5 and 30 < reads[0].iops < 75  # 50 IO/s target


def test_arrival_time_stands_in_for_a_missing_timestamp():
    sampler = Sampler([ComponentSpec("t.db.read", ["db"], "read")])
    sampler.start(10_000)
    docs = [{k: v for k, v in d.items() if k != "timestamp_ms"} for d in DOCS]
    samples = [s for i, d in enumerate(docs) for s in sampler.feed(d, 11_000 + 1000 * i)]
    assert samples and samples[-1].t == pytest.approx(len(DOCS), abs=1.1)
