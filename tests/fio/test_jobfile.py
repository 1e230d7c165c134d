"""Job files say what fio will do: numbers in plain notation, paths fio reads back exactly."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.exitcodes import ExitCode
from assay.fio.jobfile import FioJob, FioPathError, fio_path, fio_seconds, plain_number, render

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
    job.write_text(render({"ioengine": "psync", "directory": fio_path(str(tmp_path)),
                           "time_based": True, "runtime": f"{12 * 86400.0:g}s"},
                          [FioJob("j", {"filename": "f", "size": 65536, "rw": "read"})]))
    proc = subprocess.Popen(["fio", "--output-format=json", str(job)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)
    finally:
        proc.kill()
        proc.wait()


# -- fio_path ---------------------------------------------------------------------------------

def test_colons_are_escaped_as_fio_documents():
    assert fio_path("/mnt/a:b") == "/mnt/a\\:b"
    assert fio_path("/plain/path") == "/plain/path"


@pytest.mark.parametrize("path", ["/a;b", "/a#b", "/a\nb", " /lead", "/trail ", "/x${HOME}",
                                  "/x${}", "/x/$ncpus", "/m/$pagesize", "-", "", "/" + "x" * 5000])
def test_paths_fio_cannot_represent_are_refused_clearly(path):
    with pytest.raises(FioPathError, match="fio cannot use the path") as e:
        fio_path(path)
    assert e.value.code == ExitCode.INVALID_INPUT


NASTY = ["co:lon", ":leading", "trailing:", "a::b", "back\\slash", "back\\:colon", "qu'ote",
         'dq"uote', "sp ace", "eq=uals", "dollar$x", "brace{x}", "ünï ☃", "[section]", "*?"]


@needs_fio
@pytest.mark.parametrize("name", NASTY)
def test_fio_opens_exactly_the_escaped_path(tmp_path, name):
    """`--parse-only` accepts the job file, and a real fio run creates its file in the very
    directory (and with the very file name) we asked for."""
    target = tmp_path / name
    target.mkdir()
    job = tmp_path / "job.fio"
    job.write_text(render({"ioengine": "psync", "directory": fio_path(str(target))},
                          [FioJob("j", {"filename": fio_path(name + ".dat"), "size": 4096,
                                        "rw": "write", "create_only": 1})]))
    check = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True,
                           timeout=30)
    assert check.returncode == 0, check.stderr
    run = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                         text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout[run.stdout.index("{"):])["jobs"]
    assert [p.name for p in target.iterdir()] == [name + ".dat"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["job.fio", name])


@needs_fio
def test_unescaped_colon_is_what_breaks_fio(tmp_path):
    """Why fio_path exists: the raw path is split into two directories that do not exist."""
    target = tmp_path / "a:b"
    target.mkdir()
    job = Path(tmp_path / "raw.fio")
    job.write_text(f"[j]\nioengine=psync\ndirectory={target}\nfilename=f\nsize=4096\n"
                   "rw=write\ncreate_only=1\n")
    run = subprocess.run(["fio", str(job)], capture_output=True, text=True, timeout=30)
    assert run.returncode != 0 and "is not a directory" in run.stderr
