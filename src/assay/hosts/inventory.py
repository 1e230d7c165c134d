"""Hosts from an Ansible inventory, INI or YAML: the format users already keep.

    n1 ansible_host=10.0.0.1 ansible_user=root ansible_port=22 \
       ansible_ssh_private_key_file=/root/.ssh/id_ed25519 assay_path=/mnt/assay

INI: `[group]` host lines, `[group:vars]`, `[group:children]`, `[all:vars]`; YAML:
`all: {hosts: {...}, children: {...}, vars: {...}}`. Variables apply in Ansible's order
(all, then groups from parent to child, then the host's own). What assay uses:

    ansible_host  ansible_user  ansible_port  ansible_ssh_private_key_file
    assay_path (a directory target) or assay_device (a raw block device)
    assay_known_hosts (a known_hosts file for this host: labs)

Every other variable is kept in `Host.vars`, unused. A host with no `ansible_host` is reached
by its name; whether that resolves is checked when the host is used, not here.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.exitcodes import UserError
from assay.scenario.messages import control
from assay.scenario.yamlsource import Issue, ScenarioInvalid, load_yaml

NAME = re.compile(r"^[A-Za-z0-9_.\[\]:-]+$")
GROUP = re.compile(r"^[A-Za-z0-9_-]+$")
YAML_TOP = re.compile(r"^[\w.-]+:(\s|$)")
SECTION = re.compile(r"^\[([^\]:]+)(?::(vars|children))?\]\s*$")


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


@dataclass
class _Group:
    hosts: dict[str, int] = field(default_factory=dict)  # host -> line
    vars: dict[str, tuple[Any, int]] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class _Raw:
    file: str
    groups: dict[str, _Group] = field(default_factory=dict)
    hostvars: dict[str, dict[str, tuple[Any, int]]] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)

    def group(self, name: str, line: int) -> _Group:
        if name not in self.groups:
            if not GROUP.match(name):
                self.issues.append(Issue(self.file, line, name, "a group name is letters, "
                                         "digits, _ and -"))
            self.groups[name] = _Group(line=line)
        return self.groups[name]

    def add_host(self, group: str, name: str, line: int, hvars: dict[str, Any]) -> None:
        if not NAME.match(name):
            self.issues.append(Issue(self.file, line, name, "a host name is letters, digits "
                                     "and . _ - : [ ] (no spaces or shell characters)"))
            return
        self.group(group, line).hosts.setdefault(name, line)
        self.hostvars.setdefault(name, {}).update({k: (v, line) for k, v in hvars.items()})


def load(path: str | Path) -> list[Host]:
    """Read an inventory file (INI or YAML, whichever it is); all problems at once."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read inventory {p}: {e}") from None
    return parse(text, str(p))


EXAMPLE = "n1 assay_path=/mnt/assay\nn2 assay_path=/mnt/assay\nn3 assay_path=/mnt/assay\n"


def example() -> list[Host]:
    """Three hosts that exist nowhere, to show what a cluster scenario would run (never
    contacted: `assay plan` only)."""
    return parse(EXAMPLE, "example inventory")


def parse(text: str, file: str = "<inventory>") -> list[Host]:
    raw = _parse_yaml(text, file) if _looks_yaml(text) else _parse_ini(text, file)
    hosts = _resolve(raw)
    if raw.issues:
        raise InventoryError(raw.issues)
    if not hosts:
        raise InventoryError([Issue(file, None, "", "no hosts in this inventory")])
    return hosts


def _looks_yaml(text: str) -> bool:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith(("#", ";")):
            return s == "---" or bool(YAML_TOP.match(s))
    return False


def _parse_ini(text: str, file: str) -> _Raw:
    raw = _Raw(file)
    section, kind = "ungrouped", "hosts"
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith(("#", ";")):
            continue
        m = SECTION.match(s)
        if m:
            section, kind = m.group(1).strip(), m.group(2) or "hosts"
            raw.group(section, n)
            continue
        try:
            words = shlex.split(s, comments=True)
        except ValueError as e:
            raw.issues.append(Issue(file, n, "", f"cannot split the line: {e}"))
            continue
        if not words:
            continue
        if kind == "children":
            raw.group(section, n).children.append(words[0])
            raw.group(words[0], n)
            continue
        pairs, bad = _pairs(words if kind == "vars" else words[1:])
        for word in bad:
            raw.issues.append(Issue(file, n, word, "expected key=value"))
        if kind == "vars":
            raw.group(section, n).vars.update({k: (v, n) for k, v in pairs.items()})
        else:
            raw.add_host(section, words[0], n, pairs)
    return raw


def _pairs(words: list[str]) -> tuple[dict[str, str], list[str]]:
    out, bad = {}, []
    for w in words:
        key, eq, value = w.partition("=")
        if not eq or not key:
            bad.append(w)
        else:
            out[key] = value
    return out, bad


def _parse_yaml(text: str, file: str) -> _Raw:
    raw = _Raw(file)
    try:
        src = load_yaml(text, file)
    except ScenarioInvalid as e:
        raw.issues.extend(e.issues)
        return raw
    if not isinstance(src.data, dict):
        raw.issues.append(Issue(file, 1, "", "a YAML inventory is a mapping of groups "
                                "(all: {hosts: ..., children: ..., vars: ...})"))
        return raw

    def walk(name: str, body: Any, path: tuple[str | int, ...]) -> None:
        line = src.line_of(path) or 0
        grp = raw.group(name, line)
        if body is None:
            return
        if not isinstance(body, dict):
            raw.issues.append(src.issue(path, "a group is a mapping of hosts, children, vars"))
            return
        for key in body:
            if key not in ("hosts", "children", "vars"):
                raw.issues.append(src.issue((*path, key), "unknown key (hosts, children, "
                                            "vars)"))
        for key, value in _mapping(body.get("vars"), (*path, "vars"), src, raw).items():
            grp.vars[str(key)] = (value, src.line_of((*path, "vars", key)) or line)
        hosts = _mapping(body.get("hosts"), (*path, "hosts"), src, raw)
        for host, hv in hosts.items():
            hpath = (*path, "hosts", host)
            hvars = _mapping(hv, hpath, src, raw)
            raw.add_host(name, str(host), src.line_of(hpath) or line, hvars)
        for child, cbody in _mapping(body.get("children"), (*path, "children"), src,
                                     raw).items():
            grp.children.append(str(child))
            walk(str(child), cbody, (*path, "children", child))

    for top, body in src.data.items():
        walk(str(top), body, (top,))
    return raw


def _mapping(value: Any, path: tuple[str | int, ...], src: Any, raw: _Raw) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raw.issues.append(src.issue(path, "expected a mapping"))
        return {}
    return value


def _ancestry(raw: _Raw) -> dict[str, list[str]]:
    """Each group's ancestors from the root down, itself last (`all` first)."""
    parents: dict[str, list[str]] = {}
    for g, grp in raw.groups.items():
        for c in grp.children:
            parents.setdefault(c, []).append(g)

    def chain(g: str, seen: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for p in parents.get(g, []):
            if p not in seen:
                out += [x for x in chain(p, (*seen, g)) if x not in out]
        return [*out, g]

    return {g: chain(g, ()) for g in raw.groups}


def _resolve(raw: _Raw) -> list[Host]:
    anc = _ancestry(raw)
    member: dict[str, list[str]] = {}
    for g, grp in raw.groups.items():
        for h in grp.hosts:
            member.setdefault(h, []).append(g)
    hosts = []
    for name, groups in member.items():
        order = ["all"] + [x for g in groups for x in anc[g] if x != "all"]
        merged: dict[str, tuple[Any, int]] = {}
        level: dict[str, int] = {}  # how specific the level that set each variable is
        seen: set[str] = set()
        for depth, g in enumerate(order):
            if g in raw.groups and g not in seen:
                seen.add(g)
                merged.update(raw.groups[g].vars)
                level.update(dict.fromkeys(raw.groups[g].vars, depth))
        merged.update(raw.hostvars.get(name, {}))
        level.update(dict.fromkeys(raw.hostvars.get(name, {}), len(order)))
        if "assay_path" in merged and "assay_device" in merged and \
                level["assay_path"] != level["assay_device"]:  # the more specific one wins
            del merged[min(("assay_path", "assay_device"), key=level.__getitem__)]
        line = min(raw.groups[g].hosts[name] for g in groups)
        host = _host(raw, name, line, merged,
                     tuple(sorted({x for g in groups for x in anc[g]} - {"all", "ungrouped"})))
        if host is not None:
            hosts.append(host)
    return hosts


def _host(raw: _Raw, name: str, line: int, v: dict[str, tuple[Any, int]],
          groups: tuple[str, ...]) -> Host | None:
    def text(key: str) -> str | None:
        value = v.get(key, (None, 0))[0]
        return None if value is None or value == "" else str(value)

    ok = True
    port = 22
    if "ansible_port" in v:
        value, at = v["ansible_port"]
        try:
            port = int(value)
            if not 0 < port < 65536:
                raise ValueError
        except (TypeError, ValueError):
            raw.issues.append(Issue(raw.file, at, f"{name}.ansible_port",
                                    f"{value!r} is not a port number (1-65535)"))
            ok = False
    for key in ("assay_path", "assay_device"):
        value = text(key)
        if value is not None and not value.startswith("/"):
            raw.issues.append(Issue(raw.file, v[key][1], f"{name}.{key}",
                                    f"{value!r} must be an absolute path"))
            ok = False
    if text("assay_path") and text("assay_device"):
        raw.issues.append(Issue(raw.file, v["assay_device"][1], f"{name}.assay_device",
                                "give assay_path or assay_device, not both"))
        ok = False
    address = text("ansible_host") or name
    named = [("", name), ("ansible_host", address),
             *((k, text(k)) for k in ("ansible_user", "assay_path", "assay_device"))]
    for key, value in named:
        if value is not None and (bad := control(value)):  # an escape sequence in a listing
            raw.issues.append(Issue(raw.file, v[key][1] if key in v else line,
                                    f"{name}.{key}" if key else name,
                                    f"{value!r} holds the control character {bad!r}: not "
                                    f"allowed"))
            ok = False
    if address.startswith("-"):
        raw.issues.append(Issue(raw.file, line, f"{name}.ansible_host",
                                f"{address!r} is not a host address"))
        ok = False
    if not ok:
        return None
    used = {"ansible_host", "ansible_user", "ansible_port", "ansible_ssh_private_key_file",
            "assay_path", "assay_device", "assay_known_hosts"}
    return Host(name=name, address=address, user=text("ansible_user"), port=port,
                key_file=text("ansible_ssh_private_key_file"), path=text("assay_path"),
                device=text("assay_device"), known_hosts=text("assay_known_hosts"),
                groups=groups, vars={k: val for k, (val, _) in v.items() if k not in used},
                source=f"{raw.file}:{line}")
