"""Each job of a dump read once however many series read it (metrics/counters.py): a
cluster's host series and its merged series share the reading; a lost host's frozen job is
read once and adds nothing after its loss."""

from assay.fio.jsonstream import split_documents
from assay.metrics.counters import Cumulative, Parsed, counters
from assay.metrics.histogram import Histogram
from assay.metrics.sampler import ComponentSpec, Sampler
from tests.conftest import FIXTURES

DOCS = list(split_documents((FIXTURES / "fio" / "status-interval-jsonplus.json").read_text()))
SPECS = [ComponentSpec("t.db.read", ["db"], "read"), ComponentSpec("t.log.write", ["log"], "write")]


def rows(sampler: Sampler, docs: list[dict], parsed: Parsed | None = None) -> list[dict]:
    sampler.start(docs[0]["timestamp_ms"] - 1000)
    out = []
    for d in docs:
        if parsed:
            parsed.turn()
        out += [s.row() for s in sampler.feed(d)]
    return out


def test_a_job_is_read_once_per_generation_and_carried_while_it_is_read():
    parsed = Parsed()
    job = DOCS[1]["jobs"][0]
    first = parsed.get(job, "read")
    assert parsed.get(job, "read") is first  # the second series: no second reading
    parsed.turn()
    assert parsed.get(job, "read") is first  # a frozen job, read again the next second
    parsed.turn()
    parsed.turn()  # a generation without it: forgotten
    again = parsed.get(job, "read")
    assert again is not first and again.ios == first.ios and again.bins == first.bins
    copy = {**job}  # another job (another dump's) is read anew, never mistaken for it
    assert parsed.get(copy, "read") is not again


def test_shared_reading_gives_the_same_series_as_reading_alone():
    alone = rows(Sampler(SPECS), DOCS)
    parsed = Parsed()
    shared = rows(Sampler(SPECS, parsed=parsed), DOCS, parsed)
    assert shared == alone and sum(r["ios"] for r in alone) > 0


def test_a_frozen_job_adds_no_io_after_its_last_dump():
    frozen = DOCS[3]
    docs = [*DOCS[:4], *({**frozen, "timestamp_ms": frozen["timestamp_ms"] + 1000 * k}
                         for k in (1, 2, 3))]
    parsed = Parsed()
    out = rows(Sampler(SPECS, parsed=parsed), docs, parsed)
    after = [r for r in out if r["t"] > out[-1]["t"] - 3.0 + 1e-6]
    assert after and all(r["ios"] == 0 and r["lat_p99_ms"] is None for r in after)
    assert sum(r["ios"] for r in out) == sum(r["ios"] for r in rows(Sampler(SPECS), DOCS[:4]))


def test_an_interval_has_exactly_the_ios_of_the_buckets_that_moved():
    later, earlier = DOCS[-1]["jobs"][0], DOCS[1]["jobs"][0]
    now, before = counters(later, "read"), counters(earlier, "read")
    delta = now.since(before)
    whole = Histogram.from_fio(now.bins).minus(Histogram.from_fio(before.bins))
    assert delta.bins == whole.bins and delta.count == now.ios - before.ios > 0
    assert now.since(Cumulative()).bins == Histogram.from_fio(now.bins).bins  # a new base
    assert not now.since(now)  # nothing moved
