"""Job files say what fio will do: numbers in plain notation, paths fio reads back exactly."""

import shutil
import subprocess

import pytest

from assay.fio.jobfile import FioJob, fio_seconds, plain_number, render

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def test_long_runtimes_are_written_in_plain_notation():
    twelve_days = 12 * 86400.0
    text = render({"runtime": f"{twelve_days:g}s", "time_based": True},
                  [FioJob("j", {"runtime": twelve_days, "startdelay": f"{1e6:g}s"})])
    assert "runtime=1036800s" in text
    assert "startdelay=1000000s" in text
    assert "e+" not in text


@pytest.mark.parametrize("value,expected", [
    ("1.5s", "1500ms"), ("0.0005s", "500us"), ("2.5e-07s", "1us"), ("90s", "90s"),
    (1.5, "1500ms"), ("1.2e+06ms", "1200s"), (0, "0"), (60, "60"),
])
def test_times_never_carry_a_fraction_fio_would_drop(value, expected):
    assert f"runtime={expected}\n" in render({"runtime": value}, [])


def test_other_numbers_are_plain_too():
    text = render({}, [FioJob("j", {"random_distribution": f"zipf:{1e-05:g}", "rate_iops": 1e20,
                                    "filename": "db.1e5.dat", "bs": "4k"})])
    assert "random_distribution=zipf:0.00001" in text
    assert "rate_iops=100000000000000000000" in text
    assert "filename=db.1e5.dat" in text  # paths are not numbers
    assert plain_number(1.03681e+06) == "1036810" and plain_number(2.5e-7) == "0.00000025"
    assert fio_seconds(30 * 86400) == "2592000s"


@pytest.mark.parametrize("value", ["a;b", "a#b", "a\nb", "a\tb"])
def test_a_value_fio_would_cut_short_is_refused(value):
    with pytest.raises(ValueError, match="fio"):
        render({"description": value}, [])


@needs_fio
def test_fio_runs_a_twelve_day_runtime_for_twelve_days(tmp_path):
    """The bug itself: `%g` made 12 days into `1.03681e+06s`, which fio reads as one second
    (and `--parse-only` accepts). Run it for real: after 3 s it must still be running."""
    job = tmp_path / "long.fio"
    job.write_text(render({"ioengine": "psync", "directory": str(tmp_path),
                           "time_based": True, "runtime": f"{12 * 86400.0:g}s"},
                          [FioJob("j", {"filename": "f", "size": 65536, "rw": "read"})]))
    proc = subprocess.Popen(["fio", "--output-format=json", str(job)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)
    finally:  # fio's job process is in a session of its own: end it before fio
        subprocess.run(["pkill", "-KILL", "-P", str(proc.pid)], check=False)
        proc.kill()
        proc.wait()
