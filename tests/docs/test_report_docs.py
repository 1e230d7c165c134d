"""The commands shown in docs/reports.md run as written, on recorded runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from assay.results.catalogue import Catalogue
from tests.conftest import assay_in_process

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "reports.md"
RUN = ROOT / "tests" / "fixtures" / "runs" / "exchange-fixture"
COMMANDS = [line[2:] for block in re.findall(r"```console\n(.*?)```", DOC.read_text(), re.S)
            for line in block.splitlines() if line.startswith("$ assay ")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """./results with the recorded run and a later one on btrfs (so `last` is that one)."""
    cwd = tmp_path_factory.mktemp("docs")
    results = cwd / "results"
    a = results / "20261122-110408_exchange-fixture_cd29a8"
    b = results / "20261122-120000_exchange-fixture_b7e5a1"
    shutil.copytree(RUN, a)
    shutil.copytree(RUN, b)
    run = json.loads((b / "run.json").read_text())
    run.update(id=b.name, started=run["started"] + 3600)
    run["target"].update(fstype="btrfs", mount_options="rw,relatime,compress=zstd:3")
    (b / "run.json").write_text(json.dumps(run))
    for d in (a, b):
        Catalogue(results).record(d)
    return cwd


def test_the_page_has_examples() -> None:
    assert len(COMMANDS) >= 6


@pytest.mark.parametrize("command", COMMANDS)
def test_documented_command_runs(command: str, workdir: Path) -> None:
    args = shlex.split(command)[1:]
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_RESULTS"}
    res = assay_in_process(*args, cwd=workdir, env=env)  # read-only verbs: no start-up each
    assert res.returncode == 0, res.stderr
    if "-o" in args:
        out = workdir / args[args.index("-o") + 1]
        assert out.stat().st_size > 0
    if args[0] == "compare":
        assert "target.fstype" in res.stdout and "btrfs" in res.stdout
    if "junit" in args and "-o" not in args:
        assert res.stdout.startswith("<?xml") and "<failure" in res.stdout
