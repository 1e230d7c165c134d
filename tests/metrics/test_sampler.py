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
