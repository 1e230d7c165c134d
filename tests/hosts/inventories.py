"""Inventories as Ansible projects keep them, each a set of files (the first is the inventory;
the others are group_vars/ and host_vars/ beside it). test_inventory_ansible.py reads every
one with `ansible-inventory --list` and with assay and compares hosts and variables."""

from __future__ import annotations

INVENTORIES: dict[str, dict[str, str]] = {
    "ini_ranges": {"inventory.ini": """\
[web]
www[1:4].example.com assay_path=/mnt/web
10.77.0.[11:14] assay_path=/mnt/ip
[db]
db[01:10:2] assay_path=/mnt/db
r[a:f]-x assay_path=/mnt/r
s[b:h:3] assay_path=/mnt/s
n[1:2]-[a:b] assay_path=/mnt/n
p[8:10]:2200 assay_path=/mnt/p
[db:vars]
ansible_user=dba
"""},
    "yaml_ranges": {"inventory.yml": """\
all:
  children:
    web:
      hosts:
        'www[1:4].example.com': {assay_path: /mnt/web}
        '10.77.0.[11:14]': {assay_path: /mnt/ip}
    db:
      vars: {ansible_user: dba}
      hosts:
        'db[001:100:33]': {assay_path: /mnt/db}
        'r[A:C]': {assay_path: /mnt/r}
        'p[8:10]:2200': {assay_path: /mnt/p, ansible_user: own}
"""},
    "ini_children": {"inventory.ini": """\
[leaf]
h1 ansible_host=10.0.0.1
h2 ansible_host=10.0.0.2 level=host
[mid:children]
leaf
[top:children]
mid
[top:vars]
level=top
assay_path=/mnt/top
only_top=1
[mid:vars]
level=mid
assay_path=/mnt/mid
[leaf:vars]
level=leaf
[all:vars]
level=all
only_all=yes
[mid]
[top]
"""},
    "ini_same_depth": {"inventory.ini": """\
[zeta]
h1 assay_path=/mnt/z
h2 assay_path=/mnt/z
[alpha]
h1
h2
[mike]
h2
[zeta:vars]
who=zeta
ansible_user=zeta
[alpha:vars]
who=alpha
ansible_user=alpha
extra=alpha
[mike:vars]
who=mike
"""},
    "ini_priority": {"inventory.ini": """\
[alpha]
h1 assay_path=/mnt/a
h2 assay_path=/mnt/a
[zeta]
h1
h2
[alpha:vars]
ansible_group_priority=10
who=alpha
pick=alpha
[zeta:vars]
who=zeta
[kids:children]
inner
[inner]
h2
[inner:vars]
ansible_group_priority=-5
who=inner
[kids:vars]
ansible_group_priority=20
pick=kids
"""},
    "yaml_priority": {"inventory.yml": """\
all:
  vars: {who: all, assay_path: /mnt/all}
  children:
    b_group:
      vars: {who: b, ansible_group_priority: 5}
      hosts: {h1: , h2: }
    a_group:
      vars: {who: a}
      hosts: {h1: , h3: }
    c_group:
      vars: {who: c, ansible_group_priority: 0}
      hosts: {h2: , h3: }
      children:
        deep:
          vars: {who: deep}
          hosts: {h3: {mine: 1}}
"""},
    "ini_vars_dirs": {
        "inventory.ini": """\
[db]
db1 ansible_host=10.0.1.1
db2 ansible_host=10.0.1.2 from=inventory-host
[web]
w1 ansible_host=10.0.2.1
[db:vars]
from=inventory-db
shadowed=inventory-db
[all:vars]
from=inventory-all
""",
        "group_vars/all.yml": "from: group_vars-all\nshadowed: group_vars-all\n"
                              "assay_path: /mnt/all\nansible_user: ops\n",
        "group_vars/db.yaml": "assay_path: /mnt/db\ndb_only: [1, 2]\n",
        "group_vars/web/01-base.yml": "assay_path: /mnt/web\nlayer: base\n",
        "group_vars/web/02-more.json": '{"layer": "more", "json": true}\n',
        "group_vars/web/sub/03": "layer: sub\n",
        "group_vars/web/.hidden.yml": "layer: hidden\n",
        "group_vars/web/notes.txt": "layer: txt\n",
        "group_vars/web/04.yml~": "layer: backup\n",
        "group_vars/web.yml": "layer: file-beside-dir\n",
        "group_vars/empty.yml": "# nothing yet\n",
        "host_vars/db1": "from: host_vars-db1\nansible_port: 2201\n",
        "host_vars/db2.json": '{"ansible_port": 2202}\n',
    },
    "yaml_vars_dirs": {
        "hosts.yaml": """\
all:
  children:
    storage:
      children:
        nvme: {hosts: {s1: , s2: {ansible_host: 10.1.0.2}}}
        sata: {hosts: {s3: }}
""",
        "group_vars/storage.yml": "assay_path: /mnt/storage\nansible_user: stor\n",
        "group_vars/nvme/main.yml": "assay_path: /mnt/nvme\ntier: fast\n",
        "group_vars/nvme/zz.yml": "tier: fastest\nansible_group_priority: 3\n",
        "host_vars/s1.yml": "ansible_host: 10.1.0.1\nassay_device: /dev/nvme1n1\n",
        "host_vars/s3/a.yml": "ansible_host: 10.1.0.3\n",
    },
    "legacy_names": {"inventory.ini": """\
[old]
o1 ansible_ssh_host=10.2.0.1 ansible_ssh_user=legacy ansible_ssh_port=2022
o2 ansible_host=10.2.0.2 ansible_user=new ansible_port=2023
o3 ansible_host=10.2.0.3 ansible_private_key_file=/keys/o3
o4 ansible_host=10.2.0.4 ansible_user=host-level
[old:vars]
assay_path=/mnt/old
[mixed]
o4
[mixed:vars]
ansible_ssh_host=10.2.9.4
ansible_ssh_user=group-legacy
ansible_ssh_private_key_file=/keys/mixed
ansible_private_key_file=/keys/ignored
"""},
    "ssh_args": {"inventory.ini": """\
[behind]
b1 ansible_host=10.3.0.1
b2 ansible_host=10.3.0.2 ansible_ssh_extra_args='-o "ProxyCommand=ssh -W %h:%p -q jump"'
b3 ansible_host=10.3.0.3 ansible_ssh_common_args="-J ops@bastion:2222 -oConnectTimeout=9"
[behind:vars]
ansible_ssh_common_args=-o ProxyJump=ops@bastion -C
assay_path=/mnt/b
"""},
    "ini_value_types": {"inventory.ini": """\
[typed]
t1 assay_path=/mnt/t port_like=2222 list=[1,2] flag=True word=yes quoted="'q'" f=1.5 n=None
t2 assay_path=/mnt/t spaced="a b" dict="{'k': [1, 'v']}" zero=007 neg=-3 dots=...
[typed:vars]
commented = value # not a comment
  padded   =   x
hexa=0x10
expr=1+2
empty=
"""},
    "yaml_shapes": {"inventory.yml": """\
---
all:
  hosts:
    lone: {assay_path: /mnt/lone}
  vars:
    assay_path: /mnt/all
    nested: {a: {b: [1, 2]}}
ungrouped:
  hosts:
    u1:
    both:
grp:
  hosts: both
  vars:
    flag: yes
    when: 2024-01-01x
emptygroup:
"""},
    "ini_ungrouped": {"inventory.ini": """\
first assay_path=/mnt/u
second:2222 assay_path=/mnt/u
[ungrouped:vars]
from=ungrouped
[g]
second
third assay_path=/mnt/g
[g:vars]
from=g
"""},
    "diamond": {"inventory.yml": """\
all:
  children:
    left:
      vars: {side: left, v: left}
      children:
        bottom: {hosts: {h1: {assay_path: /mnt/h1}}}
    right:
      vars: {side: right}
      children:
        mid:
          vars: {v: mid}
          children:
            bottom:
              vars: {v: bottom}
    zzz:
      vars: {v: zzz, side: zzz}
      hosts: {h1: }
"""},
}
