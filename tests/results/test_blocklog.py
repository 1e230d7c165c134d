"""The compact per-second store: blocks and tail read back exactly, after a clean end, a crash
between sealing and emptying the tail, a torn block, and for runs from before the store."""

from __future__ import annotations

import errno
import functools
import io
import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from assay.engine import Engine, RunOptions
from assay.metrics.summary import ComponentInfo, aggregate
from assay.plan import load
from assay.report.rundata import latency_curves
from assay.results import blockformat, blocklog
from assay.results.blocklog import BlockLog, read_rows, stored_bytes
from assay.results.blockread import merged_bins
from assay.results.record import RunRecord
from assay.results.rundir import RunDir, read_ndjson, read_record
from assay.runners import ReplayRunner

REPLAY = Path(__file__).parents[1] / "fixtures" / "replay"


def rows(seconds: int, comps: int = 3, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for t in range(1, seconds + 1):
        for c in range(comps):
            ios = rng.randrange(0, 900)
            bins = {str(rng.choice((1000, 1024, 2048, 5120, 73728, 1 << 30))): rng.randrange(1, 9)
                    for _ in range(rng.randrange(0, 6))}
            out.append({"t": t + rng.random() / 100, "dt": 1.003, "c": f"w.s{c}.read",
                        "ios": ios, "bytes": ios * 8192, "lat_sum_ns": ios * 812345.0,
                        "lat_max_ns": rng.choice((None, 5_000_000)),
                        "behind_s": 0.0, "bins": bins})
    return out


def write(path: Path, data: list[dict], block_s: float, comps: int = 3) -> BlockLog:
    log = BlockLog(path, "samples", block_s=block_s)
    for i in range(0, len(data), comps):
        log.append(data[i:i + comps])
    return log


def same(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k != "t"} == {k: v for k, v in b.items() if k != "t"} \
        and abs(a["t"] - b["t"]) < 1e-9 + 5e-4


def test_blocks_and_tail_read_back_every_row_exactly(tmp_path):
    data = rows(100)
    log = write(tmp_path, data, block_s=30)
    log.close()
    assert (tmp_path / "samples.blocks").stat().st_size > 0  # three sealed blocks
    back = list(read_rows(tmp_path, "samples"))
    assert len(back) == len(data)
    assert all(same(a, b) for a, b in zip(data, back, strict=True))
    # the tail holds only the seconds since the last block: bounded, whatever the run length
    tail = list(read_ndjson(tmp_path / "samples.ndjson"))
    assert 0 < len(tail) <= 31 * 3


def test_the_compact_encoding_is_far_smaller_than_ndjson(tmp_path):
    data = rows(600, comps=4)
    write(tmp_path, data, block_s=300, comps=4).close()
    plain = sum(len(json.dumps(r)) + 1 for r in data)
    assert stored_bytes(tmp_path, "samples") < plain / 2  # random data: real bins repeat


def test_a_crash_between_sealing_and_emptying_the_tail_counts_each_row_once(tmp_path):
    data = rows(40)
    log = write(tmp_path, data, block_s=1000)  # all in the tail
    tail = (tmp_path / "samples.ndjson").read_text()
    log.seal()  # a block with every row...
    log.close()
    (tmp_path / "samples.ndjson").write_text(tail)  # ...and the tail as before emptying it
    back = list(read_rows(tmp_path, "samples"))
    assert len(back) == len(data)


def test_a_torn_block_loses_nothing_the_tail_holds(tmp_path):
    data = rows(20)
    log = write(tmp_path, data[:30], block_s=5)  # a sealed block or two
    log.close()
    whole = (tmp_path / "samples.blocks").read_bytes()
    tail = (tmp_path / "samples.ndjson").read_text()
    # a crash while appending the next block: half of it written, the tail not yet emptied
    rest = data[30:]
    payload = blockformat.encode(rest)
    (tmp_path / "samples.blocks").write_bytes(whole + b"ASB1" + payload[: len(payload) // 2])
    (tmp_path / "samples.ndjson").write_text(
        tail + "".join(json.dumps(r) + "\n" for r in rest) + '{"t": 99, "c": "tor')
    back = list(read_rows(tmp_path, "samples"))
    assert len(back) == len(data)
    assert all(same(a, b) for a, b in zip(data, back, strict=True))
    # and the next seal cuts the torn block off before appending
    log = BlockLog(tmp_path, "samples", block_s=5)
    log._end = len(whole)
    log.seal()
    log.close()
    assert len(list(read_rows(tmp_path, "samples"))) == len(data)


def test_merged_bins_from_the_columns_equal_the_rows_merged(tmp_path):
    data = rows(90)
    write(tmp_path, data, block_s=20).close()
    merged = merged_bins(tmp_path, "samples", 10.0, 70.0)
    assert merged is not None
    info = ComponentInfo("w.s1.read")
    stats = aggregate(info, read_rows(tmp_path, "samples"), 10.0, 70.0)
    assert sum(merged["w.s1.read"].values()) == sum(
        sum(r["bins"].values()) for r in data if r["c"] == "w.s1.read" and 10 < r["t"] <= 70)
    assert stats.ios == sum(r["ios"] for r in data if r["c"] == "w.s1.read"
                            and 10 <= r["t"] - r["dt"] / 2 <= 70)


def test_an_older_run_reads_from_its_ndjson(tmp_path):
    data = rows(10)
    (tmp_path / "samples.ndjson").write_text("".join(json.dumps(r) + "\n" for r in data))
    assert list(read_rows(tmp_path, "samples")) == data
    assert merged_bins(tmp_path, "samples", 0, 100) is None  # readers fall back to the NDJSON


def test_a_run_graded_from_blocks_matches_its_own_series(tmp_path, monkeypatch):
    """The engine seals blocks as the run goes; the verdict, the series and the report read
    them back (a 2 s block: the recording's 10 seconds span several)."""
    monkeypatch.setattr(blocklog, "BLOCK_S", 2.0)
    plan = load(str(REPLAY / "scenario.yaml"))
    runner = functools.partial(ReplayRunner, REPLAY / "steady")
    out = Engine(plan, RunOptions(tmp_path / "r", runner=runner),
                 Console(file=io.StringIO())).execute()
    assert out.status == "passed", out.reason
    d = out.run_dir
    assert (d / "samples.blocks").stat().st_size and (d / "series.blocks").stat().st_size
    series = [r for r in read_rows(d, "series") if r["c"] == "db.data.read"]
    assert len(series) >= 9
    start, end = read_record(d).measured_window()
    ios = sum(r["ios"] for r in series if start <= r["t"] - r["dt"] / 2 <= end)
    assert out.stats["db.data.read"].ios == ios
    curves = latency_curves(d, read_record(d))["curves"]
    assert curves["db.data.read"][-1][0] == 100.0


def test_rows_of_one_second_split_by_a_seal_or_back_in_time_are_all_read(tmp_path):
    """A cluster's hosts append the same second one after the other, and a lagging host's
    rows come back in time: a seal between them must not hide the rows after it, and the
    tail still seals every block_s seconds."""
    data = [{"t": float(t), "host": h, "c": "w.read", "ios": 1, "bins": {"1024": 1}}
            for h in ("n1", "n2", "n3") for t in range(1, 21)]  # each host's 20 s in turn
    data += [{"t": float(t), "host": h, "c": "w.read", "ios": 1, "bins": {"1024": 1}}
             for t in range(21, 31) for h in ("n1", "n2", "n3")]  # then second by second
    log = BlockLog(tmp_path, "lags", block_s=2)
    for r in data:
        log.append([r])
    log.close()
    back = list(read_rows(tmp_path, "lags"))
    assert sorted(map(json.dumps, back)) == sorted(map(json.dumps, data))
    assert len(list(read_ndjson(tmp_path / "lags.ndjson"))) <= 3 * 3
    merged = merged_bins(tmp_path, "lags", 0, 100)
    assert merged == {"w.read": {1024: len(data)}}


def test_a_stream_opened_again_appends_after_its_blocks(tmp_path):
    data = rows(30)
    write(tmp_path, data[:45], block_s=5).close()
    write(tmp_path, data[45:], block_s=5).close()  # its first seal keeps the blocks before
    back = list(read_rows(tmp_path, "samples"))
    assert len(back) == len(data)
    assert all(same(a, b) for a, b in zip(data, back, strict=True))


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs filled to its last few KiB (root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (a tmpfs of known size)")
    mnt = tmp_path / "full"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        (mnt / "filler").write_bytes(b"\0" * (free - 8192))
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def big_record() -> RunRecord:
    record = read_record(Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture")
    record.reason = "x" * 200_000
    return record


def test_every_write_on_a_full_disk_names_its_file(full_disk: Path) -> None:
    """A write error says nothing of where it was: the run's reason names the file that could
    not grow, whichever write hit the full disk (a second's rows, a block sealed, run.json;
    a sealed block came without a name, and the run said only its directory)."""
    log = BlockLog(full_disk, "series", block_s=1e9)
    with pytest.raises(OSError) as e:
        log.append(rows(400))
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(log.tail)
    log.tail.unlink()
    (full_disk / "filler").unlink()  # room for the tail, then none for its block
    sealed = BlockLog(full_disk, "samples", block_s=1e9)
    sealed.append(rows(300))
    room = os.statvfs(full_disk).f_bavail * os.statvfs(full_disk).f_frsize
    (full_disk / "filler").write_bytes(b"\0" * (room - 512))
    with pytest.raises(OSError) as e:
        sealed.seal()
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(sealed.blocks)
    for write in (lambda d: d.write_json("plan.json", {"pad": "x" * 200_000}),
                  lambda d: d.write_record(big_record())):
        with pytest.raises(OSError) as e:
            write(RunDir(full_disk))
        assert e.value.errno == errno.ENOSPC and Path(e.value.filename).parent == full_disk
        assert Path(e.value.filename).name in ("plan.json", "run.json")
    assert not [p.name for p in full_disk.iterdir() if p.name.endswith(".tmp")]
