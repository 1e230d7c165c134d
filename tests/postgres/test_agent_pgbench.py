"""The agent's `pgbench check` on this machine (as on a host): PostgreSQL there, and nothing
of the database's names that assay did not make; no IO, no server."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres.conftest import needs_postgres

pytestmark = needs_postgres


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory the PostgreSQL user reaches (pytest's own are private, 0700)."""
    d = Path(tempfile.mkdtemp(prefix="assay-pgcheck-"))
    d.chmod(0o711)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check(tmp_path: Path, **spec: object) -> dict:
    base = tmp_path / "target" / "n1.0"
    db = {"base": str(base), "name": "pg", "wal": None}
    r = subprocess.run([sys.executable, "-m", "assay.agent", "pgbench", "check",
                        json.dumps({"databases": [db], **spec})],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    row = json.loads(r.stdout.splitlines()[-1])
    assert (r.returncode == 0) == row["ok"]
    return row


def test_a_host_with_postgresql_passes_and_names_its_binaries(place: Path) -> None:
    row = check(place)
    assert row["ok"] and row["version"].startswith("postgres (PostgreSQL)")
    assert not (place / "target").exists()  # nothing made by a check


def test_missing_binaries_are_named(tmp_path: Path) -> None:
    row = check(tmp_path, bindir="/nonexistent/bin")
    assert not row["ok"]
    assert "initdb, postgres, pgbench, psql not found under /nonexistent/bin" in row["problem"]


def test_directories_of_the_databases_names_that_are_not_assays_are_refused(
        place: Path) -> None:
    tmp_path = place
    base = tmp_path / "target" / "n1.0"
    (base / "pg-pg.loaded").mkdir(parents=True)  # no manifest beside it: not assay's
    assert "pg-pg.loaded exists and is not assay's" in check(tmp_path)["problem"]
    (base / "pg-pg.loaded.json").write_text("{}")
    (base / "pg-pg.run").mkdir()  # no marker: not assay's
    assert "pg-pg.run exists and is not assay's" in check(tmp_path)["problem"]
    (base / "pg-pg.run.json").write_text("{}")  # a crashed run's: assay removes it
    assert check(tmp_path)["ok"]
    assert (base / "pg-pg.run").is_dir()  # the check itself writes over nothing
