"""The connection assay makes is the one Ansible makes: `ansible all -m ping` run with a
stand-in ssh that records its arguments shows, for each host, the address, user, port, key
and extra arguments Ansible's ssh connection takes from the variables (old names included);
assay's hosts and its own ssh command line must say the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.hosts import inventory
from assay.hosts.ssh import SshHost
from tests.hosts.inventories import INVENTORIES
from tests.hosts.test_inventory_ansible import ORACLE, ansible_env, needs_ansible, write

RECORDER = f"""#!{sys.executable}
import json, os, sys, uuid
with open(os.path.join(os.environ["RECORD_TO"], uuid.uuid4().hex), "w") as f:
    json.dump(sys.argv[1:], f)
sys.exit(255)  # as if unreachable: Ansible stops there
"""


def ansibles_ssh_calls(path: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    """Per address: what Ansible's ssh connection passed for it."""
    assert ORACLE is not None
    record, fake = tmp / "calls", tmp / "ssh"
    record.mkdir()
    fake.write_text(RECORDER, encoding="utf-8")
    fake.chmod(0o755)
    env = {**ansible_env(tmp / "home"), "RECORD_TO": str(record),
           "ANSIBLE_SSH_EXECUTABLE": str(fake), "ANSIBLE_TIMEOUT": "5"}
    (tmp / "elsewhere").mkdir(exist_ok=True)
    subprocess.run([str(Path(ORACLE).with_name("ansible")), "all", "-i", str(path), "-m",
                    "ping"], cwd=tmp / "elsewhere", capture_output=True, text=True, env=env,
                   timeout=300, check=False)
    out: dict[str, dict[str, Any]] = {}
    for f in os.listdir(record):
        argv = json.loads((record / f).read_text())
        opts = {a.split("=", 1)[0]: a.split("=", 1)[1].strip('"') for a in argv if "=" in a}
        # Ansible: ... -o ConnectTimeout=5 <common args> <extra args> -o ControlPath=...
        timeout = argv.index("ConnectTimeout=5")
        cp = next(i for i, a in enumerate(argv) if a.startswith("ControlPath="))
        user_args = argv[timeout + 1:cp - 1]
        out[argv[-2]] = {"user": opts.get("User"), "port": int(opts.get("Port", 22)),
                         "key_file": opts.get("IdentityFile"), "ssh_args": user_args}
    return out


@needs_ansible
@pytest.mark.parametrize("case", ["legacy_names", "ssh_args"])
def test_assay_connects_as_ansible_does(case: str, tmp_path: Path) -> None:
    path = write(tmp_path / "project", INVENTORIES[case])
    calls = ansibles_ssh_calls(path, tmp_path)
    hosts = inventory.load(path)
    assert sorted(calls) == sorted(h.address for h in hosts), "not the same addresses"
    for h in hosts:
        assert calls[h.address] == {"user": h.user, "port": h.port, "key_file": h.key_file,
                                    "ssh_args": list(h.ssh_args)}, h.name
        with SshHost(h) as ssh:  # and assay's own command line carries them
            argv = ssh.argv(["true"])
        assert argv[argv.index("--") - len(h.ssh_args):argv.index("--")] == list(h.ssh_args)
        assert f"Port={h.port}" in argv and argv[-2] == h.address
        assert (f"User={h.user}" in argv) == (h.user is not None)
        assert (f"IdentityFile={h.key_file}" in argv) == (h.key_file is not None)
