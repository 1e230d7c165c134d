"""`group_vars/` and `host_vars/` beside an inventory file, as Ansible's host_group_vars
plugin reads them.

For a group or host NAME, the first of `NAME`, `NAME.yml`, `NAME.yaml`, `NAME.json` that
exists is read; if it is a directory, every file in it and below (sorted by name, hidden
files, `~` backups and other extensions left out) is read in turn, later files winning.
Each file is YAML (JSON is YAML) holding a mapping of variables; an empty file is nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.hosts.inventory_source import At, Var
from assay.scenario.yamlsource import Issue, ScenarioInvalid, load_yaml

EXTENSIONS = (".yml", ".yaml", ".json")
VAULT = "$ANSIBLE_VAULT"


class VarsDirs:
    """The variables files of one inventory directory, each read once."""

    def __init__(self, base: Path | None):
        """`base`: the inventory's directory, as given (shown in messages)."""
        self.shown = base
        self.base = Path(os.path.realpath(base)) if base is not None else None
        self.issues: list[Issue] = []
        self._read: dict[Path, dict[str, Var]] = {}

    def group(self, name: str) -> dict[str, Var]:
        return self._vars("group_vars", name)

    def host(self, name: str) -> dict[str, Var]:
        return self._vars("host_vars", name)

    def _vars(self, kind: str, name: str) -> dict[str, Var]:
        if self.base is None or self.shown is None or not lookup_name(name):
            return {}  # a name refused by the inventory (its issue says why) reads nothing
        out: dict[str, Var] = {}
        try:
            found = files_for(self.base / kind, name)
        except OSError as e:  # a name too long for the file system, a loop of links, ...
            self.issues.append(Issue(str(self.shown / kind), None, "", f"cannot read it: {e}"))
            return out
        for f in found:
            out.update(self._file(f, str(self.shown / f.relative_to(self.base))))
        return out

    def _file(self, path: Path, shown: str) -> dict[str, Var]:
        if path in self._read:
            return self._read[path]
        out: dict[str, Var] = {}
        self._read[path] = out
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            self.issues.append(Issue(shown, None, "", f"cannot read it: {e}"))
            return out
        if text.startswith(VAULT):
            self.issues.append(Issue(shown, 1, "", "encrypted with ansible-vault: assay does "
                                     "not read vaults; keep the variables assay uses in a "
                                     "plain file"))
            return out
        try:
            src = load_yaml(text, shown)
        except ScenarioInvalid as e:
            if [i.message for i in e.issues] != ["the file is empty"]:
                self.issues.extend(e.issues)
            return out
        data: Any = src.data
        if data is None:
            return out
        if not isinstance(data, dict):
            self.issues.append(Issue(shown, 1, "", "expected a mapping of variables"))
            return out
        for key, value in data.items():
            out[str(key)] = (value, At(shown, src.line_of((key,))))
        return out


def lookup_name(name: str) -> bool:
    """Whether `name` may be looked up as a file in group_vars/ or host_vars/: one file
    name, not `.` or `..` (which would read the directory above), no `/`, no NUL."""
    return name not in ("", ".", "..") and "/" not in name and "\0" not in name


def files_for(where: Path, name: str) -> list[Path]:
    """The files that hold NAME's variables under `where`, in the order they apply."""
    if not where.is_dir():
        return []
    for candidate in (where / name, *(where / f"{name}{ext}" for ext in EXTENSIONS)):
        if candidate.exists():
            return _tree(candidate) if candidate.is_dir() else [candidate]
    return []


def _tree(d: Path, seen: frozenset[str] = frozenset()) -> list[Path]:
    """The files below `d`, in order; a link back to a directory above is not followed."""
    real = os.path.realpath(d)
    if real in seen:
        return []
    out: list[Path] = []
    for entry in sorted(os.listdir(d)):
        if entry.startswith(".") or entry.endswith("~"):
            continue
        p, ext = d / entry, os.path.splitext(entry)[1]
        if p.is_dir() and not ext:
            out += _tree(p, seen | {real})
        elif p.is_file() and (not ext or ext in EXTENSIONS):
            out.append(p)
    return out
