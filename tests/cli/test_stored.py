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

from tests.cli.test_run import SMALL
from tests.conftest import needs_fio

pytestmark = needs_fio

# assay itself, sealing a block every 2 s, as a long run seals one every 60 s
SEALING = "import sys; import assay.results.blocklog as b; b.BLOCK_S = 2.0; " \
          "from assay.cli import main; sys.argv[0] = 'assay'; main()"
ESC = "evil\x1b[2J\x1b]0;pwned\x07[red]x"


def assay(*args: str, results: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_RESULTS": str(results), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, env=env, timeout=180)


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
    edit_record(d, scenario__name=ESC, target__path="/tmp/a\x1b[31mb")
    for args in (("show", d.name), ("runs",), ("show", "--json", d.name)):
        r = assay(*args, results=results)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        assert "\x1b" not in out and "\x07" not in out, (args, out[:500])
    shown = assay("show", d.name, results=results).stdout
    assert "evil\\x1b[2J\\x1b]0;pwned\\x07[red]x" in shown  # visible, markup not applied
    listed = assay("runs", results=results).stdout
    assert "evil\\x1b[2J" in listed
