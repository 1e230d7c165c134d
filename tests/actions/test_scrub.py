"""`scrub`: a real btrfs scrub in the foreground; refused where the platform has none."""

from __future__ import annotations

import re

import pytest

from assay.actions import scrub
from assay.platforms.fsbase import ActionFailed
from tests.actions.support import context, fs_platform
from tests.realfs import Machine


def test_requires_scrub() -> None:
    assert scrub.requires(scrub.Params()) == {"scrub"}


def test_btrfs_scrub_reads_everything_and_reports_it(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    (fs.directory / "db.dat").write_bytes(b"s" * (4 << 20))
    p = scrub.Params()
    ctx = context(fs, p)
    out = scrub.run(p, ctx)
    assert re.search(r"Status:\s+finished", out), out
    assert "no errors found" in out
    assert fs.busy(ctx, "scrub") is False  # -B: it has ended when the step does


def test_btrfs_scrub_on_an_unmounted_filesystem_fails(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    fs.mount["mountpoint"] = str(fs.directory / "not-a-mount")
    p = scrub.Params()
    with pytest.raises(ActionFailed, match="exited with status"):
        scrub.run(p, context(fs, p))


def test_xfs_refuses(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs")
    p = scrub.Params()
    with pytest.raises(ActionFailed, match="platform xfs cannot scrub"):
        scrub.run(p, context(fs, p))
