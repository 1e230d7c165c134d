"""`assay lab create ceph`: bad requests are refused before anything is made (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("args,says", [
    (["--hosts", "2"], "3 hosts or more"),
    (["--size", "1GiB"], "takes --hosts, --name and --cephfs only"),
    (["--name", "Bad Name"], "lower-case letters")])
def test_bad_requests_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    env = {**os.environ, "ASSAY_LAB_DIR": str(tmp_path / "labs")}
    r = subprocess.run([sys.executable, "-m", "assay", "lab", "create", "ceph", *args],
                       capture_output=True, text=True, timeout=60, env=env)
    if "needs ceph" in r.stderr:
        pytest.skip("Ceph is not installed")
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    labs = tmp_path / "labs"
    assert not labs.exists() or not any(labs.iterdir())  # nothing was made
