"""Stored runs read back by show, runs, report, export and compare when what is stored is
hostile: escape sequences in names, damaged per-second data (issue 21, items 5, 9, 13, 14).
One real run (real fio, 2 s blocks so that it seals several) is copied for each test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.results.blocklog import read_rows
from tests.cli.test_run import SMALL
from tests.conftest import assay_in_process, needs_fio

pytestmark = needs_fio

# assay itself, sealing a block every 2 s, as a long run seals one every 60 s
SEALING = "import sys; import assay.results.blocklog as b; b.BLOCK_S = 2.0; " \
          "from assay.cli import main; sys.argv[0] = 'assay'; main()"
ESC = "evil\x1b[2J\x1b]0;pwned\x07[red]x"


def assay(*args: str, results: Path) -> subprocess.CompletedProcess[str]:
    """A verb reading stored runs, in this process (nothing is signalled: no start-up each);
    the run they read is a real `assay run` (the `stored` fixture)."""
    env = {**os.environ, "ASSAY_RESULTS": str(results), "NO_COLOR": "1"}
    return assay_in_process(*args, env=env)


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A results directory holding one passed run of 12 measured seconds."""
    root = tmp_path_factory.mktemp("stored")
    scenario = root / "s.yaml"
    scenario.write_text(SMALL.replace("duration: 3s", "duration: 12s"))
    env = {**os.environ, "ASSAY_RESULTS": str(root / "results")}
    r = subprocess.run([sys.executable, "-c", SEALING, "run", str(scenario)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    return root / "results"


@pytest.fixture
def results(stored, tmp_path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(stored, copy)
    (copy / "catalogue.sqlite").unlink(missing_ok=True)
    return copy


def run_dir(results: Path) -> Path:
    return next(p for p in results.iterdir() if (p / "run.json").exists())


def edit_record(path: Path, **changes) -> None:
    record = json.loads((path / "run.json").read_text())
    for dotted, value in changes.items():
        node = record
        *parents, last = dotted.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    (path / "run.json").write_text(json.dumps(record))


# -- 9. escape sequences in stored names -----------------------------------------------------

def test_show_and_runs_escape_control_characters_of_a_stored_run(results):
    d = run_dir(results)
    edit_record(d, scenario__name=ESC, target__path="/srv/a\x1b[31mb")
    for args in (("show", d.name), ("runs",), ("show", "--json", d.name)):
        r = assay(*args, results=results)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        assert "\x1b" not in out and "\x07" not in out, (args, out[:500])
    shown = assay("show", d.name, results=results).stdout
    assert "evil\\x1b[2J\\x1b]0;pwned\\x07[red]x" in shown  # visible, markup not applied
    listed = assay("runs", results=results).stdout
    assert "evil\\x1b[2J" in listed


# -- 5. damaged per-second data ---------------------------------------------------------------

VERBS = (("show",), ("report",), ("export", "--format", "csv"), ("compare",))


def verbs(d: Path, results: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    out = {}
    for verb in VERBS:
        extra = (str(d),) if verb[0] == "compare" else ()
        out[verb[0]] = assay(*verb, str(d), *extra, results=results)
    return out


def as_plain_ndjson(d: Path) -> None:
    """The run as a run from before the compact store keeps it: every row in <stream>.ndjson
    (the tail of a run that ends right after a seal is empty)."""
    for blocks in d.glob("*.blocks"):
        rows = list(read_rows(d, blocks.stem))
        (d / f"{blocks.stem}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
        blocks.unlink()


def csv_rows(text: str) -> int:
    return len([line for line in text.splitlines() if line.strip()]) - 1


def test_an_undamaged_run_reads_back_with_exit_0(results):
    for verb, r in verbs(run_dir(results), results).items():
        assert r.returncode == 0, (verb, r.stderr)
        assert "lost" not in r.stderr


def test_blocks_cut_in_half_say_how_many_seconds_were_lost_and_where(results):
    d = run_dir(results)
    whole = csv_rows(assay("export", "--format", "csv", str(d), results=results).stdout)
    assert len(list(d.glob("*.blocks"))) >= 3
    for blocks in d.glob("*.blocks"):
        blocks.write_bytes(blocks.read_bytes()[: blocks.stat().st_size // 2])
    for verb, r in verbs(d, results).items():
        assert r.returncode == 2, (verb, r.stdout[-300:], r.stderr)
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr
        line = next(ln for ln in r.stderr.splitlines() if "series.blocks:" in ln)
        # "series.blocks: 5s lost (after 6.6s until 12.9s): ... unreadable"
        lost = float(line.split("series.blocks: ")[1].split("s lost")[0])
        first = float(line.split("(after ")[1].split("s")[0])
        assert 2 <= lost <= 11 and 1 <= first <= 9, line
        assert "samples.blocks:" in r.stderr
    rest = assay("export", "--format", "csv", str(d), results=results)
    assert 0 < csv_rows(rest.stdout) < whole  # the rest is still given


def test_a_truncated_samples_tail_is_warned_about(results):
    d = run_dir(results)
    as_plain_ndjson(d)
    assert assay("show", str(d), results=results).returncode == 0
    tail = d / "samples.ndjson"
    assert tail.stat().st_size > 1000
    tail.write_bytes(tail.read_bytes()[: tail.stat().st_size // 2 + 7])
    r = assay("show", str(d), results=results)
    assert r.returncode == 2
    assert "samples.ndjson:" in r.stderr and "its last line is cut short" in r.stderr


def test_binary_garbage_in_samples_and_series_is_damage_not_a_crash(results):
    d = run_dir(results)
    as_plain_ndjson(d)
    for name in ("samples", "series"):
        tail = d / f"{name}.ndjson"
        data = tail.read_bytes()
        cut = data.index(b"\n", len(data) // 3) + 1
        garbage = bytes(range(256)) * 3 + b'\n[1, 2]\n{"t": "x"}\n{"t": 1e999}\n' \
            b'{"t": 5.5, "c": "db.data.read", "bins": {"x": "y"}}\n'
        tail.write_bytes(data[:cut] + garbage + data[cut:])
    for verb, r in verbs(d, results).items():
        assert r.returncode == 2, (verb, r.stderr[-2000:])
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr
        assert "samples.ndjson:" in r.stderr and "unreadable lines" in r.stderr


# -- 13, 14: which run, and where ---------------------------------------------------------------

def test_an_ambiguous_run_reference_lists_the_candidates(results):
    d = run_dir(results)
    twin = results / (d.name[:9] + "000000_other_abcdef")  # the same day, another run
    shutil.copytree(d, twin)
    prefix = d.name[:4]  # the year: both runs
    for verb in ("show", "report", "export"):
        r = assay(verb, prefix, results=results)
        assert r.returncode == 2, (verb, r.stdout[-300:])
        assert f"'{prefix}' is ambiguous: 2 runs match" in r.stderr
        assert d.name in r.stderr and twin.name in r.stderr
        assert "no run" not in r.stderr
    assert assay("show", d.name[:-2], results=results).returncode == 0  # unique: found
    r = assay("show", "nope", results=results)
    assert r.returncode == 2 and "no run 'nope'" in r.stderr


def test_results_that_is_a_regular_file_is_not_a_directory(tmp_path):
    file = tmp_path / "results"
    file.write_text("not a directory\n")
    for args in (("runs",), ("show", "last"), ("runs", "--json")):
        r = assay(*args, results=file)
        assert r.returncode == 2, (args, r.stdout)
        assert f"ASSAY_RESULTS: {file} is not a directory" in r.stderr
        assert "no runs in" not in r.stdout + r.stderr
    assert file.read_text() == "not a directory\n"


# -- 15. plan shows every job file a run stores -----------------------------------------------

def test_plan_shows_the_prefill_job_file_the_run_stored(stored):
    (host,) = stored.glob("*/hosts/local")
    prefill = (host / "prefill.fio").read_text()
    assert "[prefill." in prefill
    r = assay("plan", str(stored.parent / "s.yaml"), results=stored)
    assert r.returncode == 0, r.stderr
    assert "fio job file: hosts/local/prefill.fio" in r.stdout
    shown = r.stdout.split("fio job file: hosts/local/prefill.fio", 1)[1].splitlines()
    assert all(line in shown for line in prefill.splitlines() if line)
    only = assay("plan", str(stored.parent / "s.yaml"), "--fio", results=stored).stdout
    assert only == (host / "run.fio").read_text()  # --fio: run.fio alone, byte for byte
