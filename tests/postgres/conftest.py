"""Fixtures of the PostgreSQL tests: real loop devices and filesystems, and a check that the
machine has PostgreSQL (`make test` installs Debian's `postgresql`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.postgres.cluster import bindir
from tests.conftest import results, run_scenario  # noqa: F401
from tests.realfs import Machine


def _installed() -> bool:
    try:
        bindir()
    except UserError:
        return False
    return True


needs_postgres = pytest.mark.skipif(not _installed() or os.geteuid() != 0,
                                    reason="needs root and PostgreSQL (Debian `postgresql`)")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory the server's unprivileged user can reach, outside pytest's base directory
    (every new pytest session on the machine makes that 0700 again)."""
    base = Path(tempfile.mkdtemp(prefix="assay-test-pg-"))
    base.chmod(0o711)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_machine(outside: Path) -> Iterator[Machine]:
    """Loop devices and filesystems (tests.realfs.Machine) mounted under `outside`."""
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mounts)")
    m = Machine(outside)
    try:
        yield m
    finally:
        m.cleanup()


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
