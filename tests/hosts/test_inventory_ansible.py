"""The inventory is Ansible's: every inventory of inventories.py read by `ansible-inventory
--list` (ansible-core, the oracle, run as a subprocess) and by assay gives the same hosts, the
same groups and the same variables; the values assay connects with are those Ansible's ssh
connection takes from them. And what assay refuses that Ansible accepts, it says why."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.hosts import inventory
from assay.hosts.inventory import Host, InventoryError
from tests.hosts.inventories import INVENTORIES

ORACLE = shutil.which("ansible-inventory", path=f"{Path(sys.executable).parent}{os.pathsep}"
                      f"{os.environ.get('PATH', '')}")
needs_ansible = pytest.mark.skipif(
    ORACLE is None, reason="ansible-inventory is not installed (pip install -e '.[dev]' "
                           "installs ansible-core, the oracle these tests compare with)")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root / next(iter(files))


def ansible_env(home: Path) -> dict[str, str]:
    """Ansible run apart from this machine's configuration, failing on what it cannot read
    (by default it warns and lists nothing)."""
    home.mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ANSIBLE_HOME": str(home),
            "ANSIBLE_LOCAL_TEMP": str(home / "tmp"), "ANSIBLE_CONFIG": str(home / "none.cfg"),
            "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
            "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "true", "LC_ALL": "C.UTF-8"}


def oracle(path: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    assert ORACLE is not None
    cwd = tmp / "elsewhere"  # no playbook-adjacent group_vars/: only the inventory's own
    cwd.mkdir(exist_ok=True)
    return subprocess.run([ORACLE, "-i", str(path), "--list"], cwd=cwd, capture_output=True,
                          text=True, env=ansible_env(tmp / "home"), timeout=180, check=False)


def ansible_list(path: Path, tmp: Path) -> dict[str, Any]:
    proc = oracle(path, tmp)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def ansible_hosts(listing: dict[str, Any]) -> dict[str, set[str]]:
    """Every host, and every group it is in (directly or through children), but all and
    ungrouped, as assay names a host's groups."""
    direct: dict[str, set[str]] = {}
    for g, body in listing.items():
        for h in body.get("hosts", []) if g != "_meta" else []:
            direct.setdefault(h, set()).add(g)
    parents: dict[str, set[str]] = {}
    for g, body in listing.items():
        for c in body.get("children", []) if g != "_meta" else []:
            parents.setdefault(c, set()).add(g)

    def up(g: str) -> set[str]:
        return {g}.union(*(up(p) for p in parents.get(g, ())))

    return {h: set().union(*(up(g) for g in gs)) - {"all", "ungrouped"}
            for h, gs in direct.items()}


def last_set(hv: dict[str, Any], *names: str) -> Any:
    """What Ansible's ssh connection takes among a setting's names: the last one set."""
    value = None
    for n in names:
        if hv.get(n) is not None:
            value = hv[n]
    return value


def connection(name: str, hv: dict[str, Any]) -> dict[str, Any]:
    """The SSH connection Ansible makes from a host's variables (its ssh plugin's rules)."""
    port = last_set(hv, "ansible_port", "ansible_ssh_port")
    args = [w for key in ("ansible_ssh_common_args", "ansible_ssh_extra_args")
            for w in shlex.split(hv.get(key) or "")]
    return {"address": last_set(hv, "ansible_host", "ansible_ssh_host") or name,
            "user": last_set(hv, "ansible_user", "ansible_ssh_user"),
            "port": int(port) if port is not None else 22,
            "key_file": last_set(hv, "ansible_private_key_file", "ansible_ssh_private_key_file"),
            "ssh_args": args, "path": hv.get("assay_path"), "device": hv.get("assay_device"),
            "known_hosts": hv.get("assay_known_hosts")}


def assays(h: Host) -> dict[str, Any]:
    return {"address": h.address, "user": h.user, "port": h.port, "key_file": h.key_file,
            "ssh_args": list(h.ssh_args), "path": h.path, "device": h.device,
            "known_hosts": h.known_hosts}


@needs_ansible
@pytest.mark.parametrize("case", sorted(INVENTORIES))
def test_assay_reads_the_inventory_as_ansible_does(case: str, tmp_path: Path) -> None:
    path = write(tmp_path / "project", INVENTORIES[case])
    listing = ansible_list(path, tmp_path)
    want_groups = ansible_hosts(listing)
    hostvars = listing["_meta"]["hostvars"]
    hosts = inventory.load(path)
    got = {h.name: h for h in hosts}
    assert sorted(got) == sorted(want_groups), "not the same hosts"
    assert len(hosts) == len(got), "a host listed twice"
    for name, h in got.items():
        want = hostvars.get(name, {})
        assert h.vars == want, f"{name}: not the same variables"
        assert set(h.groups) == want_groups[name], f"{name}: not the same groups"
        mine, ansibles = assays(h), connection(name, want)
        if ansibles["path"] and ansibles["device"]:  # assay takes the more specific one
            assert (mine["path"], mine["device"]) in ((ansibles["path"], None),
                                                      (None, ansibles["device"]))
            mine["path"], mine["device"] = ansibles["path"], ansibles["device"]
        assert mine == ansibles, f"{name}: not the same connection"


@needs_ansible
def test_the_comparison_sees_what_assay_once_did_wrong(tmp_path: Path) -> None:
    """What the comparison checks is what was wrong: a few answers spelled out, so a
    comparison that compared nothing could not pass."""
    def load(case: str) -> dict[str, Host]:
        root = tmp_path / case
        return {h.name: h for h in inventory.load(write(root, INVENTORIES[case]))}

    ranges = load("ini_ranges")
    assert [n for n in ranges if n.startswith("db")] == ["db01", "db03", "db05", "db07",
                                                        "db09"]
    assert {"10.77.0.11", "10.77.0.14", "rf-x", "sb", "se", "sh", "n2-b"} <= set(ranges)
    assert "sc" not in ranges and ranges["p9"].port == 2200
    same = load("ini_same_depth")
    assert same["h1"].vars["who"] == "zeta" and same["h2"].vars["who"] == "zeta"
    assert same["h1"].user == "zeta"  # the last group by name, not the last in the file
    prio = load("ini_priority")
    assert prio["h1"].vars["who"] == "alpha" and prio["h2"].vars["who"] == "inner"
    assert prio["h2"].vars["pick"] == "kids" and "ansible_group_priority" not in prio["h2"].vars
    dirs = load("ini_vars_dirs")
    assert dirs["db1"].port == 2201 and dirs["db1"].vars["from"] == "host_vars-db1"
    assert dirs["db2"].vars["from"] == "inventory-host" and dirs["db2"].path == "/mnt/db"
    assert dirs["db2"].vars["shadowed"] == "group_vars-all"  # above the inventory's groups
    assert dirs["w1"].vars["layer"] == "sub" and dirs["w1"].user == "ops"
    nvme = load("yaml_vars_dirs")["s1"]  # host_vars/s1.yml's device over its group's path
    assert (nvme.device, nvme.path, nvme.vars["tier"]) == ("/dev/nvme1n1", None, "fastest")
    legacy = load("legacy_names")
    assert (legacy["o1"].address, legacy["o1"].user, legacy["o1"].port) == \
        ("10.2.0.1", "legacy", 2022)
    assert legacy["o3"].key_file == "/keys/o3"
    assert (legacy["o4"].address, legacy["o4"].key_file) == ("10.2.9.4", "/keys/mixed")
    args = load("ssh_args")
    assert args["b1"].ssh_args == ("-o", "ProxyJump=ops@bastion", "-C")
    assert args["b2"].ssh_args == ("-o", "ProxyJump=ops@bastion", "-C", "-o",
                                   "ProxyCommand=ssh -W %h:%p -q jump")


# What Ansible accepts and assay refuses, with the reason, at file:line.
REFUSED = {
    "a template": ("[g]\nh1 ansible_host='{{ lookup(\"env\", \"IP\") }}' assay_path=/m\n",
                   "inv.ini:2: h1.ansible_host: ", "a Jinja2 template; assay does not "
                   "evaluate templates"),
    "a local connection": ("[g]\nlocalhost ansible_connection=local assay_path=/m\n",
                           "inv.ini:2: localhost.ansible_connection: ",
                           "'local': assay reaches hosts over SSH only"),
    "ssh in the background": ("[g]\nh1 assay_path=/m\n[g:vars]\n"
                              "ansible_ssh_common_args=-f -o ProxyJump=b\n",
                              "inv.ini:4: h1.ansible_ssh_common_args: ",
                              "-f would send ssh to the background"),
    "a destination in the args": ("[g]\nh1 assay_path=/m ansible_ssh_extra_args='other'\n",
                                  "inv.ini:2: h1.ansible_ssh_extra_args: ",
                                  "'other' is not an ssh option"),
    "a range with no host": ("[g]\nh[5:1] assay_path=/m\nh9 assay_path=/m\n",
                             "inv.ini:2: h[5:1]: ", "gives no hosts (begin > end)"),
    "a group name with a dot": ("[web.prod]\nh1 assay_path=/m\n", "inv.ini:1: web.prod: ",
                                "a group name is letters, digits, _ and -"),
    "a duplicate YAML key": ("all:\n  hosts:\n    h1: {assay_path: /m, assay_path: /n}\n",
                             "inv.yml:3: all.hosts.h1.assay_path: ", "duplicate key"),
    "an unknown YAML group key": ("all:\n  hosts: {h1: {assay_path: /m}}\n  host: {h2: }\n",
                                  "inv.yml:3: all.host: ", "unknown key (hosts, children, "
                                  "vars)"),
    "an !unsafe value": ("all:\n  hosts:\n    h1: {assay_path: /m, x: !unsafe '{{ a }}'}\n",
                         "inv.yml:3: all.hosts.h1.x: ", "could not determine a constructor "
                         "for the tag '!unsafe'"),
}


@needs_ansible
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_assay_refuses_ansible_accepts_it_says_why(case: str, tmp_path: Path) -> None:
    text, where, why = REFUSED[case]
    path = write(tmp_path, {"inv.yml" if text.startswith("all:") else "inv.ini": text})
    assert oracle(path, tmp_path).returncode == 0, "Ansible accepts it"
    with pytest.raises(InventoryError) as e:
        inventory.load(path)
    assert f"{where}" in str(e.value) and why in str(e.value), str(e.value)
    assert e.value.code == 2


@needs_ansible
def test_a_vaulted_vars_file_is_refused_by_name(tmp_path: Path) -> None:
    path = write(tmp_path, {"inv.ini": "h1 assay_path=/m\n",
                            "group_vars/all.yml": "$ANSIBLE_VAULT;1.1;AES256\n6162\n"})
    with pytest.raises(InventoryError, match=r"group_vars/all.yml:1: encrypted with "
                                             r"ansible-vault: assay does not read vaults"):
        inventory.load(path)


def test_what_both_refuse_assay_refuses_with_file_and_line(tmp_path: Path) -> None:
    cases = {"h[1:] assay_path=/m\n": "inv.ini:1: h[1:]: not a host range Ansible expands: "
                                       "[1:]: the range has no end",
             "h[a:3] assay_path=/m\n": "[a:3]: begin and end are both numbers or both single "
                                       "letters",
             "h[01:100] assay_path=/m\n": "with a leading zero, begin and end have the same "
                                          "width",
             "[g:vars]\nx=1\n": "inv.ini:1: [g:vars]: [g:vars] for a group that is never "
                                "declared",
             "[g:children]\nkid\n[g]\nh1\n": "inv.ini:2: kid: [g:children] names a group "
                                             "that is never declared",
             "h1\n[g:hosts]\n[g:bogus]\n": "inv.ini:3: [g:bogus]: unknown section type"}
    for text, message in cases.items():
        path = write(tmp_path, {"inv.ini": text})
        with pytest.raises(InventoryError) as e:
            inventory.load(path)
        assert message in str(e.value), (text, str(e.value))
        if ORACLE is not None:
            assert oracle(path, tmp_path).returncode != 0, f"Ansible refuses it too: {text}"
