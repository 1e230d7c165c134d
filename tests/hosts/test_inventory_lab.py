"""An Ansible project's inventory end to end: `assay plan` shows each host of a range, and
`assay hosts check` reaches a real lab cluster whose variables live in group_vars/ and
host_vars/, two of its hosts through a bastion given in ansible_ssh_common_args."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from assay.platforms.labcluster import Cluster
from tests.conftest import assay_in_process
from tests.sshlab import cluster, needs_netns  # noqa: F401


def assay(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    # in this process (tests/conftest.py): plan and hosts check, never signalled
    return assay_in_process(*args)


def test_plan_shows_every_host_of_a_range(tmp_path: Path) -> None:
    inv = tmp_path / "inventory.ini"
    inv.write_text("[db]\ndb[01:05:2] assay_path=/mnt/db\n10.77.0.[11:12] assay_path=/mnt/ip\n"
                   "[web]\nw[a:b] assay_path=/mnt/w\n", encoding="utf-8")
    r = assay("plan", "oltp-cluster", "--hosts", str(inv))
    assert r.returncode == 0, r.stdout + r.stderr
    names = ["db01", "db03", "db05", "10.77.0.11", "10.77.0.12", "wa", "wb"]
    assert "hosts: 7, started together" in r.stdout
    for name in names:  # a line per host, and its own job file
        assert any(line.split()[:2] == [name, "db"] for line in r.stdout.splitlines()), name
        assert f"fio job file: hosts/{name}/run.fio" in r.stdout
    assert "[" not in "".join(line.split()[0] for line in r.stdout.splitlines()
                              if line.startswith("  ") and " db x1 " in line)
    inv.write_text("[db]\nh[1:4] assay_path=/mnt/db\nx[01:100] assay_path=/mnt/db\n")
    r = assay("plan", "oltp-cluster", "--hosts", str(inv))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{inv}:3: x[01:100]: not a host range Ansible expands" in r.stderr


@needs_netns
def test_hosts_check_with_the_variables_in_vars_directories(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    n1, n2, n3 = cluster.hosts
    marks = tmp_path / "bastion.log"  # the proxy notes each host it carries
    proxy = (f"sh -c 'echo %h >> {marks}; exec ssh -i {cluster.key} -o BatchMode=yes "
             f"-o StrictHostKeyChecking=yes -o UserKnownHostsFile={cluster.known_hosts} "
             f"-W %h:%p root@{n1.address}'")
    common = f'-o "ProxyCommand={proxy}"'  # split like a shell: -o, then the rest
    files = {
        "inventory.ini": "[lab]\nn[1:3]\n[behind]\nn[2:3]\n",
        "group_vars/all.yml": f"ansible_user: root\nansible_ssh_private_key_file: {cluster.key}\n"
                              f"assay_known_hosts: {cluster.known_hosts}\n",
        "group_vars/behind/bastion.yml":  # a JSON string is a YAML string
            f"ansible_ssh_common_args: {json.dumps(common)}\n",
        "host_vars/n1.yml": f"ansible_ssh_host: {n1.address}\nassay_path: {n1.path}\n",
        "host_vars/n2/address.yml": f"ansible_host: {n2.address}\n",
        "host_vars/n2/target.yaml": f"assay_path: {n2.path}\n",
        "host_vars/n3": f"ansible_host: {n3.address}\nassay_path: {n3.path}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    r = assay("hosts", "check", "--hosts", str(tmp_path / "inventory.ini"), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] and [h["host"]["name"] for h in doc["hosts"]] == ["n1", "n2", "n3"]
    for h, made in zip(doc["hosts"], cluster.hosts, strict=True):
        assert h["ok"] and h["errors"] == [], h
        assert h["host"]["address"] == made.address and h["host"]["user"] == "root"
        assert h["target"] == made.path and h["free_bytes"] > 0
        assert h["fio"].startswith("fio-3.")
    assert sorted(marks.read_text().split()) == sorted([n2.address, n3.address])
