"""Random Ansible projects (seeded): groups nested at random depths, hosts in several of them,
priorities, one variable set at many levels and group_vars/ and host_vars/ files, read by
`ansible-inventory --list` and by assay: every host's variables must be the same, which only
holds if assay merges in Ansible's order at every level."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from assay.hosts import inventory
from tests.hosts.test_inventory_ansible import ansible_hosts, ansible_list, needs_ansible, write


def project(seed: int, yaml: bool) -> dict[str, str]:
    rnd = random.Random(seed)
    groups = [f"{rnd.choice('abcxyz')}{i}" for i in range(10)]
    children = {g: [c for c in groups[i + 1:] if rnd.random() < 0.2]
                for i, g in enumerate(groups)}
    members = {f"h{i:02d}": rnd.sample(groups, rnd.randint(1, 4)) for i in range(24)}
    gvars = {g: {f"v{k}": f"{g}" for k in range(5) if rnd.random() < 0.5} for g in groups}
    for g in groups:
        if rnd.random() < 0.4:
            gvars[g]["ansible_group_priority"] = str(rnd.randint(-2, 3))
    hvars = {h: {f"v{k}": h for k in range(5) if rnd.random() < 0.15} for h in members}
    files: dict[str, str] = {}
    if yaml:
        lines = ["all:", "  vars: {v0: all, v1: all, assay_path: /mnt/all}", "  children:"]
        for g in groups:
            lines.append(f"    {g}:")
            if gvars[g]:
                lines.append("      vars: {" + ", ".join(f"{k}: {v}" for k, v in
                                                          gvars[g].items()) + "}")
            hosts = [h for h, gs in members.items() if g in gs]
            if hosts:
                lines.append("      hosts: {" + ", ".join(
                    f"{h}: {{{', '.join(f'{k}: {v}' for k, v in hvars[h].items())}}}"
                    for h in hosts) + "}")
            if children[g]:
                lines.append("      children: {" + ", ".join(f"{c}: " for c in children[g])
                             + "}")
        files["inventory.yml"] = "\n".join(lines) + "\n"
    else:
        lines = ["[all:vars]", "v0=all", "v1=all", "assay_path=/mnt/all"]
        for g in groups:
            lines.append(f"[{g}]")
            lines += [f"{h} " + " ".join(f"{k}={v}" for k, v in hvars[h].items())
                      for h, gs in members.items() if g in gs]
            lines += [f"[{g}:vars]", *(f"{k}={v}" for k, v in gvars[g].items())]
            if children[g]:
                lines += [f"[{g}:children]", *children[g]]
        files["inventory.ini"] = "\n".join(lines) + "\n"
    for g in [*rnd.sample(groups, 4), "all"]:
        files[f"group_vars/{g}.yml"] = f"v2: gv-{g}\nv3: gv-{g}\n"
    for h in rnd.sample(sorted(members), 4):
        files[f"host_vars/{h}"] = f"v3: hv-{h}\n"
    return files


@needs_ansible
@pytest.mark.parametrize("seed,yaml", [(1, False), (2, False), (3, True), (4, True)])
def test_random_projects_merge_as_ansible_merges(seed: int, yaml: bool, tmp_path: Path) -> None:
    path = write(tmp_path / "project", project(seed, yaml))
    listing = ansible_list(path, tmp_path)
    groups = ansible_hosts(listing)
    got = {h.name: h for h in inventory.load(path)}
    assert sorted(got) == sorted(groups)
    differ = {name: (h.vars, listing["_meta"]["hostvars"].get(name)) for name, h in got.items()
              if h.vars != listing["_meta"]["hostvars"].get(name, {})}
    assert differ == {}
    assert all(set(h.groups) == groups[name] for name, h in got.items())
    # the variables came from many levels, so the order was put to the test
    sources = {v for h in got.values() for k, v in h.vars.items() if k.startswith("v")}
    assert len(sources) > 15
