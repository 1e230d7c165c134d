"""Hosts from an Ansible inventory, INI or YAML: the format users already keep, read as
`ansible-inventory --list` reads it (ansible-core 2.19; the tests compare the two).

    n1 ansible_host=10.0.0.1 ansible_user=root ansible_port=22 \
       ansible_ssh_private_key_file=/root/.ssh/id_ed25519 assay_path=/mnt/assay

Parsing (ranges, `host:port`, value types) is in inventory_source.py and hostpattern.py;
`group_vars/` and `host_vars/` beside the file in varsdirs.py. Here the variables of each host
are merged in Ansible's order, each later one winning:

    all's vars in the inventory; every other group of the host in the inventory, sorted by
    (depth, ansible_group_priority, name), so a child wins over its parent and, at one depth,
    the group last by name; group_vars/all; group_vars/<group> in that order; the host's own
    vars in the inventory; host_vars/<host>.

What assay uses, legacy names included (the later name wins when both are set, as in Ansible's
ssh connection): ansible_host|ansible_ssh_host, ansible_user|ansible_ssh_user,
ansible_port|ansible_ssh_port, ansible_private_key_file|ansible_ssh_private_key_file,
ansible_ssh_common_args + ansible_ssh_extra_args (sshargs.py), assay_path or assay_device,
assay_known_hosts. `Host.vars` holds every variable of the host, as Ansible resolves it.

What becomes an address, a user, a port, a path or an ssh argument is checked here, as the
inventory is loaded, so `assay plan`, `assay hosts check` and `assay run` refuse the same
inventories, each issue with file, line and field: ansible_host a host name (RFC 1123 labels,
`_` allowed), an IPv4 or an IPv6 address, bare or in brackets (address_problem);
ansible_user POSIX's portable user name (user_problem); a port 1-65535 (port_number);
assay_path and assay_device absolute paths fio reads as themselves (path_problem); the ssh
arguments as sshargs.py says; no control, bidi or zero-width character in any of them.
Host names: inventory_source.name_problem.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.hosts.hostpattern import MAX_HOSTS
from assay.hosts.inventory_source import At, Raw, Var, invisible, parse_ini, parse_yaml
from assay.hosts.sshargs import split_ssh_args
from assay.hosts.varsdirs import VarsDirs
from assay.scenario.yamlsource import Issue

YAML_TOP = re.compile(r"^[\w.-]+:(\s|$)")
MAX_BYTES = 64 << 20  # an inventory file: 100,000 hosts of 600 characters each
SSH_CONNECTIONS = {"ssh", "smart", "paramiko", "ansible.builtin.ssh",
                   "ansible.builtin.paramiko_ssh", "paramiko_ssh"}


@dataclass(frozen=True)
class Host:
    name: str
    address: str  # ansible_host, or the name itself
    user: str | None = None
    port: int = 22
    key_file: str | None = None  # the path only: the key itself is never read or written
    path: str | None = None  # assay_path
    device: str | None = None  # assay_device
    known_hosts: str | None = None  # assay_known_hosts
    groups: tuple[str, ...] = ()
    vars: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # file:line where the host was declared
    ssh_args: tuple[str, ...] = ()  # ansible_ssh_common_args, then ansible_ssh_extra_args

    @property
    def target(self) -> str | None:
        return self.device or self.path

    def public(self) -> dict[str, Any]:
        """What may be recorded (a run's host list, --json): no secrets, the key's path only."""
        return {"name": self.name, "address": self.address, "user": self.user,
                "port": self.port, "key_file": self.key_file, "path": self.path,
                "device": self.device, "groups": list(self.groups)}


class InventoryError(UserError):
    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("invalid inventory:\n  " + "\n  ".join(str(i) for i in issues))


def load(path: str | Path) -> list[Host]:
    """Read an inventory file (INI or YAML, whichever it is) and the group_vars/ and
    host_vars/ directories beside it; all problems at once."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{p} is a directory: assay reads one inventory file (with the "
                        "group_vars/ and host_vars/ beside it); give that file")
    try:
        if p.stat().st_size > MAX_BYTES:
            raise UserError(f"{p}: more than {MAX_BYTES >> 20} MiB: not an inventory assay "
                            f"reads (at most {MAX_HOSTS:,} hosts)")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read inventory {p}: {e}") from None
    return parse(text, str(p), vars_dir=p.parent)


EXAMPLE = "n1 assay_path=/mnt/assay\nn2 assay_path=/mnt/assay\nn3 assay_path=/mnt/assay\n"


def example() -> list[Host]:
    """Three hosts that exist nowhere, to show what a cluster scenario would run (never
    contacted: `assay plan` only)."""
    return parse(EXAMPLE, "example inventory")


def parse(text: str, file: str = "<inventory>", vars_dir: Path | None = None) -> list[Host]:
    """`vars_dir`: where group_vars/ and host_vars/ are (the inventory's directory)."""
    raw = parse_yaml(text, file) if looks_yaml(text) else parse_ini(text, file)
    if raw.full:  # over the bounds: nothing more is read
        raise InventoryError(raw.issues)
    dirs = VarsDirs(vars_dir)
    hosts = _resolve(raw, dirs)
    issues = raw.issues + dirs.issues
    if issues:
        raise InventoryError(issues)
    if not hosts:
        raise InventoryError([Issue(file, None, "", "no hosts in this inventory")])
    return hosts


def looks_yaml(text: str) -> bool:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith(("#", ";")):
            return s == "---" or s.startswith("{") or bool(YAML_TOP.match(s))
    return False


def _depths(raw: Raw) -> dict[str, int]:
    """Each group's depth below `all` (the longest way down), as Ansible counts it; a group
    with no parent is a child of `all`."""
    parents: dict[str, list[str]] = {g: [] for g in raw.groups}
    for g, grp in raw.groups.items():
        for c in grp.children:
            parents[c].append(g)
    for g, ps in parents.items():
        if g != "all" and not ps:
            ps.append("all")
            raw.groups["all"].children.append(g)
    depth: dict[str, int] = {}

    def down(g: str, d: int, path: tuple[str, ...]) -> None:
        if g in path:
            raw.issues.append(raw.groups[g].at.issue(g, "the group is its own ancestor "
                                                     f"({' > '.join((*path, g))})"))
            return
        if depth.get(g, -1) >= d:
            return
        depth[g] = d
        for c in raw.groups[g].children:
            down(c, d + 1, (*path, g))

    down("all", 0, ())
    lost = [g for g in raw.groups if g not in depth]  # in a loop no other group leads to
    if lost:
        raw.issues.append(raw.groups[lost[0]].at.issue(lost[0], "the group is its own "
                                                       "ancestor"))
    return depth


def _ancestors(raw: Raw, g: str) -> set[str]:
    out, todo = set(), [p for p, grp in raw.groups.items() if g in grp.children]
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo += [q for q, grp in raw.groups.items() if p in grp.children]
    return out


def _resolve(raw: Raw, dirs: VarsDirs) -> list[Host]:
    depth = _depths(raw)
    if set(depth) != set(raw.groups):
        return []
    direct: dict[str, set[str]] = {h: set() for h in raw.hosts}
    for g, grp in raw.groups.items():
        for h in grp.hosts:
            direct[h].add(g)
    ancestors = {g: _ancestors(raw, g) for g in raw.groups}
    hosts = []
    for name, at in raw.hosts.items():
        mine = direct[name] - {"all"}
        if len(mine) > 1:  # Ansible: `ungrouped` holds only hosts in no other group
            mine.discard("ungrouped")
        mine = mine or {"ungrouped"}
        groups = set(mine).union(*(ancestors[g] for g in mine)) - {"all"}
        order = sorted(groups, key=lambda g: (depth[g], raw.groups[g].priority, g))
        layers: list[dict[str, Var]] = [
            raw.groups["all"].vars, *(raw.groups[g].vars for g in order),
            dirs.group("all"), *(dirs.group(g) for g in order),
            raw.hostvars.get(name, {}), dirs.host(name)]
        merged: dict[str, Var] = {}
        level: dict[str, int] = {}  # the layer that set each variable: how specific it is
        for i, layer in enumerate(layers):
            merged.update(layer)
            level.update(dict.fromkeys(layer, i))
        target = dict(merged)  # a host's device wins over its group's path, and so on
        if "assay_path" in merged and "assay_device" in merged and \
                level["assay_path"] != level["assay_device"]:
            del target[min(("assay_path", "assay_device"), key=level.__getitem__)]
        host = _host(raw, name, at, target, tuple(sorted(groups - {"ungrouped"})),
                     {k: val for k, (val, _) in merged.items()})
        if host is not None:
            hosts.append(host)
    return hosts


def _pick(v: dict[str, Var], *names: str) -> tuple[str, Any, At] | None:
    """The variable that sets one thing among its names: the last name set (not null)."""
    found = None
    for n in names:
        if n in v and v[n][0] is not None:
            found = (n, *v[n])
    return found


def _host(raw: Raw, name: str, at: At, v: dict[str, Var], groups: tuple[str, ...],
          every: dict[str, Any]) -> Host | None:
    issues: list[Issue] = []
    refused: set[str] = set()  # a variable with one issue already: not a second one

    def refuse(key: str, message: str) -> None:
        refused.add(key)
        issues.append((v[key][1] if key in v else at).issue(f"{name}.{key}" if key else name,
                                                            message))

    said: dict[tuple[str, ...], str | None] = {}

    def text(*names: str) -> str | None:
        if names not in said:
            said[names] = _text(*names)
        return said[names]

    def _text(*names: str) -> str | None:
        got = _pick(v, *names)
        if got is None or got[1] == "":
            return None
        key, value, _ = got
        if ("{{" in str(value) or "{%" in str(value)) and key not in refused:
            refuse(key, f"{value!r} is a Jinja2 template; assay does not evaluate templates: "
                   "give the value itself")
        return str(value)

    def chosen(*names: str) -> str:
        got = _pick(v, *names)
        return got[0] if got is not None else names[0]

    for key in PASSED_ON:  # what becomes a path, an address, a user or an ssh argument
        value = text(key)
        if value is not None and key not in refused and (why := invisible(value)):
            refuse(key, f"{value!r} {why}: not allowed")
    port = 22
    got = _pick(v, "ansible_port", "ansible_ssh_port")
    if got is not None:
        key, value, _ = got
        if (number := port_number(value)) is None:
            refuse(key, f"{value!r} is not a port number (1-65535)")
        else:
            port = number
    for key in ("assay_path", "assay_device"):
        value = text(key)
        if value is not None and key not in refused and (why := path_problem(value)):
            refuse(key, why)
    if text("assay_path") and text("assay_device"):
        issues.append(v["assay_device"][1].issue(f"{name}.assay_device",
                                                 "give assay_path or assay_device, not both"))
    host_key = chosen("ansible_host", "ansible_ssh_host")
    given = text("ansible_host", "ansible_ssh_host")
    address = name
    if host_key not in refused:
        shown = given if given is not None else name
        normal, why = address_problem(shown)
        if why is None:
            address = normal
        elif given is not None:
            refuse(host_key, why)
        else:
            refuse("", f"{why}; the name is the address when there is no ansible_host: "
                   "give ansible_host")
    user_key = chosen("ansible_user", "ansible_ssh_user")
    user = text("ansible_user", "ansible_ssh_user")
    if user is not None and user_key not in refused and (why := user_problem(user)):
        refuse(user_key, why)
    connection = _pick(v, "ansible_connection")
    if connection is not None and str(connection[1]) not in SSH_CONNECTIONS:
        issues.append(connection[2].issue(f"{name}.ansible_connection",
                                          f"{connection[1]!r}: assay reaches hosts over "
                                          "SSH only"))
    ssh_args: list[str] = []
    for key in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        value = text(key)
        if value and key not in refused:
            try:
                ssh_args += split_ssh_args(value)
            except ValueError as e:
                refuse(key, str(e))
    raw.issues += issues
    if issues:
        return None
    return Host(name=name, address=address, user=user,
                port=port, path=text("assay_path"), device=text("assay_device"),
                key_file=text("ansible_private_key_file", "ansible_ssh_private_key_file"),
                known_hosts=text("assay_known_hosts"), groups=groups,
                vars=every, source=f"{at.file}:{at.line}",
                ssh_args=tuple(ssh_args))


# -- the rules: each says why a value cannot be used, or None ----------------------------------

PASSED_ON = ("ansible_host", "ansible_ssh_host", "ansible_user", "ansible_ssh_user",
             "ansible_private_key_file", "ansible_ssh_private_key_file", "assay_known_hosts",
             "assay_path", "assay_device", "ansible_ssh_common_args", "ansible_ssh_extra_args",
             "assay_fio", "ansible_python_interpreter")
LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")
DOTTED_NUMBERS = re.compile(r"^[0-9.]+$")
SCOPE = re.compile(r"^[A-Za-z0-9_.-]+$")  # an IPv6 zone (`%eth0`): an interface's name
USER = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]*$")
USER_MAX = 64
ADDRESS_RULE = ("a host name (labels of letters, digits, '-' and '_', 1 to 63 long, joined "
                "by '.', at most 253 in all), an IPv4 address or an IPv6 address (bare or "
                "in [brackets])")
# fio substitutes these in any value, after its variables: a path holding one is not the path
FIO_KEYWORDS = ("${", "$pagesize", "$mb_memory", "$ncpus")


def address_problem(text: str) -> tuple[str, str | None]:
    """(the address as ssh takes it, why it is not one or None): an IPv6 address loses its
    brackets."""
    bad = (text, f"{text!r} is not a host address: {ADDRESS_RULE}")
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else None
    if inner is not None or ":" in text:
        v6 = inner if inner is not None else text
        addr, _, zone = v6.partition("%")
        try:
            ipaddress.IPv6Address(addr)
        except ValueError:
            return bad
        if "%" in v6 and not SCOPE.match(zone):
            return bad
        return v6, None
    if DOTTED_NUMBERS.match(text):  # numbers only: an IPv4 address or nothing
        try:
            ipaddress.IPv4Address(text)
        except ValueError:
            return bad
        return text, None
    labels = text[:-1] if text.endswith(".") else text  # a trailing dot: a full name
    if len(labels) > 253 or not all(LABEL.match(x) for x in labels.split(".")):
        return bad
    return text, None


def user_problem(user: str) -> str | None:
    """POSIX's portable user name: letters, digits, '.', '_' and '-', not first."""
    if USER.match(user) and len(user) <= USER_MAX:
        return None
    return (f"{user!r} is not a user name: letters, digits, '.', '_' and '-' (not first), "
            f"at most {USER_MAX}")


def port_number(value: Any) -> int | None:
    """A port, 1-65535: a whole number, or its digits (ASCII) as text."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, str):
        if not value.strip().isascii() or not value.strip().isdigit():
            return None
        value = int(value.strip())
    return value if 0 < value < 65536 else None


def fio_path_problem(text: str) -> str | None:
    """Why fio cannot use `text` as a target path, or None: it would read it as something
    else. The one rule for a host's target and the scenario's own (plan/model.py)."""
    if any(unicodedata.category(c) == "Cc" for c in text) or \
            any(k in text for k in FIO_KEYWORDS):
        return (f"fio cannot use the target path {text!r}: control characters, `${{`, "
                f"$ncpus, $pagesize and $mb_memory are read as something else; choose "
                f"another path")
    return None


def path_problem(text: str) -> str | None:
    """Why a target path (assay_path, assay_device) cannot be used: not absolute, or fio
    would read it as something else. `assay plan`, `assay hosts check` and `assay run` read
    the inventory through here: what one refuses, all refuse."""
    if not text.startswith("/"):
        return f"{text!r} must be an absolute path"
    return fio_path_problem(text)
