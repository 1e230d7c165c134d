"""ReplayRunner: recorded fio output played back with the recording's own clock."""

from __future__ import annotations

from pathlib import Path

from assay.runners import ReplayRunner

REPLAY = Path(__file__).parents[1] / "fixtures" / "replay"


def test_plays_the_dumps_in_order_with_the_recordings_clock(tmp_path):
    runner = ReplayRunner(REPLAY / "steady", "local", tmp_path)
    fio = runner.start("run.fio", {})
    stamps = []
    for doc in fio.documents():
        assert doc is not None
        stamps.append(doc["timestamp_ms"] / 1000)
        assert runner.clock() == stamps[-1]  # time is the recording's
    assert stamps == sorted(stamps) and len(stamps) >= 8
    assert fio.started < stamps[0]
    assert fio.wait() == 0
    recorded = (REPLAY / "steady" / "run.out.json").read_text()
    assert (tmp_path / "run.out.json").read_text() == recorded
    assert {p.name for p in runner.fetch_logs()} == \
        {p.name for p in (REPLAY / "steady").glob("*_lat.*.log")}


def test_a_dead_fio_keeps_its_exit_status_and_stderr(tmp_path):
    fio = ReplayRunner(REPLAY / "died", "local", tmp_path).start("run.fio", {})
    assert list(fio.documents())
    assert fio.wait() == -9
    fio = ReplayRunner(REPLAY / "enospc", "local", tmp_path).start("run.fio", {})
    list(fio.documents())
    assert fio.wait() != 0 and "No space left on device" in fio.stderr_tail()


def test_stop_ends_the_stream(tmp_path):
    fio = ReplayRunner(REPLAY / "steady", "local", tmp_path).start("run.fio", {})
    first = next(iter(fio.documents()))
    fio.stop()
    assert first is not None and list(fio.documents()) == [] and fio.wait() == 0


def test_a_job_the_recording_lacks_plays_as_an_empty_success(tmp_path):
    runner = ReplayRunner(REPLAY / "steady", "local", tmp_path)
    fio = runner.start("prefill.fio", {}, sections=["prefill.x"])
    assert list(fio.documents()) == [] and fio.wait() == 0
    assert runner.started == ["prefill.fio"]
