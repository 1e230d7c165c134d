"""Ansible inventories, INI and YAML: hosts, groups, variables in Ansible's order, errors
with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.exitcodes import ExitCode, UserError
from assay.hosts import inventory
from assay.hosts.check import check_host
from assay.hosts.inventory import InventoryError

MINIMAL = ("n1 ansible_host=10.0.0.1 ansible_user=root ansible_port=22 "
           "ansible_ssh_private_key_file=/root/.ssh/id_ed25519 assay_path=/mnt/assay\n")


def test_the_minimal_ini_line() -> None:
    [h] = inventory.parse(MINIMAL, "inv.ini")
    assert (h.name, h.address, h.user, h.port) == ("n1", "10.0.0.1", "root", 22)
    assert h.key_file == "/root/.ssh/id_ed25519"
    assert h.path == h.target == "/mnt/assay" and h.device is None
    assert h.source == "inv.ini:1"


INI = """\
# the fleet
[db]
d1 ansible_host=10.0.0.2 ansible_python_interpreter=/usr/bin/python3
d2 ansible_host=10.0.0.3 assay_path=/mnt/own   # its own target
[web]
w1 ansible_host=10.0.0.4 assay_device=/dev/nvme1n1
[prod:children]
db
web
[prod:vars]
ansible_user=admin
assay_path=/mnt/prod
[db:vars]
assay_path=/mnt/db
ansible_port=2222
[all:vars]
ansible_user=nobody
ansible_ssh_private_key_file="/keys/lab key"
"""


def test_groups_children_and_vars_apply_in_ansibles_order() -> None:
    hosts = {h.name: h for h in inventory.parse(INI, "fleet.ini")}
    d1, d2, w1 = hosts["d1"], hosts["d2"], hosts["w1"]
    assert d1.path == "/mnt/db" and d1.port == 2222 and d1.user == "admin"  # child over parent
    assert d2.path == "/mnt/own"  # the host's own variable wins
    # a host's device wins over its group's path
    assert w1.device == "/dev/nvme1n1" and w1.target == "/dev/nvme1n1" and w1.path is None
    assert w1.port == 22
    assert w1.user == "admin" and w1.key_file == "/keys/lab key"  # all:vars, quoted
    assert d1.groups == ("db", "prod") and w1.groups == ("prod", "web")
    # every variable is kept, as Ansible resolves it; unknown ones are unused
    assert d1.vars == {"ansible_host": "10.0.0.2", "ansible_port": 2222,
                       "ansible_python_interpreter": "/usr/bin/python3",
                       "ansible_ssh_private_key_file": "/keys/lab key",
                       "ansible_user": "admin", "assay_path": "/mnt/db"}
    # what may be recorded: the key's path, never other variables (they may hold secrets)
    assert d1.public()["key_file"] == "/keys/lab key" and "vars" not in d1.public()


YAML = """\
all:
  vars:
    ansible_user: root
    assay_known_hosts: /etc/assay/known_hosts
  hosts:
    n1: {ansible_host: 10.0.0.1, assay_path: /mnt/a}
  children:
    storage:
      vars: {assay_path: /mnt/storage}
      hosts:
        s1: {ansible_port: 2200}
        s2:
"""


def test_yaml_inventory() -> None:
    hosts = {h.name: h for h in inventory.parse(YAML, "inv.yml")}
    assert hosts["n1"].address == "10.0.0.1" and hosts["n1"].path == "/mnt/a"
    assert hosts["s1"].port == 2200 and hosts["s1"].path == "/mnt/storage"
    assert hosts["s2"].address == "s2" and hosts["s2"].groups == ("storage",)
    assert all(h.user == "root" and h.known_hosts == "/etc/assay/known_hosts"
               for h in hosts.values())
    assert hosts["s1"].source == "inv.yml:11"


def test_every_error_names_file_line_and_field() -> None:
    text = ("n1 ansible_port=abc\n"
            "n2 assay_path=relative stray\n"
            "[g]\n"
            "n3 assay_path=/a assay_device=/dev/sdb\n"
            "bad;name ansible_host=10.0.0.9\n")
    with pytest.raises(InventoryError) as e:
        inventory.parse(text, "inv.ini")
    msg = str(e.value)
    assert "inv.ini:1: n1.ansible_port: 'abc' is not a port number" in msg
    assert "inv.ini:2: stray: expected key=value" in msg
    assert "inv.ini:2: n2.assay_path: 'relative' must be an absolute path" in msg
    assert "inv.ini:4: n3.assay_device: give assay_path or assay_device, not both" in msg
    assert "inv.ini:5: bad;name: a host name is" in msg
    assert e.value.code == ExitCode.INVALID_INPUT


def test_yaml_errors_have_lines() -> None:
    with pytest.raises(InventoryError) as e:
        inventory.parse("all:\n  hosts:\n    n1: [1]\n  bogus: 1\n", "inv.yml")
    assert "inv.yml:4: all.bogus: unknown key" in str(e.value)
    assert "inv.yml:3: all.hosts.n1: expected a mapping" in str(e.value)
    with pytest.raises(InventoryError, match="inv.yml:3: YAML syntax"):
        inventory.parse("all:\n  hosts: {n1\n", "inv.yml")


def test_empty_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="no hosts"):
        inventory.parse("# nothing\n[all:vars]\nansible_user=root\n", "inv.ini")
    with pytest.raises(UserError, match="cannot read inventory"):
        inventory.load(tmp_path / "nope.ini")


def test_a_name_that_does_not_resolve_is_an_error_when_checked_not_parsed() -> None:
    [h] = inventory.parse("ghost.invalid assay_path=/mnt/x\n", "inv.ini")
    assert h.address == "ghost.invalid"
    r = check_host(h)
    assert not r.ok and not r.reachable
    assert r.errors == ["ghost.invalid: no ansible_host, and the name does not resolve "
                        "(inv.ini:1)"]


def test_inventory_ssh_args_come_after_assays_own_options() -> None:
    """ssh keeps an option's first value: the inventory's arguments add a bastion but cannot
    turn host key checking off or take over the control socket."""
    from assay.hosts.ssh import SshHost

    [h] = inventory.parse("n1 ansible_host=10.0.0.1 ansible_ssh_common_args='-J ops@jump "
                          "-o StrictHostKeyChecking=no' ansible_ssh_extra_args=-vC\n", "inv.ini")
    assert h.ssh_args == ("-J", "ops@jump", "-o", "StrictHostKeyChecking=no", "-vC")
    with SshHost(h) as ssh:
        argv = ssh.argv(["true"])
    strict = argv.index("StrictHostKeyChecking=yes")
    mine = argv.index("-J")
    assert strict < argv.index("ControlMaster=auto") < mine < argv.index("--")
    assert argv[mine:argv.index("--")] == list(h.ssh_args)
    assert argv[-2:] == ["10.0.0.1", "true"]


def test_ssh_args_that_would_change_how_assay_drives_ssh_are_refused() -> None:
    from assay.hosts.sshargs import split_ssh_args

    assert split_ssh_args("-oProxyJump=b -4 -F cfg -i 'my key'") == [
        "-oProxyJump=b", "-4", "-F", "cfg", "-i", "my key"]
    for text, why in {"-n": "-n would close stdin", "-o": "-o needs a value",
                      "-S /tmp/x": "replace assay's control socket",
                      "-vN": "-N would run no command", "host": "is not an ssh option",
                      "-o 'unclosed": "cannot split"}.items():
        with pytest.raises(ValueError, match=why):
            split_ssh_args(text)


def test_host_ranges() -> None:
    from assay.hosts.hostpattern import RangeError, expand

    assert expand("db[01:10:3].x") == (["db01.x", "db04.x", "db07.x", "db10.x"], None)
    assert expand("h[:2]") == (["h0", "h1", "h2"], None)
    assert expand("[x:Z]")[0][:3] == ["x", "y", "z"] and expand("[x:Z]")[0][-1] == "Z"
    assert expand("h[1:2]:2200") == (["h1", "h2"], 2200)
    assert expand("[fe80::1]:2200") == (["fe80::1"], 2200)
    assert expand("fe80::1") == (["fe80::1"], None)  # no port: a v6 address
    assert expand("-bad:22") == (["-bad:22"], None)  # not a host: the whole is the name
    for bad in ("h[1:2", "h[1:2:0]", "h[1:2:x]", "h[1]", "h[b:a]"):
        with pytest.raises(RangeError):
            expand(bad)


def test_a_name_behind_a_bastion_is_left_to_the_bastion_to_resolve() -> None:
    [h] = inventory.parse("db.internal.invalid assay_path=/mnt/x "
                          "ansible_ssh_common_args='-o ProxyCommand=false'\n", "inv.ini")
    r = check_host(h, connect_timeout=2)
    assert not r.ok and not r.reachable
    [error] = r.errors
    assert "does not resolve" not in error and "cannot connect over SSH" in error, error
