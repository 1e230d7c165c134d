"""One run at a time on a host's target, as on this machine (platforms/lock.py, cluster/
hostcheck.py hold_target), and a symlinked `assay_path` followed as a local --path is: end to
end on a real 2-host lab (sshd in network namespaces, real fio), through the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.platforms import labcluster
from assay.platforms.labcluster import Cluster
from assay.platforms.lock import LOCK_NAME
from tests.conftest import needs_fio
from tests.sshlab import SKIP, needs_netns

pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]

SCENARIO = """\
name: {name}
workloads:
  db: {{kind: oltp, data_iops: 100, read_pct: 70, data_files: 1, log_files: 1, log_iops: 20,
       dataset: 8MiB}}
timeline:
  warmup: 0s
  duration: {duration}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A 2-host lab cluster (n1, n2)."""
    if SKIP:
        pytest.skip(SKIP)
    c = labcluster.create(f"t{uuid.uuid4().hex[:6]}", 2, size=1 << 30,
                          root=tmp_path_factory.mktemp("labs"))
    try:
        yield c
    finally:
        labcluster.destroy(c)


def scenario(tmp_path: Path, name: str, duration: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(SCENARIO.format(name=name, duration=duration))
    return path


def start(tmp_path: Path, lab: Cluster, name: str, duration: str,
          inventory: str | None = None) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / f"{name}.out"
    with open(out, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "assay", "run",
                                 str(scenario(tmp_path, name, duration)), "--hosts",
                                 inventory or lab.inventory, "--results",
                                 str(tmp_path / "results")],
                                stdout=fh, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "COLUMNS": "400"})  # a line per message
    return proc, out


def run(tmp_path: Path, lab: Cluster, name: str, inventory: str | None = None) \
        -> tuple[int, str]:
    proc, out = start(tmp_path, lab, name, "2s", inventory)
    return proc.wait(timeout=120), out.read_text()


def wait_for(out: Path, text: str, proc: subprocess.Popen[str], limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while text not in out.read_text():
        assert proc.poll() is None, out.read_text()
        assert time.monotonic() < deadline, out.read_text()
        time.sleep(0.2)


def test_a_second_run_on_the_same_hosts_is_refused_while_the_first_runs(
        lab: Cluster, tmp_path: Path) -> None:
    n1, n2 = lab.hosts
    first, first_out = start(tmp_path, lab, "first", "8s")
    try:
        wait_for(first_out, "prefill", first)  # its hosts checked and held
        rc, text = run(tmp_path, lab, "second")
        assert rc == 2, text
        for h in (n1, n2):  # each busy host, named, and the run holding it
            assert f"{h.name}: the target {h.path} is in use by assay run 'first' " \
                   f"20" in text, text
        assert f" on {n1.name}, since " in text and "wait for that run to end" in text
        assert "prefill" not in text  # refused before any IO
        runs = [p.name for p in (tmp_path / "results").iterdir() if p.is_dir()]
        assert len(runs) == 1 and "_first_" in runs[0], runs  # it left no run behind
        assert first.wait(timeout=120) == 0, first_out.read_text()
    finally:
        if first.poll() is None:
            first.kill()
    assert "COMPLETED: nothing graded" in first_out.read_text()  # it ran, graded nothing
    assert not (Path(n1.path) / LOCK_NAME).exists()  # the run's end released it
    rc, text = run(tmp_path, lab, "after")  # the first ended: not refused
    assert rc == 0, text


def test_a_run_killed_with_sigkill_leaves_its_hosts_free(lab: Cluster, tmp_path: Path) -> None:
    n1, n2 = lab.hosts
    first, first_out = start(tmp_path, lab, "killed", "60s")
    try:
        wait_for(first_out, "run:", first)
        for h in (n1, n2):  # held there for the run
            assert "assay run 'killed'" in (Path(h.path) / LOCK_NAME).read_text()
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    deadline = time.monotonic() + 10  # its sessions end as their hosts learn of it
    while any((Path(h.path) / LOCK_NAME).exists() for h in (n1, n2)):
        assert time.monotonic() < deadline, "the killed run's lock outlived its sessions"
        time.sleep(0.2)
    rc, text = run(tmp_path, lab, "next")
    assert rc == 0, text
    assert "in use by" not in text


def test_a_symlinked_assay_path_runs_in_the_directory_it_names(
        lab: Cluster, tmp_path: Path) -> None:
    n1, n2 = lab.hosts
    real = Path(n1.path) / "linked"
    real.mkdir(parents=True, exist_ok=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    lines = Path(lab.inventory).read_text().splitlines()
    inv = tmp_path / "inventory.ini"
    inv.write_text("\n".join(f"n1 ansible_host={n1.address} assay_path={link}"
                             if line.startswith("n1 ") else line for line in lines) + "\n")
    rc, text = run(tmp_path, lab, "linked", str(inv))
    assert rc == 0, text
    assert f"n1: assay_path {link} is a symbolic link: the run uses {real}" in text
    assert (real / "n1.0").is_dir()  # the data where the link points
    record = json.loads(next((tmp_path / "results").glob("*_linked_*/run.json")).read_text())
    assert record["cluster"]["hosts"]["n1"]["path_resolved"] == str(real)
