"""Fixtures of the PostgreSQL tests: real loop devices and filesystems, and a check that the
machine has PostgreSQL (`make test` installs Debian's `postgresql`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.postgres.cluster import bindir, processes
from tests.conftest import results, run_scenario  # noqa: F401
from tests.realfs import machine  # noqa: F401


def _installed() -> bool:
    try:
        bindir()
    except UserError:
        return False
    return True


needs_postgres = pytest.mark.skipif(not _installed() or os.geteuid() != 0,
                                    reason="needs root and PostgreSQL (Debian `postgresql`)")


def open_to_postgres(path: Path) -> Path:
    """Let the server's unprivileged user through `path`'s parents (pytest makes them 0700)."""
    for p in [path, *path.parents]:
        if p == Path("/tmp") or p == Path("/"):
            break
        p.chmod(p.stat().st_mode | 0o111)
    return path


def leftovers(under: Path) -> list[int]:
    """Pids of any process whose working directory lies under `under` (server, pgbench)."""
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cwd = os.readlink(p / "cwd")
            except OSError:
                continue
            if cwd.startswith(str(under)):
                found.append(int(p.name))
    return found


@pytest.fixture
def postgres_ok() -> Callable[[Path], list[int]]:
    return processes
