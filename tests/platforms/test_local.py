"""The local driver: a directory on this host, no platform operations."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import platforms
from assay.platforms import local
from assay.platforms.base import MARK, Platform
from assay.scenario.models import Target


def test_is_the_default_platform_and_can_do_no_action() -> None:
    assert Target().platform == "local" and platforms.driver("local") is local.Driver
    assert issubclass(local.Driver, Platform) and local.Driver.name == "local"
    assert local.Driver.supports(Target()) == frozenset()


def test_prepares_a_temporary_directory_and_records_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TMPDIR", str(tmp_path))
    plat = local.Driver(Target())
    d = plat.prepare()
    assert d.is_dir() and d.parent == tmp_path and plat.temporary
    st = d.stat()  # and the proof that it is the run's, for `assay clean`
    assert plat.facts() == {"platform": "local"}
    made = plat.made_facts()["made"]
    assert (made["dev"], made["ino"]) == (st.st_dev, st.st_ino) and (d / MARK).is_file()
