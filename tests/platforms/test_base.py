"""The base platform: a plain directory (given or temporary), O_DIRECT probing (the run-wide
device caps are each host's blkio group's: tests/participants/test_blkio.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.platforms.base import Platform, supports_direct_io
from assay.scenario.models import Target
from tests.realfs import Machine


def test_prepare_uses_and_creates_the_given_directory(tmp_path: Path) -> None:
    plat = Platform(Target(path=str(tmp_path / "data")))
    assert plat.prepare() == tmp_path / "data" and (tmp_path / "data").is_dir()
    assert plat.directory == tmp_path / "data" and plat.temporary is False
    (tmp_path / "data" / "keep").write_text("x")
    assert Platform(Target(path=str(tmp_path / "data"))).prepare() == tmp_path / "data"
    assert (tmp_path / "data" / "keep").read_text() == "x"  # an existing one is left as is


def test_refuses_a_path_whose_parent_is_missing(tmp_path: Path) -> None:
    typo = tmp_path / "mnt" / "pol" / "assay"
    with pytest.raises(UserError, match=r"does not exist, nor does .*pol.*create it first"):
        Platform(Target(path=str(typo))).prepare()
    assert not (tmp_path / "mnt").exists()


def test_refuses_a_path_it_cannot_create(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="cannot create target directory"):
        Platform(Target(path=str(tmp_path / "file"))).prepare()


def test_refuses_a_device(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="platform local takes a directory `path`, not a device"):
        Platform(Target(device="/dev/null")).prepare()


def test_a_temporary_directory_in_assay_tmpdir(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TMPDIR", str(tmp_path))
    plat = Platform(Target())
    d = plat.prepare()
    assert d.parent == tmp_path and d.name.startswith("assay-") and d.is_dir()
    assert plat.temporary is True and plat.directory == d


def test_direct_io_as_the_scenario_says(tmp_path: Path) -> None:
    for wanted in (True, False):
        plat = Platform(Target(path=str(tmp_path), direct=wanted))
        plat.prepare()
        assert plat.direct_io() is wanted


def test_direct_io_probe_on_real_filesystems(machine: Machine) -> None:
    _, xfs = machine.filesystem("xfs")
    ramfs = machine.mount("ramfs", fstype="ramfs")  # has no O_DIRECT
    assert supports_direct_io(xfs) is True
    assert supports_direct_io(ramfs) is False
    plat = Platform(Target(path=str(ramfs / "data")))
    plat.prepare()
    assert plat.direct_io() is False
    assert sorted(p.name for p in ramfs.rglob("*")) == ["data"]  # no probe left behind
    assert list(xfs.iterdir()) == []


def test_facts_and_capabilities(tmp_path: Path) -> None:
    plat = Platform(Target(path=str(tmp_path)))
    assert plat.facts() == {"platform": "local"}
    assert Platform.supports(Target()) == frozenset()
    plat.prepare()
    plat.cleanup(keep=False)
    assert tmp_path.is_dir()  # a directory it was given is never removed
