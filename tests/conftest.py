"""Shared fixtures: real fio runs in temporary directories, loop-device filesystems as root."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay.engine import Engine, Outcome, RunOptions
from assay.plan import Plan, plan_text
from assay.results.rundir import read_json

FIXTURES = Path(__file__).parent / "fixtures"

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices, mounts)")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`WORKERS=2 make test` runs tier 2 on two pytest-xdist workers: its lab runs are paced and
    wall-clock bound, so two at once use the two cores. A module runs in order on one worker,
    with its module-scoped lab (as `--dist loadscope`); the Ceph modules are one group, so one
    Ceph lab runs at a time (two beside each other starve both; their timers are wall-clock)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::")[0]
            return "tests/ceph" if module.startswith("tests/ceph/") else module

    return ByModule(config, log)


def verdict_of(proc: subprocess.CompletedProcess[str]) -> str:
    """An `assay run`'s verdict as it printed it, thresholds first (for an assertion's message:
    the tail of a long summary leaves out which threshold failed), and its stderr's tail."""
    out = proc.stdout
    at = max(out.rfind("\nPASSED "), out.rfind("\nFAILED "))
    return (out[at:at + 4000] if at >= 0 else out[-3000:]) + proc.stderr[-2000:]


def assay_in_process(*args: str, env: dict[str, str] | None = None,
                     cwd: Path | str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m assay ARGS` without an interpreter's start-up (0.3-1.3 s of imports each):
    `assay.cli.main` in this process, the exit-code mapping a user sees, stdout and stderr
    apart, `env` (whole, as subprocess takes it) and `cwd` for the call only. For a verb that
    nothing kills or signals: a test that sends a signal or kills keeps a real process."""
    from click.testing import CliRunner

    from assay.cli import main

    runner = CliRunner()
    # CliRunner's env adds to os.environ: what `env` leaves out is unset, as for a subprocess
    wanted = {k: None for k in os.environ if env is not None and k not in env}
    wanted.update(env or {})
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    old_cwd, old_argv = os.getcwd(), sys.argv
    with runner.isolation(env=wanted) as (out, err, _):
        sys.argv = ["assay", *args]
        try:
            if cwd is not None:
                os.chdir(cwd)
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        finally:
            sys.argv = old_argv
            os.chdir(old_cwd)
            for s, h in handlers.items():
                signal.signal(s, h)
        stdout, stderr = out.getvalue().decode("utf-8", "replace"), \
            err.getvalue().decode("utf-8", "replace") if err is not None else ""
    return subprocess.CompletedProcess(["assay", *args], code, stdout, stderr)


def quiet_console() -> Console:
    return Console(file=open(os.devnull, "w"), width=120)  # noqa: SIM115


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return tmp_path / "results"


@pytest.fixture
def run_scenario(tmp_path: Path, results: Path) -> Callable[..., tuple[Outcome, dict[str, Any]]]:
    """Run scenario YAML text for real; returns the outcome and the stored run.json."""

    def run(text: str, *, duration: float | None = None, target_dir: Path | None = None,
            **options: Any) -> tuple[Outcome, dict[str, Any]]:
        plan: Plan = plan_text(text, "test.yaml", tmp_path, duration)
        if target_dir is not None:
            plan.scenario.target.path = str(target_dir)
        outcome = Engine(plan, RunOptions(results, **options), quiet_console()).execute()
        return outcome, read_json(outcome.run_dir / "run.json")

    return run


@pytest.fixture
def loopfs(tmp_path: Path) -> Iterator[Callable[..., tuple[str, Path]]]:
    """Factory: a filesystem on a fresh loop device, mounted; all undone afterwards.

    Returns (loop device, mountpoint). `fstype` is xfs or btrfs (mkfs must exist).
    """
    made: list[tuple[str, Path, Path]] = []

    def make(fstype: str = "xfs", size: str = "1G", mkfs_args: tuple[str, ...] = ()) \
            -> tuple[str, Path]:
        if shutil.which(f"mkfs.{fstype}") is None:
            pytest.skip(f"mkfs.{fstype} is not installed")
        image = tmp_path / f"{fstype}-{uuid.uuid4().hex[:6]}.img"
        subprocess.run(["truncate", "-s", size, str(image)], check=True)
        dev = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                             text=True, check=True).stdout.strip()
        mnt = tmp_path / f"mnt-{uuid.uuid4().hex[:6]}"
        mnt.mkdir()
        made.append((dev, mnt, image))
        force = "-f"
        subprocess.run([f"mkfs.{fstype}", force, *mkfs_args, dev], capture_output=True,
                       check=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        return dev, mnt

    yield make
    for dev, mnt, _ in reversed(made):
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)
