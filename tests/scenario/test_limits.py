"""Limits on what a scenario may ask for: refused at once with file:line, never misread."""

import json
import subprocess
import time
import tracemalloc

import pytest

from assay.scenario.units import UnitError, parse_duration, parse_size
from assay.scenario.yamlsource import MAX_BYTES, ScenarioInvalid, load_yaml
from tests.conftest import assay_in_process

BASE = """\
name: limits
workloads:
  mail: {{kind: exchange, mailboxes: 10, databases: 1{extra}}}
timeline:
  duration: {duration}
"""


def assay(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): nothing here is signalled, no start-up per call
    return assay_in_process(*args, cwd=cwd)


def scenario(tmp_path, text: str, name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- 1. durations: plain notation in job files, 30 days at most ---------------------------------

def test_twelve_days_is_twelve_days_in_the_job_file(tmp_path):
    r = assay("plan", scenario(tmp_path, BASE.format(extra="", duration="1m")),
              "--duration", "12d", "--json", "--no-check")
    assert r.returncode == 0, r.stderr
    jobfile = json.loads(r.stdout)["jobfile"]
    assert "runtime=1036800s" in jobfile  # 12 d and no warm-up
    assert "e+" not in jobfile


@pytest.mark.parametrize("flag,value", [("--duration", "31d"), ("--warmup", "100000000d"),
                                        ("--duration", "0.5s"), ("--duration", "1e9")])
def test_out_of_range_durations_on_the_command_line_are_refused(tmp_path, flag, value):
    r = assay("run", scenario(tmp_path, BASE.format(extra="", duration="1m")), flag, value,
              "--results", str(tmp_path / "results"))
    assert r.returncode == 2, r.stderr
    assert f"error: {flag}:" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "results").exists()  # refused before any IO


@pytest.mark.parametrize("duration,message", [
    ("31d", "at most 30d"), ("0.5s", "at least 1s"), (".nan", "expected a duration"),
    (".inf", "expected a duration"), ("1" + "0" * 400, "at most 30d")])
def test_timeline_durations_are_bounded(tmp_path, duration, message):
    r = assay("plan", scenario(tmp_path, BASE.format(extra="", duration=duration)), "--no-check")
    assert r.returncode == 2
    assert "s.yaml:5: timeline.duration:" in r.stderr and message in r.stderr


def test_thirty_days_is_the_limit():
    assert parse_duration("30d") == 30 * 86400
    with pytest.raises(UnitError, match="at most 30d"):
        parse_duration("30d1s")


# -- 2. file size and YAML alias expansion --------------------------------------------------

def billion_laughs() -> str:
    text = 'name: lol\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        text += f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    return text


def test_billion_laughs_is_refused_quickly_in_bounded_memory():
    tracemalloc.start()
    start = time.monotonic()
    with pytest.raises(ScenarioInvalid) as e:
        load_yaml(billion_laughs(), "lol.yaml")
    elapsed, peak = time.monotonic() - start, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 2 and peak < 20e6
    assert str(e.value).startswith("lol.yaml:") and "aliases" in str(e.value)


def test_billion_laughs_on_the_command_line_exits_2(tmp_path):
    start = time.monotonic()
    r = assay("plan", scenario(tmp_path, billion_laughs(), "lol.yaml"), "--no-check")
    assert r.returncode == 2 and time.monotonic() - start < 30
    assert "lol.yaml:" in r.stderr and "Traceback" not in r.stderr


def test_a_50_megabyte_scenario_is_refused(tmp_path):
    path = tmp_path / "big.yaml"
    with open(path, "w") as fh:
        fh.write(BASE.format(extra="", duration="1m"))
        fh.write("description: '" + "x" * (50 << 20) + "'\n")
    start = time.monotonic()
    r = assay("plan", str(path), "--no-check")
    assert r.returncode == 2 and time.monotonic() - start < 30
    assert "big.yaml:1:" in r.stderr and "at most 1,048,576" in r.stderr


@pytest.mark.parametrize("text,message", [
    ("a: &a [1, *a]\n", "refers to a value that contains it"),
    ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "levels deep"),
    ("a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 100)),
     "levels deep (through aliases)"),
    ("".join(f"k{i}: {i}\n" for i in range(30_000)), "more than 20,000 values"),
    ("name: !!python/object:os.system x\n", "cannot read this value"),
    ("a: !!int nope\n", "cannot read this value"),
    ("a: " + "9" * 5000 + "\n", "cannot read this value"),
    ("? [1, 2]\n: 3\n", "mapping keys must be plain values"),
])
def test_hostile_yaml_is_a_located_error(text, message):
    start = time.monotonic()
    with pytest.raises(ScenarioInvalid) as e:
        load_yaml(text, "h.yaml")
    assert time.monotonic() - start < 5
    assert str(e.value).startswith("h.yaml") and message in str(e.value)


def test_size_limit_is_one_mebibyte():
    assert MAX_BYTES == 1 << 20
    load_yaml("a: '" + "x" * (MAX_BYTES - 20) + "'\n", "ok.yaml")


# -- 3. dataset: more than zero, at most 1 PiB ----------------------------------------------

@pytest.mark.parametrize("dataset,message", [("0", "must be more than 0"),
                                             ("100PiB", "more than the 1PiB limit"),
                                             ("-1", "cannot be negative")])
def test_dataset_is_bounded(tmp_path, dataset, message):
    extra = f", dataset: {dataset}"
    r = assay("plan", scenario(tmp_path, BASE.format(extra=extra, duration="1m")), "--no-check")
    assert r.returncode == 2
    assert "s.yaml:3: workloads.mail.dataset:" in r.stderr and message in r.stderr


def test_dataset_zero_through_set_is_refused_too(tmp_path):
    r = assay("run", scenario(tmp_path, BASE.format(extra="", duration="1m")),
              "--set", "mail.dataset=0", "--results", str(tmp_path / "results"))
    assert r.returncode == 2 and "must be more than 0" in r.stderr
    assert not (tmp_path / "results").exists()


# -- 4. "8 GB" is 8·10⁹ bytes, never 8 GiB --------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("8 GB", 8 * 10**9), ("8GB", 8 * 10**9), ("8gb", 8 * 10**9), ("64kB", 64_000),
    ("3.84TB", 3_840_000_000_000), ("8 GiB", 8 << 30), ("8g", 8 << 30), ("8 G", 8 << 30),
    ("1PB", 10**15),
])
def test_si_units_are_decimal_iec_and_bare_prefixes_binary(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["8 Gi", "8 gigabytes", "8 GB B", "8e9", "1e400"])
def test_ambiguous_sizes_are_refused(bad):
    with pytest.raises(UnitError, match="expected a size"):
        parse_size(bad)


def test_8_gb_dataset_plans_8e9_bytes(tmp_path):
    text = "name: si\nworkloads:\n  c: {kind: micro, dataset: 8 GB}\n"
    r = assay("plan", scenario(tmp_path, text), "--json", "--no-check")
    assert r.returncode == 0, r.stderr
    planned = json.loads(r.stdout)["dataset_bytes"]
    assert 8 * 10**9 - (6 << 20) <= planned <= 8 * 10**9  # 6 files of whole MiB
