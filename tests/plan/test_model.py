"""The job files' variables: any target path reaches fio exactly, through ${ASSAY_TARGET}."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.plan.model import variables
from tests.conftest import needs_fio

NASTY = ["co:lon", ":leading", "trailing:", "a::b", "semi;colon", "hash#tag", "back\\slash",
         "back\\:colon", "qu'ote", 'dq"uote', "sp ace", "eq=uals", "dollar$x", "brace{x}",
         "ünï ☃", "[section]", "*?"]

JOB = """\
[j]
ioengine=psync
directory=${ASSAY_TARGET}
direct=${ASSAY_DIRECT}
filename=f.dat
size=4096
rw=write
create_only=1
"""


@needs_fio
@pytest.mark.parametrize("name", NASTY)
def test_fio_opens_exactly_the_target_directory(tmp_path, name):
    """`--parse-only` accepts the job file, and a real fio run creates its file in the very
    directory asked for, however its name reads in a job file."""
    target = tmp_path / name
    target.mkdir()
    job = tmp_path / "job.fio"
    job.write_text(JOB)
    env = {**os.environ, **variables(target, direct=False)}
    check = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True,
                           timeout=30, env=env)
    assert check.returncode == 0, check.stderr
    run = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                         text=True, timeout=30, env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout[run.stdout.index("{"):])["jobs"]
    assert [p.name for p in target.iterdir()] == ["f.dat"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["job.fio", name])


@needs_fio
def test_an_unescaped_colon_is_what_breaks_fio(tmp_path):
    """Why `:` is escaped: the raw path is split into two directories that do not exist."""
    target = tmp_path / "a:b"
    target.mkdir()
    job = Path(tmp_path / "raw.fio")
    job.write_text(JOB)
    env = {**os.environ, "ASSAY_TARGET": str(target), "ASSAY_DIRECT": "0"}
    run = subprocess.run(["fio", str(job)], capture_output=True, text=True, timeout=30, env=env)
    assert run.returncode != 0 and "is not a directory" in run.stderr


@pytest.mark.parametrize("name", ["new\nline", "tab\tx", "x${HOME}", "n$ncpus", "p$pagesize"])
def test_a_path_fio_would_read_as_something_else_is_refused(tmp_path, name):
    with pytest.raises(UserError, match="fio cannot use the target path"):
        variables(tmp_path / name, direct=True)


def test_direct_is_one_or_zero(tmp_path):
    assert variables(tmp_path, True)["ASSAY_DIRECT"] == "1"
    assert variables(tmp_path, False)["ASSAY_DIRECT"] == "0"
