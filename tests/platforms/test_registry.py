"""The platform-driver registry: built-ins, checks at registration, entry-point plug-ins."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import platforms
from assay.plan import plan_text
from assay.platforms import btrfs, local
from assay.platforms.base import Platform
from assay.plugins import PluginError
from assay.scenario.models import Target
from tests.plugin_dist import install

DRIVER = '''
from typing import ClassVar
from assay.platforms.base import Platform

class Driver(Platform):
    name: ClassVar[str] = "{name}"
    actions: ClassVar[frozenset[str]] = frozenset({{"snapshot"}})
'''


def test_builtins_are_registered_and_keep_the_old_functions() -> None:
    assert platforms.driver("btrfs") is btrfs.Driver
    assert set(platforms.DRIVER_MODULES) <= set(platforms.names())
    with pytest.raises(KeyError):
        platforms.driver("nosuchplatform")


def test_a_class_that_is_not_a_platform_is_refused() -> None:
    class Driver:
        name = "loose"

    with pytest.raises(PluginError, match="'loose' .* is not a subclass of .*Platform"):
        platforms.REGISTRY.register("loose", Driver)


def test_a_module_is_refused_with_a_hint() -> None:
    with pytest.raises(PluginError, match=r"is a module; name its driver class \(`module:Driver`"):
        platforms.REGISTRY.register("localmod", local)


def test_a_driver_must_be_called_by_its_name() -> None:
    class Driver(Platform):  # forgot `name`: its runs would be recorded as "local"
        pass

    with pytest.raises(PluginError, match="calls itself 'local': set `name = 'zfs'`"):
        platforms.REGISTRY.register("zfs", Driver)
    assert "zfs" not in platforms.names()


def test_an_entry_point_driver_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.platforms": {"snappy": "ep_driver_mod:Driver"}},
            {"ep_driver_mod.py": DRIVER.format(name="snappy")})
    drv = platforms.driver("snappy")
    assert isinstance(drv(Target(platform="snappy")), Platform)
    plan = plan_text("name: t\ntarget: {platform: snappy}\nworkloads:\n  w: {kind: dss}\n"
                     "timeline:\n  steps:\n    - {action: snapshot, at: 5s}\n", "t.yaml")
    assert plan.scenario.target.platform == "snappy"


def test_a_broken_entry_point_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"assay.platforms": {"gone": "ep_gone_mod:Drivr"}},
            {"ep_gone_mod.py": DRIVER.format(name="gone")}, name="assay-gone")
    with pytest.raises(PluginError, match=r"platform driver 'gone' \(entry point "
                                          r"'ep_gone_mod:Drivr' of package assay-gone 0.1\) "
                                          r"cannot be loaded: AttributeError"):
        platforms.driver("btrfs")  # a broken plug-in is reported on any access
