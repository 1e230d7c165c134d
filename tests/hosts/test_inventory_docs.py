"""docs/hosts.md's inventories are read as it says: its INI and YAML examples give the same
hosts and variables, in assay and in Ansible, and its bastion snippet becomes ssh arguments."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.hosts import inventory
from tests.hosts.test_inventory_ansible import ORACLE, ansible_list, write

DOC = (Path(__file__).parents[2] / "docs" / "hosts.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(ini|yaml)\n(.*?)```", DOC, re.S)
INI = [text for kind, text in BLOCKS if kind == "ini"]
YAML = [text for kind, text in BLOCKS if kind == "yaml" and text.startswith("all:")]


def test_the_ini_and_yaml_examples_are_one_inventory(tmp_path: Path) -> None:
    [one_line, ini, bastion] = INI
    [yml] = YAML
    [n1] = inventory.load(write(tmp_path / "a", {"inv.ini": one_line}))
    assert (n1.address, n1.port, n1.path) == ("10.0.0.1", 22, "/mnt/assay")
    from_ini = {h.name: h for h in inventory.load(write(tmp_path / "b", {"inv.ini": ini}))}
    from_yaml = {h.name: h for h in inventory.load(write(tmp_path / "c", {"inv.yml": yml}))}
    assert list(from_ini) == ["db01", "db02", "db03", "db04", "db-spare", "10.0.1.11",
                              "10.0.1.12", "10.0.1.13", "10.0.1.14"]
    assert sorted(from_ini) == sorted(from_yaml)
    for name, h in from_ini.items():
        assert h.vars == from_yaml[name].vars and h.groups == from_yaml[name].groups
    assert from_ini["db01"].user == "dba" and from_ini["10.0.1.12"].user == "root"
    assert from_ini["db-spare"].device == "/dev/nvme1n1" and from_ini["db-spare"].path is None
    assert from_ini["db03"].path == "/mnt/pool/assay"
    if ORACLE is None:
        pytest.skip("ansible-inventory is not installed: compared with assay only")
    for name, text in (("d/inv.ini", ini), ("e/inv.yml", yml)):
        listing = ansible_list(write(tmp_path, {name: text}), tmp_path)
        assert {h: from_ini[h].vars for h in from_ini} == listing["_meta"]["hostvars"]


def test_the_bastion_snippet_becomes_ssh_arguments(tmp_path: Path) -> None:
    bastion = INI[2]
    text = f"[behind_bastion]\nh1 assay_path=/mnt/a\n{bastion}"
    [h] = inventory.load(write(tmp_path, {"inv.ini": text}))
    assert h.ssh_args == ("-J", "ops@bastion.example.com")
    other = re.search(r"# or: (.*)", bastion)
    assert other is not None
    [h] = inventory.load(write(tmp_path, {"inv.ini": text.replace(other.group(0), "")
                                          .replace("-J ops@bastion.example.com",
                                                   other.group(1).split("=", 1)[1])}))
    assert h.ssh_args == ("-o", "ProxyCommand=ssh -W %h:%p -q ops@bastion")
