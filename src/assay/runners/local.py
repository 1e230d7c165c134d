"""fio on this machine, as a child process; its files live in the run's hosts/<host>/."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.fio.process import FioProcess, parse_only
from assay.runners.base import CommandResult, FioRun, Powers


class LocalRunner:
    powers = Powers.NONE  # this machine's clock; no session to lose

    def __init__(self, host: str, workdir: Path):
        self._host = host
        self.workdir = workdir  # job files, raw output and logs: the run directory's copy
        self._procs: Path | None = None

    @property
    def host(self) -> str:
        return self._host

    def clock(self) -> float:
        return time.time()

    def measure_clock(self) -> tuple[float, float]:
        return 0.0, 0.0

    def ping(self, timeout: float) -> bool:
        return True

    def prepare(self, directory: Path, subdirs: Sequence[str]) -> None:
        for sub in subdirs:  # a driver may have made it already (a btrfs subvolume)
            (directory / sub).mkdir(exist_ok=True)

    def write_job(self, name: str, text: str) -> Path:
        path = self.workdir / name
        path.write_text(text, encoding="utf-8")
        return path

    def check_job(self, name: str, env: Mapping[str, str]) -> str | None:
        return parse_only(self.workdir / name, dict(env))

    def confine(self, procs: Path | None) -> None:
        self._procs = procs

    def start(self, name: str, env: Mapping[str, str], *, at: float | None = None,
              sections: Sequence[str] = ()) -> FioRun:
        fio = FioProcess(self.workdir / name, self.workdir, name=Path(name).stem,
                         extra_args=[f"--section={s}" for s in sections],
                         cgroup_procs=self._procs, env=dict(env))
        if at is not None:
            time.sleep(max(0.0, at - time.time()))
        fio.start()
        return fio

    def fetch_logs(self) -> list[Path]:
        # fio runs in the work directory, so its logs are already in the run directory; only
        # the total latency is used
        for extra in (*self.workdir.glob("*_clat.*.log"), *self.workdir.glob("*_slat.*.log")):
            extra.unlink(missing_ok=True)
        return sorted(self.workdir.glob("*_lat.*.log"))

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        return run_here(argv, timeout)

    def agent(self, command: str, args: Sequence[str] = ()) -> subprocess.Popen[bytes]:
        """The agent's command here, with this interpreter, in the host's run directory."""
        return subprocess.Popen([sys.executable, "-m", "assay.agent", command, *args],
                                cwd=self.workdir, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)

    def close(self) -> None:
        """Its files are the run directory's: nothing to remove."""

    def abandon(self) -> None:
        self.close()


def run_here(argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
    """A command on this machine, as a runner runs one on its host."""
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    return CommandResult(r.returncode, r.stdout, r.stderr)
