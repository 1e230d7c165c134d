"""The agent (assay/agent/): the same program here and on a host, from one archive."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

from assay import agent as package
from assay.platforms.labcluster import Cluster
from assay.runners import LocalRunner, agent
from assay.runners.ssh import SshRunner
from tests.sshlab import cluster, hosts_of, needs_netns  # noqa: F401


def test_the_archive_is_the_package_byte_for_byte_and_the_same_on_every_build() -> None:
    data = agent.archive()
    source = Path(package.__file__).parent
    with zipfile.ZipFile(__import__("io").BytesIO(data)) as z:
        names = set(z.namelist())
        assert {f"{agent.PACKAGE}/{p.name}" for p in source.glob("*.py")} | {"__main__.py"} \
            == names
        assert z.read(f"{agent.PACKAGE}/version.py") == (source / "version.py").read_bytes()
    agent.archive.cache_clear()
    assert agent.archive() == data  # fixed timestamps: the same bytes each run


def test_the_archive_runs_on_a_bare_python_with_the_standard_library_only(tmp_path: Path) \
        -> None:
    (tmp_path / agent.ARCHIVE).write_bytes(agent.archive())
    # -I: isolated (no site-packages, so no assay): the agent needs nothing beyond the stdlib
    out = subprocess.run(["python3", "-I", agent.ARCHIVE, "version"], cwd=tmp_path,
                         capture_output=True, text=True, check=False, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["agent"] == package.VERSION
    bad = subprocess.run(["python3", "-I", agent.ARCHIVE, "nonsense"], cwd=tmp_path,
                         capture_output=True, text=True, check=False, timeout=30)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_the_local_runner_runs_the_agent_in_its_work_directory(tmp_path: Path) -> None:
    proc = LocalRunner("local", tmp_path).agent("version")
    assert proc.stdout is not None
    rows = list(agent.rows(proc.stdout))
    assert proc.wait(timeout=30) == 0
    assert rows and rows[0]["agent"] == package.VERSION and rows[0]["ok"] is True


@needs_netns
def test_an_ssh_runner_ships_the_archive_once_and_runs_it_on_the_host(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    host = hosts_of(cluster)[0]
    with SshRunner(host, tmp_path) as runner:
        for _ in range(2):
            proc = runner.agent("version")
            assert proc.stdout is not None
            rows = list(agent.rows(proc.stdout))
            assert proc.wait(timeout=60) == 0
            assert rows[0]["agent"] == package.VERSION
        listing = runner.run(["ls", runner.remote_dir])
        assert agent.ARCHIVE in listing.stdout.split()
