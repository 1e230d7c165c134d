"""The SSH transport against real sshd processes in network namespaces (a lab cluster):
quoting, host key checks, multiplexing, clock, and remote processes that die with ssh."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from assay.hosts.ssh import SshError, SshHost
from assay.platforms.labcluster import Cluster
from tests.sshlab import cluster, hosts_of, needs_netns  # noqa: F401

pytestmark = needs_netns


def remote_pids(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return out.split()


def gone_within(marker: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not remote_pids(marker):
            return True
        time.sleep(0.1)
    return False


def test_run_returns_output_and_status(cluster: Cluster) -> None:  # noqa: F811
    with SshHost(hosts_of(cluster)[0]) as ssh:
        r = ssh.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")
        # the same master serves every command: it exists while the host is open
        assert ssh.control.exists()
        assert ssh.run(["ip", "-4", "-o", "addr", "show", "eth0"]).stdout.count(
            cluster.hosts[0].address) == 1  # it ran inside the host's namespace
        control_dir = ssh.control.parent
    assert not control_dir.exists()  # close() ended the master and removed its socket dir


def test_shell_metacharacters_execute_nothing(cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    pwned = tmp_path / f"pwned-{uuid.uuid4().hex[:6]}"
    words = [f"/tmp/x; touch {pwned}", f"$(touch {pwned})", f"`touch {pwned}`",
             f"a' ; touch {pwned}; '", f'"; touch {pwned}; "', f"x && touch {pwned}",
             f"| touch {pwned}", "new\nline", "*", "~root", "$HOME"]
    with SshHost(hosts_of(cluster)[1]) as ssh:
        r = ssh.run(["ls", "--", words[0]])
        assert r.returncode != 0 and "No such file" in r.stderr
        echoed = ssh.run(["printf", "%s\\0", *words])
    assert echoed.returncode == 0
    assert echoed.stdout.split("\0")[:-1] == words  # every word arrived as data, verbatim
    assert not pwned.exists()


def test_killing_the_local_ssh_kills_the_remote_process(cluster: Cluster) -> None:  # noqa: F811
    marker = f"{1000 + uuid.uuid4().int % 9000}.123"  # a unique `sleep` argument
    with SshHost(hosts_of(cluster)[2]) as ssh:
        proc = ssh.popen(["sleep", marker])
        end = time.monotonic() + 5
        while not remote_pids(f"^sleep {marker}$") and time.monotonic() < end:
            time.sleep(0.05)
        assert remote_pids(f"^sleep {marker}$"), "the remote command did not start"
        os.kill(proc.pid, signal.SIGKILL)  # the local ssh, killed outright
        proc.wait()
        assert gone_within(marker, 5), subprocess.run(["pgrep", "-af", marker],
                                                      capture_output=True, text=True).stdout
        # closing our end (stdin) stops a remote command too, and the status comes back
        proc = ssh.popen(["sh", "-c", "echo started; exec sleep 7321.5"])
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == b"started\n"
        proc.stdin.close()
        assert proc.wait(timeout=10) != 0
        assert gone_within("7321.5", 5)
        # a command that ends by itself ends the session with its status (stdin kept open:
        # closing it, as communicate() does, would stop the command)
        done = ssh.popen(["sh", "-c", "echo done; exit 5"])
        assert done.stdout is not None and done.stdin is not None
        assert done.stdout.read() == b"done\n"
        assert done.wait(timeout=10) == 5
        done.stdin.close()


def test_clock_offset_on_one_machine_is_near_zero(cluster: Cluster) -> None:  # noqa: F811
    with SshHost(hosts_of(cluster)[0]) as ssh:
        offset, rtt = ssh.clock_offset()
    assert abs(offset) < 0.005 and 0 < rtt < 0.1


def test_a_clock_read_waits_for_a_slow_session_start(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    """A host whose login shell takes seconds to start (rc files on a loaded host: root's
    `pyenv init` took 3-6 s here) answers late once, then at once: not a host without a
    clock (a run was refused "n3: cannot read the host's clock: no answer within 5s")."""
    slow = tmp_path / "slow-ssh"  # the session starts 7 s late, past the 5 s of an exchange
    slow.write_text('#!/bin/sh\ncase "$*" in *"date +%s.%N"*) sleep 7;; esac\nexec ssh "$@"\n')
    slow.chmod(0o755)
    with SshHost(hosts_of(cluster)[0], ssh=str(slow)) as ssh:
        offset, rtt = ssh.clock_offset()
    assert abs(offset) < 0.005 and 0 < rtt < 0.1


def test_a_changed_host_key_is_refused_naming_the_line(cluster: Cluster,  # noqa: F811
                                                        tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)],
                   check=True)
    lines = Path(cluster.known_hosts).read_text().splitlines()
    n2 = cluster.hosts[1]
    lines[1] = f"{n2.address} {' '.join(Path(f'{other}.pub').read_text().split()[:2])}"
    bad = tmp_path / "known_hosts"
    bad.write_text("\n".join(lines) + "\n")
    host = hosts_of(cluster)[1]
    for accept_new in (False, True):  # accept-new trusts new keys, never changed ones
        with SshHost(host, known_hosts=str(bad), accept_new=accept_new) as ssh, \
                pytest.raises(SshError) as e:
            ssh.run(["true"])
        msg = str(e.value)
        assert msg.startswith(f"n2 ({n2.address}:22): the host key does not match")
        assert f"{bad} line 2" in msg and f"ssh-keygen -R {n2.address}" in msg
    assert bad.read_text().splitlines()[1] == lines[1]  # nothing was rewritten


def test_an_unknown_host_key_needs_accept_new(cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    host = hosts_of(cluster)[0]
    with SshHost(host, known_hosts=str(empty)) as ssh, pytest.raises(SshError) as e:
        ssh.connect()
    assert "its host key is not in" in str(e.value) and "--accept-new" in str(e.value)
    with SshHost(host, known_hosts=str(empty), accept_new=True) as ssh:
        assert ssh.run(["true"]).returncode == 0
    assert cluster.hosts[0].address not in empty.read_text()  # hashed, but present
    assert len(empty.read_text().splitlines()) == 1


def test_unreachable_and_refused(cluster: Cluster) -> None:  # noqa: F811
    host = hosts_of(cluster)[0]
    wrong_key = dataclasses.replace(host, key_file=f"{cluster.root}/no-such-key")
    with SshHost(wrong_key) as ssh, pytest.raises(SshError, match="refused our key"):
        ssh.connect()
    closed = dataclasses.replace(host, port=2)
    with SshHost(closed, connect_timeout=2) as ssh, \
            pytest.raises(SshError, match="cannot connect over SSH"):
        ssh.connect()
