import json

from assay.fio.jsonstream import JsonStream, split_documents
from tests.conftest import FIXTURES

RAW = (FIXTURES / "fio" / "status-interval-jsonplus.json").read_text()


def test_concatenated_status_documents_are_all_found():
    docs = list(split_documents(RAW))
    assert len(docs) == RAW.count('"fio version"')
    assert all("jobs" in d for d in docs)
    # cumulative: each dump has at least the IOs of the one before
    ns = [d["jobs"][0]["read"]["lat_ns"]["N"] for d in docs]
    assert ns == sorted(ns)


def test_noise_lines_between_and_inside_documents_cost_nothing_else():
    cut = RAW.index("\n", len(RAW) // 3) + 1
    noisy = "fio: this platform does not support process shared mutexes\n" + RAW[:cut] + \
        "fio: pid=123, got signal=2\n" + RAW[cut:] + "<host> trailing banner\n"
    stream = JsonStream()
    docs = stream.feed(noisy) + stream.close()
    assert len(docs) == RAW.count('"fio version"')
    assert any("pid=123" in n for n in stream.noise)


def test_fed_in_small_chunks_like_a_pipe():
    stream = JsonStream()
    docs = []
    for i in range(0, len(RAW), 333):
        docs += stream.feed(RAW[i:i + 333])
    docs += stream.close()
    assert [d["timestamp_ms"] for d in docs] == [d["timestamp_ms"] for d in split_documents(RAW)]


def test_a_truncated_last_document_is_dropped_not_fatal():
    docs = list(split_documents(RAW[: len(RAW) - 200]))
    assert len(docs) == RAW.count('"fio version"') - 1
    json.dumps(docs)


def test_only_a_top_level_brace_line_opens_or_closes_a_document():
    doc = '{\n  "a" : {\n    "b" : 1\n  }\n  ,"c" : {"d": 2\n  }\n}\n'
    stream = JsonStream()
    # indented braces are inside; a brace with text after it is noise, not a boundary
    docs = stream.feed("{ not json\n} neither\n" + doc + "}\t \n") + stream.close()
    assert docs == [{"a": {"b": 1}, "c": {"d": 2}}]
    assert stream.noise[:2] == ["{ not json", "} neither"]
    assert "}" in stream.noise  # the brace line after the document closed


def test_a_noise_line_inside_a_dump_of_many_lines_costs_one_pass():
    import time

    bins = ",\n".join(f'      "{i}" : {i}' for i in range(40_000))  # a json+ dump's size
    text = '{\n  "bins" : {\n' + bins + "\n  }\n}\n"
    cut = text.index('"20000"')
    noisy = text[:cut] + "fio: a warning printed mid-dump\n" + text[cut:]
    stream = JsonStream()
    t = time.process_time()
    docs = stream.feed(noisy) + stream.close()
    assert time.process_time() - t < 3  # a comparison of every line with every kept one: minutes
    assert len(docs[0]["bins"]) == 40_000
    assert stream.noise == ["fio: a warning printed mid-dump"]
