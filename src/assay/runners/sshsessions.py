"""The shells an SshRunner keeps open on its host, each a session-bound command: it ends when
its ssh session does (closed by us, or this process dead, SIGKILL included).

The run directory (`hold_run_dir`): `$TMPDIR/assay-<run id>.XXXXXXXX`, made with mktemp and
held by a shell that removes it when its session ends: when the runner is closed, and also
when this process dies. A lost host's directory is removed if the host answers by then; else,
as any directory whose session died without removing it (the host restarted), `assay clean
--hosts` removes it (`remove_leftovers`): a mark in it names the shell holding it.

The echo (`Echo`): ping's session, a shell that sends each line back, nothing spawned per ping.
"""

from __future__ import annotations

import contextlib
import subprocess

from assay.exitcodes import UserError
from assay.hosts.ssh import SshError, SshHost

MARK = ".assay-run"  # in a remote run directory: "<pid of the shell holding it> <boot id>"
BOOT_ID = "$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
# $1 a name for the directory; prints the directory made; removes it when the session ends
ANCHOR = (
    'd=$(mktemp -d "${TMPDIR:-/tmp}/assay-$1.XXXXXXXX") || exit 1; '
    f'echo "$$ {BOOT_ID}" > "$d/{MARK}"; '
    'trap \'rm -rf -- "$d"; exit 0\' TERM INT HUP; echo "$d"; '
    # no output from here on: with its session gone, a write would kill it (SIGPIPE) before rm
    'exec >/dev/null 2>&1; '
    'while :; do sleep 3600 >/dev/null 2>&1 & wait $!; done'
)
# Run directories whose holder is gone without removing them (the host lost, restarted, or
# its shell killed): ours by name, owner and mark, and no longer held (the mark's pid dead,
# or from another boot). Removed; each printed.
LEFTOVERS = (
    f'b={BOOT_ID}; for d in "${{TMPDIR:-/tmp}}"/assay-*.????????; do '
    f'[ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ] && [ -f "$d/{MARK}" ] || continue; '
    f'read -r p s < "$d/{MARK}" || continue; '
    'case $p in ""|*[!0-9]*) continue;; esac; '
    '[ "$s" = "$b" ] && kill -0 "$p" 2>/dev/null && continue; '
    'rm -rf -- "$d" && printf "%s\\n" "$d"; done; :'
)
ECHO = 'while read -r l; do echo "$l"; done'  # ping: each line back, nothing spawned


def hold_run_dir(ssh: SshHost, host: str, run_id: str) -> tuple[subprocess.Popen[bytes], str]:
    """The run's directory made on the host, and the session-bound shell holding it."""
    proc = ssh.popen(["sh", "-c", ANCHOR, "assay-anchor", run_id], start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode("utf-8", errors="replace").strip()
    if not line.startswith("/"):
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        end_session(proc)
        raise UserError(f"{host}: cannot make a run directory there (mktemp in "
                        f"$TMPDIR or /tmp): {last_line(err)}")
    return proc, line


class Echo:
    """ping's session on the host: a shell echoing each line back, kept open."""

    def __init__(self, ssh: SshHost):
        self.ssh = ssh
        self.proc: subprocess.Popen[bytes] | None = None

    def ping(self, timeout: float) -> bool:
        """A line sent, and back within `timeout`? (SshRunner.ping)"""
        import select

        try:
            if self.proc is None or self.proc.poll() is not None:
                self.ssh.connect()  # the shell reads our stdin: it ends when we close it
                self.proc = subprocess.Popen(self.ssh.argv(["sh", "-c", ECHO]),
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, start_new_session=True)
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(b"p\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if ready and self.proc.stdout.readline():
                return True
        except (OSError, SshError):
            pass
        if self.proc is not None:  # no answer: that session is no use any more
            self.proc.kill()
            self.proc = None
        return False

    def end(self) -> None:
        """End ping's session, if open."""
        if self.proc is not None:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
            self.proc = None


def remove_leftovers(ssh: SshHost) -> list[str]:
    """The host's run directories that outlived their run (LEFTOVERS), removed; SshError
    when the host cannot be asked."""
    r = ssh.run(["sh", "-c", LEFTOVERS, "assay-leftovers"])
    if r.returncode != 0:
        raise SshError(f"{ssh.name}: cannot look for leftover run directories: "
                       f"{last_line(r.stderr)}")
    return [ln for ln in r.stdout.splitlines() if ln]


def last_line(text: str) -> str:
    """A command's last words (its stderr's last line): the message of its failure."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"


def end_session(proc: subprocess.Popen[bytes]) -> None:
    """End a session-bound command: close its stdin (the host ends it), then wait."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()

