"""Another host through the OpenSSH client: batch mode, host keys verified, one connection.

Every command is an argv list, quoted with shlex for the remote shell, so a host name, path
or scenario name with shell characters in it is passed as data and executes nothing. The
client runs with BatchMode=yes (never a prompt), StrictHostKeyChecking=yes (or accept-new
when asked, explicitly), RequestTTY=no (a terminal would keep remote commands alive past
the end of stdin, and mix their stderr into stdout) and multiplexed over one master
connection whose control socket lives in a private temporary directory (0700) that
`close()` removes. Paths given to ssh as options (the key, known_hosts, the control socket)
are quoted as ssh reads its options (config_path): a space or a % in them is the path's, not
ssh's. Nothing secret is written anywhere: the key stays where the user keeps it and only
its path is passed on.

`popen` starts a long-running command (fio) whose remote process dies with the session: the
remote side is a small sh wrapper that starts the command in a new session (its own process
group) and kills that group when its stdin reaches end of file. The SSH channel's stdin
closes when the local ssh goes away for any reason, SIGKILL included, so no remote process
outlives the local one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.hosts.result import CommandResult

CONNECT_TIMEOUT = 5
SESSION_START = 30  # a new session's first answer: the host's shell started (its rc files)
CONTROL_PREFIX = "assay-ssh-"  # the control directory, in the temporary directory
OWNER = "owner"  # in it: "<pid> <start time>" of the assay process that made it
PERSIST = "120"  # a master left behind by a crash ends itself after 2 idle minutes

# $1 is a grace period; the rest is the command. The command gets /dev/null as stdin and
# its own process group (setsid); a watcher, in a group of its own, waits for the end of
# our stdin and then ends the command's group: TERM, then KILL after the grace period.
# (sh gives a background job /dev/null as stdin, hence the copy of stdin on fd 3.)
WRAPPER = (
    'g=$1; shift; exec 3<&0; setsid "$@" </dev/null 3<&- & pid=$!; '
    'setsid sh -c \'cat >/dev/null 2>&1; kill -TERM -"$1" 2>/dev/null; sleep "$2"; '
    'kill -KILL -"$1" 2>/dev/null\' assay-watch "$pid" "$g" <&3 >/dev/null 2>&1 & w=$!; '
    'exec 3<&-; wait "$pid"; rc=$?; kill -KILL -"$w" 2>/dev/null; exit "$rc"'
)


SAFE_VALUE = re.compile(r"^[A-Za-z0-9/._+,:@~-]+$")


def config_path(path: str) -> str:
    """A path as ssh must be given it in `-o Keyword=VALUE`: ssh splits the value of its
    options like a shell of its own (UserKnownHostsFile into several files at a space,
    ControlPath and IdentityFile refused with "extra arguments"), and expands %-tokens in
    all three; so `%` is doubled and a value with anything but plain characters is put in
    double quotes, `\\` and `"` escaped, as ssh's own argument splitting reads them."""
    value = path.replace("%", "%%")
    if SAFE_VALUE.match(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SshError(UserError):
    """The host cannot be reached, or refused us; the message says what to fix."""


class SshHost:
    """One host reached over SSH. Use as a context manager, or call close()."""

    def __init__(self, host: Host, *, accept_new: bool = False,
                 known_hosts: str | None = None, connect_timeout: int = CONNECT_TIMEOUT,
                 ssh: str = "ssh"):
        self.host = host
        self.accept_new = accept_new
        self.known_hosts = known_hosts or host.known_hosts
        self.connect_timeout = connect_timeout
        self.ssh = ssh
        self._dir = Path(tempfile.mkdtemp(prefix=CONTROL_PREFIX))  # mode 0700
        # who made it: `assay clean` removes it, and ends its master, once we are gone
        (self._dir / OWNER).write_text(process_id(os.getpid()), encoding="utf-8")
        self.control = self._dir / "master"
        self._master = False

    def __enter__(self) -> SshHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return self.host.name

    def options(self) -> list[str]:
        """The ssh options every call uses (what to connect to, how, and how to check). The
        inventory's own ssh arguments (host.ssh_args) follow them and assay's ControlMaster:
        ssh keeps the first value of an option, so they add to these, never override them."""
        h = self.host
        opts = {
            "BatchMode": "yes",
            "StrictHostKeyChecking": "accept-new" if self.accept_new else "yes",
            "ControlPath": config_path(str(self.control)),  # $TMPDIR may hold a space, a %
            "ConnectTimeout": str(self.connect_timeout),
            "ServerAliveInterval": "5",
            "ServerAliveCountMax": "3",
            "Port": str(h.port),
        }
        if self.known_hosts:
            opts["UserKnownHostsFile"] = config_path(self.known_hosts)
        if h.user:
            opts["User"] = h.user
        if h.key_file:
            opts["IdentityFile"] = config_path(h.key_file)
            opts["IdentitiesOnly"] = "yes"
        opts["RequestTTY"] = "no"  # never a terminal, whatever a config file (-F) says
        out: list[str] = []
        for key, value in opts.items():
            out += ["-o", f"{key}={value}"]
        return out

    def connect(self) -> None:
        """Open the master connection (checking the host key); SshError saying why not."""
        if self._master:
            return
        log = self._dir / "master.log"
        with open(log, "w", encoding="utf-8") as err:
            proc = subprocess.run(
                [self.ssh, *self.options(), "-o", "ControlMaster=yes",
                 "-o", f"ControlPersist={PERSIST}", *self.host.ssh_args, "-N", "-f", "--",
                 self.host.address],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                timeout=self.connect_timeout * 3 + 5, check=False)
        if proc.returncode != 0:
            raise SshError(explain(self.host, log.read_text(encoding="utf-8", errors="replace"),
                                   self.known_hosts))
        self._master = True

    def argv(self, argv: Sequence[str], *extra: str) -> list[str]:
        """The local ssh command line that runs `argv` on the host, each word quoted."""
        if not argv:
            raise ValueError("an empty command")
        return [self.ssh, *self.options(), "-o", "ControlMaster=auto", *extra,
                *self.host.ssh_args, "--", self.host.address, shlex.join([str(a) for a in argv])]

    def run(self, argv: Sequence[str], timeout: float = 60.0,
            input: str | None = None) -> CommandResult:
        """Run `argv` on the host; ssh's own failures are returncode 255."""
        self.connect()
        try:
            proc = subprocess.run(self.argv(argv), input=input, capture_output=True,
                                  text=True, timeout=timeout, check=False,
                                  stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return CommandResult(124, "", f"{self.name}: timed out after {timeout:g}s: "
                                          f"{shlex.join(argv)}")
        return CommandResult(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, argv: Sequence[str], grace: float = 2.0, **kwargs: Any) \
            -> subprocess.Popen[bytes]:
        """Start `argv` on the host, streaming its stdout and stderr; closing our end (stdin),
        or killing the returned process, ends the remote command (TERM, KILL after `grace`)."""
        self.connect()
        remote = ["sh", "-c", WRAPPER, "assay-wrap", f"{grace:g}", *argv]
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self.argv(remote), stdin=subprocess.PIPE, **kwargs)

    def clock_offset(self, samples: int = 5) -> tuple[float, float]:
        """(offset, round trip) in seconds: the host's clock minus ours, by the midpoint of
        the fastest of `samples` exchanges over one open session."""
        self.connect()
        script = 'while read -r _; do date +%s.%N; done'
        proc = subprocess.Popen(self.argv(["sh", "-c", script]), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                bufsize=1)
        assert proc.stdin is not None and proc.stdout is not None
        best: tuple[float, float] | None = None
        try:
            for i in range(samples + 1):
                t0 = time.time()
                proc.stdin.write("\n")
                proc.stdin.flush()
                # the first answer waits for the session to start (the host's login shell:
                # its rc files, seconds on a loaded host), as a command's does; the samples
                # after it are exchanges on a live session
                line = _readline(proc.stdout, SESSION_START if i == 0 else self.connect_timeout)
                t1 = time.time()
                remote = float(line)
                if best is None or t1 - t0 < best[1]:
                    best = (remote - (t0 + t1) / 2, t1 - t0)
        except (OSError, ValueError) as e:
            raise SshError(f"{self.name}: cannot read the host's clock: {e}") from None
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        assert best is not None
        return best

    def close(self) -> None:
        """End the master connection and remove the control directory."""
        if self._master:
            subprocess.run([self.ssh, *self.options(), "-O", "exit", "--", self.host.address],
                           capture_output=True, check=False, timeout=10)
            self._master = False
        shutil.rmtree(self._dir, ignore_errors=True)


def process_id(pid: int) -> str:
    """A process's pid and start time (clock ticks since boot): a reused pid differs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return f"{pid} ?"


def _readline(stream: IO[str], timeout: float) -> str:
    import select

    ready, _, _ = select.select([stream], [], [], timeout)
    if not ready:
        raise OSError(f"no answer within {timeout}s")
    line = stream.readline()
    if not line:
        raise OSError("the session ended")
    return line.strip()


OFFENDING = re.compile(r"Offending \S+ key in (\S+):(\d+)")


def explain(host: Host, stderr: str, known_hosts: str | None) -> str:
    """ssh's complaint, as what to do about it."""
    who = f"{host.name} ({host.address}:{host.port})"
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    m = OFFENDING.search(stderr)
    kh = shlex.quote(known_hosts) if known_hosts else "~/.ssh/known_hosts"  # for a shell
    key = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in stderr or m:
        where = f"{m.group(1)} line {m.group(2)}" if m else kh
        return (f"{who}: the host key does not match the one in {where}; refused. If the "
                f"host was reinstalled on purpose, remove that line (ssh-keygen -R {key} -f "
                f"{m.group(1) if m else kh}) and check again; otherwise someone may be "
                f"intercepting the connection")
    if "No " in stderr and "host key is known" in stderr or \
            "Host key verification failed" in stderr:
        return (f"{who}: its host key is not in {kh}; refused. Add it (ssh-keyscan -p "
                f"{host.port} {host.address} >> {kh}, then compare the fingerprint), or pass "
                f"--accept-new to trust it on first use")
    if "Permission denied" in stderr:
        return (f"{who}: the host refused our key (user {host.user or 'default'}, key "
                f"{host.key_file or 'ssh default'}): {lines[-1]}")
    detail = lines[-1] if lines else "ssh failed without a message"
    return f"{who}: cannot connect over SSH: {detail}"
