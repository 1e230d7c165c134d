"""The target lock as a host holds it (platforms/lock.py HOLD, cluster/hostcheck.py
hold_target): the same lock file and flock as a local run's, held by a shell in a session for
the run, shared by the hosts of one run, released when that session ends, however it ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from assay.cluster.hostcheck import hold_target, resolve
from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.hosts.result import CommandResult
from assay.hosts.ssh import WRAPPER
from assay.platforms import lock
from assay.platforms.lock import LOCK_NAME, TargetLock
from assay.platforms.safety import device_state_dir
from assay.runners.ssh import SshRunner


class HereSsh:
    """An SshHost whose host is this machine: the remote command, wrapped as ssh runs it
    there (its stdin closed or this end killed ends it), run here."""

    name = "n1"

    def popen(self, argv: list[str], grace: float = 2.0, **kw: Any) -> subprocess.Popen[bytes]:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(["sh", "-c", WRAPPER, "assay-wrap", f"{grace:g}", *argv],
                                stdin=subprocess.PIPE, **kw)

    def run(self, argv: list[str], timeout: float = 60.0) -> CommandResult:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        return CommandResult(r.returncode, r.stdout, r.stderr)

    def close(self) -> None:
        pass


def runner(tmp_path: Path, run_id: str, name: str = "n1") -> SshRunner:
    work = tmp_path / run_id
    work.mkdir(exist_ok=True)
    return SshRunner(Host(name, "127.0.0.1"), work, HereSsh(), run_id=run_id)


def test_a_second_run_on_a_hosts_target_is_refused_naming_the_host_and_the_run(
        tmp_path: Path) -> None:
    target = tmp_path / "target"
    first = runner(tmp_path, "20261201-220000_demo_aaaaaa")
    hold_target("demo", "n1", first, str(target))
    second = runner(tmp_path, "20261201-220001_demo_bbbbbb")
    with pytest.raises(UserError) as e:
        hold_target("demo", "n1", second, str(target))
    text = str(e.value)
    assert text.startswith(f"n1: the target {target} is in use by assay run 'demo' "
                           f"20261201-220000_demo_aaaaaa from {socket.gethostname()} pid "
                           f"{os.getpid()} (pid "), text  # which assay, and its holder there
    assert " on n1, since " in text and "wait for that run to end" in text
    # a local run on the same directory is refused in the same words, without the host
    with pytest.raises(UserError, match="is in use by assay run 'demo' 20261201-220000"):
        TargetLock(target).acquire("'local'")
    # another host of the first run sharing the directory shares its lock
    hold_target("demo", "n2", runner(tmp_path, "20261201-220000_demo_aaaaaa", "n2"),
                str(target))
    first.close()  # the run's end: its session ends, the lock file goes, the lock with it
    assert not (target / LOCK_NAME).exists()
    hold_target("demo", "n1", second, str(target))
    second.close()


def test_a_host_lock_dies_with_its_session_and_a_local_lock_holds_on_the_host(
        tmp_path: Path) -> None:
    target = tmp_path / "target"
    first = runner(tmp_path, "run-a")
    hold_target("demo", "n1", first, str(target))
    for proc in first._held:  # ssh killed: its end of the session is gone (stdin's EOF there)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.stdin is not None
        proc.stdin.close()
    second = runner(tmp_path, "run-b")
    deadline = time.monotonic() + 10
    while True:  # the host ends the holder once it learns of that end
        try:
            hold_target("demo", "n1", second, str(target))
            break
        except UserError:
            assert time.monotonic() < deadline, "the lock outlived its session"
            time.sleep(0.2)
    second.close()
    local = TargetLock(target).acquire("'here'")
    try:
        with pytest.raises(UserError, match=rf"n1: the target {target} is in use by "
                                            rf"assay run 'here' \(pid {os.getpid()} on "):
            hold_target("demo", "n1", runner(tmp_path, "run-c"), str(target))
    finally:
        local.release()


def test_a_lock_whose_controller_is_gone_is_taken_over(tmp_path: Path, monkeypatch) -> None:
    """A host the last run lost (cut off) still holds its lock until its sshd learns that
    session is dead; the next run from this machine, whose last assay is gone, ends that
    holder and runs (the next failover test was refused: in use by the run that lost it)."""
    target = tmp_path / "target"
    gone = subprocess.Popen(["true"])
    gone.wait()
    here = lock.controller()
    monkeypatch.setattr(lock, "controller", lambda: here.replace(f"pid {os.getpid()} ",
                                                                 f"pid {gone.pid} "))
    lost = runner(tmp_path, "20261201-220000_demo_aaaaaa")  # its assay gone, its holder not
    hold_target("demo", "n1", lost, str(target))
    [holder] = lost._held
    monkeypatch.undo()
    live = runner(tmp_path, "20261201-220001_demo_bbbbbb")
    hold_target("demo", "n1", live, str(target))  # taken over: no refusal
    assert holder.wait(timeout=10) == 0  # the old holder ended, its lock file removed first
    with pytest.raises(UserError, match=r"in use by assay run 'demo' 20261201-220001_demo_bbb"):
        hold_target("demo", "n1", runner(tmp_path, "20261201-220002_demo_cccccc"), str(target))
    live.close()
    lost.close()


def test_a_host_that_cannot_hold_the_lock_says_why(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="n1: cannot write to the target .*file/sub there"):
        hold_target("demo", "n1", runner(tmp_path, "run-a"), str(tmp_path / "file" / "sub"))


@pytest.mark.parametrize("device", ["/dev/null", "/dev/loop0"])
def test_a_hosts_device_is_locked_beside_its_manifest_as_a_local_one(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    out = subprocess.run(["sh", "-c", lock.DEVICE_DIR, "assay-device-dir", device],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(device_state_dir(device))


def test_a_symlinked_target_is_resolved_on_the_host_as_a_local_path_is(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    r = runner(tmp_path, "run-a")
    assert resolve("n1", r, str(tmp_path / "link")) == str((tmp_path / "link").resolve())
    # a link to a directory not made yet names it, as Path.resolve does
    (tmp_path / "ahead").symlink_to(tmp_path / "later")
    assert resolve("n1", r, str(tmp_path / "ahead")) == str(tmp_path / "later")
