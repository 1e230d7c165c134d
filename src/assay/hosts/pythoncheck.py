"""The host's Python, which runs assay's agent there (assay/agent/: integrity mode's writers
and verify passes, ...): present and at least the agent's oldest, and whether it has Ceph's
RBD binding (python3-rbd), which integrity mode needs on RBD targets."""

from __future__ import annotations

from typing import Protocol

from assay.agent.version import OLDEST
from assay.hosts.ssh import SshHost

PROBE = ("import sys\ntry:\n    import rbd, rados\n    r = 'rbd'\nexcept ImportError:\n"
         "    r = '-'\nprint('%d.%d %s' % (sys.version_info[0], sys.version_info[1], r))\n")


class Checked(Protocol):
    errors: list[str]
    warnings: list[str]
    python: str | None


def check_python(ssh: SshHost, r: Checked) -> None:
    python = str(ssh.host.vars.get("ansible_python_interpreter") or "python3")
    out = ssh.run([python, "-c", PROBE], timeout=20)
    words = out.stdout.split()
    if out.returncode != 0 or len(words) != 2:
        r.errors.append(f"{ssh.name}: {python} does not run there; assay's agent (latency "
                        f"from the due time, integrity mode) needs Python "
                        f"{'.'.join(map(str, OLDEST))} or newer (Debian: apt-get install "
                        f"python3; or set ansible_python_interpreter)")
        return
    r.python = words[0]
    version = tuple(int(x) for x in words[0].split("."))
    if version < OLDEST:
        r.errors.append(f"{ssh.name}: {python} is Python {words[0]}; assay's agent needs "
                        f"{'.'.join(map(str, OLDEST))} or newer")
    if words[1] != "rbd":
        r.warnings.append(f"{ssh.name}: {python} has no Ceph RBD binding: integrity mode "
                          f"cannot run on RBD targets there (Debian: apt-get install "
                          f"python3-rbd python3-rados)")
