"""An inventory file read into groups, hosts and variables, as Ansible's `ini` and `yaml`
inventory plugins read it (ansible-core 2.19); nothing is merged here (inventory.py does).

INI: host lines `PATTERN [key=value ...]` (shlex words) under `[group]`, `[group:vars]`
lines `key = value` (the rest of the line), `[group:children]` lines naming groups; hosts
before any section are `ungrouped`. A value is a Python literal when it reads as one
(`2222`, `[1, 2]`, `'quoted'`), else the text, as Ansible's ast.literal_eval gives it.
YAML: groups at the top, each `{hosts, children, vars}`. Host patterns expand (hostpattern).
`ansible_group_priority` in a group's inventory vars is the group's priority, not a variable.

A host's name becomes a directory of the run (`hosts/NAME/`), a `host_vars/NAME` lookup and,
without ansible_host, the address ssh is given: it is letters, digits and `. _ - :`, never
`.` or `..`, never starting with `-`, at most NAME_MAX characters (name_problem says which
character is wrong). At most MAX_HOSTS hosts, and MAX_ENTRIES host entries over all groups
(a host in three groups counts three times), each pattern counted before it is expanded.
Everything an issue shows is shown visibly: control, bidi and zero-width characters escaped.
"""

from __future__ import annotations

import ast
import re
import shlex
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from assay.hosts.hostpattern import MAX_HOSTS, RangeError, TooManyHosts, expand, size
from assay.scenario.yamlsource import Issue, ScenarioInvalid, YamlSource, load_yaml

NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")
GROUP = re.compile(r"^[A-Za-z0-9_-]+$")
SECTION = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$")
CHILD = re.compile(r"^([^:\]\s]+)\s*(?:#.*)?$")
PRIORITY = "ansible_group_priority"
NAME_MAX = 250  # a file name holds 255 bytes: host_vars/NAME.json must still be one
MAX_ENTRIES = 10 * MAX_HOSTS  # hosts listed in groups, a host counted once per listing
NAME_CHARS = "letters, digits and . _ - :"


def visible(text: str) -> str:
    """`text` with every character a terminal would not show as itself (control, bidi,
    zero-width, other non-printable) as an escape: `\x1b`, `\u202e`."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def invisible(text: str) -> str | None:
    """Why `text` cannot be a name or a value assay passes on: the first control (Cc) or
    format (Cf: bidi, zero-width) character in it, described; None if there is none."""
    if text.isascii() and text.isprintable():
        return None
    for c in text:
        kind = unicodedata.category(c)
        if kind == "Cc":
            return f"holds the control character {c!r}"
        if kind == "Cf":
            return (f"holds the invisible character U+{ord(c):04X} "
                    f"({unicodedata.name(c, 'format character').lower()}), which makes "
                    "text read other than it is")
    return None


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a host's name in assay (None: it can)."""
    if why := invisible(name):
        return f"the host name {why}: not allowed"
    if name in (".", ".."):
        return (f"{name!r} is not a host name: it would be the run's own directory (and "
                "host_vars/ itself)")
    bad = [] if NAME.match(name) else sorted({c for c in name if not NAME.match(c)})
    if bad:
        return (f"a host name is {NAME_CHARS}, not {' '.join(repr(c) for c in bad)} (no "
                "spaces, '/' or shell characters)")
    if name.startswith("-"):
        return "a host name does not start with '-' (ssh would read it as an option)"
    if len(name) > NAME_MAX:
        return f"a host name of {len(name)} characters: at most {NAME_MAX}"
    return None


@dataclass(frozen=True)
class At:
    """Where something was written: file and line."""

    file: str
    line: int | None

    def issue(self, what: str, message: str) -> Issue:
        return Issue(self.file, self.line, visible(what), visible(message))


Var = tuple[Any, At]


@dataclass
class Group:
    at: At
    hosts: dict[str, At] = field(default_factory=dict)
    vars: dict[str, Var] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)
    priority: int = 1


@dataclass
class Raw:
    file: str
    groups: dict[str, Group] = field(default_factory=dict)
    hosts: dict[str, At] = field(default_factory=dict)  # each host's first declaration
    hostvars: dict[str, dict[str, Var]] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    entries: int = 0  # hosts listed in groups so far (MAX_ENTRIES)
    full: bool = False  # a bound was reached: no more hosts are read

    def __post_init__(self) -> None:
        self.group("all", At(self.file, None))
        self.group("ungrouped", At(self.file, None))

    def group(self, name: str, at: At) -> Group:
        if name not in self.groups:
            if why := invisible(name):
                self.issues.append(at.issue(name, f"the group name {why}: not allowed"))
            elif not GROUP.match(name) or len(name) > NAME_MAX:
                self.issues.append(at.issue(name, "a group name is letters, digits, _ and - "
                                            f"(at most {NAME_MAX}; assay places workloads "
                                            "by group name)"))
            self.groups[name] = Group(at)
        return self.groups[name]

    def set_group_var(self, group: str, key: str, value: Any, at: At) -> None:
        if key == PRIORITY:  # Ansible: the group's priority, never a variable
            try:
                self.groups[group].priority = int(value)
            except (TypeError, ValueError):
                self.issues.append(at.issue(f"{group}.{key}", f"{value!r} is not an integer"))
            return
        self.groups[group].vars[key] = (value, at)

    def add_hosts(self, group: str, pattern: str, at: At, hvars: dict[str, Any]) -> None:
        if self.full:
            return
        try:
            n = size(pattern)  # counted, not made
            if n > MAX_HOSTS:
                raise TooManyHosts(f"it stands for {n:,} hosts; assay reads at most "
                                   f"{MAX_HOSTS:,} hosts in an inventory")
            if self.entries + n > MAX_ENTRIES:
                raise TooManyHosts(f"the groups list more than {MAX_ENTRIES:,} hosts (a host "
                                   "counted once in each group); assay reads at most "
                                   f"{MAX_HOSTS:,} hosts in an inventory")
            names, port = expand(pattern)
        except TooManyHosts as e:
            self.issues.append(at.issue(pattern, str(e)))
            self.full = True
            return
        except RangeError as e:
            self.issues.append(at.issue(pattern, f"not a host range Ansible expands: {e}"))
            return
        self.entries += len(names)
        refused: list[tuple[str, str]] = []  # one issue for a pattern, not one per name
        for name in names:
            if why := name_problem(name):
                refused.append((name, why))
                continue
            if name not in self.hosts and len(self.hosts) >= MAX_HOSTS:
                self.issues.append(at.issue(pattern, f"more than {MAX_HOSTS:,} hosts: assay "
                                            f"reads at most {MAX_HOSTS:,} hosts in an "
                                            "inventory"))
                self.full = True
                return
            if name not in self.hosts:
                self.hosts[name] = at
                if port is not None:  # Ansible: a port in the pattern counts where first seen
                    self.hostvars.setdefault(name, {})["ansible_port"] = (port, at)
            self.group(group, at).hosts.setdefault(name, at)
            self.hostvars.setdefault(name, {}).update({k: (v, at) for k, v in hvars.items()})
        if refused:
            name, why = refused[0]
            more = f" (and {len(refused) - 1:,} more names of {pattern!r})" \
                if len(refused) > 1 else ""
            self.issues.append(at.issue(name, why + more))


def ini_value(text: str) -> Any:
    """An INI value as Ansible types it: a Python literal if it is one, else the text."""
    try:
        value = ast.literal_eval(text)
    except Exception:  # not a literal (SyntaxError, ValueError, a huge number, ...)
        return text
    return _plain(value)


def _plain(v: Any) -> Any:
    if isinstance(v, list | tuple | set | frozenset):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    if v is Ellipsis:
        return "..."
    if isinstance(v, complex):
        return str(v)
    return v


def parse_ini(text: str, file: str) -> Raw:
    raw = Raw(file)
    section, kind = "ungrouped", "hosts"
    declared = {"all", "ungrouped"}
    needed: dict[str, Issue] = {}  # a group named before it is declared, and where
    for n, line in enumerate(text.splitlines(), 1):
        at, s = At(file, n), line.strip()
        if not s or s[0] in "#;":
            continue
        m = SECTION.match(s)
        if m:
            section, kind = m.group(1), m.group(2) or "hosts"
            if kind not in ("hosts", "vars", "children"):
                raw.issues.append(at.issue(s, f"unknown section type {kind!r} (hosts, vars, "
                                           "children)"))
                kind = "skip"
                continue
            raw.group(section, at)
            if kind == "vars" and section not in declared:
                needed.setdefault(section, at.issue(s, f"[{section}:vars] for a group that is "
                                                    "never declared ([{section}])"))
            elif kind != "vars":
                declared.add(section)
            continue
        if s.startswith("[") and s.endswith("]"):
            raw.issues.append(at.issue(s, "not a section header ([group], [group:vars], "
                                       "[group:children]; no spaces)"))
            kind = "skip"
            continue
        if kind == "vars":
            key, eq, value = (x.strip() for x in s.partition("="))
            if not eq or not key:
                raw.issues.append(at.issue(s, "expected key=value"))
            else:
                raw.set_group_var(section, key, ini_value(value), at)
        elif kind == "children":
            c = CHILD.match(s)
            if not c:
                raw.issues.append(at.issue(s, "expected a group name"))
                continue
            child = c.group(1)
            raw.group(child, at)
            if child not in raw.groups[section].children:
                raw.groups[section].children.append(child)
            needed.setdefault(child, at.issue(child, f"[{section}:children] names a group "
                                              "that is never declared ([{child}])"))
        elif kind == "hosts":
            _ini_hosts(raw, section, s, at)
    raw.issues += [issue for g, issue in needed.items() if g not in declared]
    return raw


def _ini_hosts(raw: Raw, section: str, s: str, at: At) -> None:
    try:
        words = shlex.split(s, comments=True)
    except ValueError as e:
        raw.issues.append(at.issue("", f"cannot split the line: {e}"))
        return
    if not words:
        return
    hvars: dict[str, Any] = {}
    for w in words[1:]:
        key, eq, value = w.partition("=")
        if not eq or not key:
            raw.issues.append(at.issue(w, "expected key=value"))
        else:
            hvars[key] = ini_value(value)
    raw.add_hosts(section, words[0], at, hvars)


def parse_yaml(text: str, file: str) -> Raw:
    raw = Raw(file)
    try:
        src = load_yaml(text, file)
    except ScenarioInvalid as e:
        raw.issues.extend(e.issues)
        return raw
    if not isinstance(src.data, dict):
        raw.issues.append(Issue(file, 1, "", "a YAML inventory is a mapping of groups "
                                "(all: {hosts: ..., children: ..., vars: ...})"))
    elif "plugin" in src.data:
        raw.issues.append(Issue(file, src.line_of(("plugin",)), "plugin", "an inventory "
                                "plugin's configuration, not an inventory: give assay the "
                                "inventory it makes (ansible-inventory -i FILE --list --yaml)"))
    else:
        for top, body in src.data.items():
            _yaml_group(raw, src, str(top), body, (top,))
    return raw


def _yaml_group(raw: Raw, src: YamlSource, name: str, body: Any,
                path: tuple[str | int, ...]) -> None:
    at = At(src.file, src.line_of(path))
    raw.group(name, at)
    if body is None:
        return
    if not isinstance(body, dict):
        raw.issues.append(src.issue(path, "a group is a mapping of hosts, children, vars"))
        return
    for key in body:
        if key not in ("hosts", "children", "vars"):
            raw.issues.append(src.issue((*path, key), "unknown key (hosts, children, vars)"))
    for key, value in _mapping(body.get("vars"), (*path, "vars"), src, raw).items():
        raw.set_group_var(name, str(key), value, At(src.file, src.line_of((*path, "vars", key))))
    for host, hv in _mapping(body.get("hosts"), (*path, "hosts"), src, raw).items():
        hpath = (*path, "hosts", host)
        raw.add_hosts(name, str(host), At(src.file, src.line_of(hpath)),
                      _mapping(hv, hpath, src, raw))
    for child, cbody in _mapping(body.get("children"), (*path, "children"), src, raw).items():
        if str(child) not in raw.groups[name].children:
            raw.groups[name].children.append(str(child))
        _yaml_group(raw, src, str(child), cbody, (*path, "children", child))


def _mapping(value: Any, path: tuple[str | int, ...], src: YamlSource,
             raw: Raw) -> dict[Any, Any]:
    if value is None:
        return {}
    if isinstance(value, str) and path[-1] in ("hosts", "children"):
        return {value: None}  # Ansible: `hosts: h1` is `hosts: {h1: }`
    if not isinstance(value, dict):
        raw.issues.append(src.issue(path, "expected a mapping"))
        return {}
    return value
