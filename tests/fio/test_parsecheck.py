"""fio's check of many job files (fio/parsecheck.py) on the real fio: each distinct text once,
many files to one fio, several fios at once; a refused file named on its own, and each file
read as if alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from assay.fio import parsecheck
from assay.fio.parsecheck import check_texts
from tests.conftest import needs_fio
from tests.fio.logged import logged_fio, started

pytestmark = needs_fio

GOOD = "[global]\nioengine=null\nsize=4k\n[{name}]\nrw=read\n"
BAD = "[x]\nioengine=null\nsize=4k\nrw=sideways\n"
SAVES = "[global]\nioengine=null\nsize=4k\n[save]\nrw=write\n[restore]\nrw=read\nwait_for=save\n"


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return logged_fio(tmp_path, monkeypatch)


def test_each_distinct_text_is_checked_once_many_to_one_fio(calls: Path) -> None:
    texts = [GOOD.format(name=f"j{i % 40}") for i in range(200)]  # 40 distinct texts
    assert check_texts(texts, ["run.fio"] * 200, {}, pool=2) == [None] * 200
    runs = started(calls)
    files = [f for run in runs for f in run]
    assert len(files) == len(set(files)) == 40
    assert len(runs) == 2  # one fio per worker: the files split between them


def test_a_refused_file_is_named_among_those_fio_accepts(calls: Path) -> None:
    texts = [GOOD.format(name=f"j{i}") for i in range(10)]
    texts[6] = BAD
    got = check_texts(texts, [f"h{i}/run.fio" for i in range(10)], {}, pool=2)
    assert [i for i, c in enumerate(got) if c] == [6]
    assert "sideways" in str(got[6])
    # the refused batch was checked again file by file: each complaint is its own file's
    assert sum(1 for run in started(calls) if len(run) == 1) == 5


def test_files_of_one_fio_are_each_read_as_if_alone(calls: Path) -> None:
    # the same job names in every host's file, one waiting for another: fio adds no job when
    # it only parses, so it looks for no waitee across files
    texts = [SAVES + "\n" * i for i in range(3)]
    assert check_texts(texts, ["a", "b", "c"], {}, pool=1) == [None, None, None]
    assert len(started(calls)) == 1


def test_several_fios_check_at_once(calls: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIO_SLEEP", "1")
    texts = [GOOD.format(name=f"j{i}") for i in range(4)]
    t0 = time.monotonic()
    assert check_texts(texts, ["run.fio"] * 4, {}, pool=2) == [None] * 4
    spans = [tuple(map(float, ln.split()[:2])) for ln in calls.read_text().splitlines()]
    assert len(spans) == 2
    (a0, a1), (b0, b1) = spans
    assert a0 < b1 and b0 < a1, spans  # they overlapped: not one after the other
    assert time.monotonic() - t0 < 60


def test_the_pool_is_the_cores_this_process_may_use() -> None:
    assert parsecheck.workers() == len(os.sched_getaffinity(0))
