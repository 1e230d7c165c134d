"""The record of a search or sweep: one directory per group under the results root.

    <results>/searches/<time>_<scenario>_<id>/search.json
    <results>/sweeps/<time>_<scenario>_<id>/sweep.json   (+ repeats.json with --repeat)

The record is rewritten after every trial (atomically), so a killed group keeps every trial
that finished. `key` identifies "the same group started again": scenario content, parameter,
bounds and settings; a group with the same key that has not finished is resumed.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
FOLDERS = {"search": "searches", "sweep": "sweeps"}


def group_key(**fields: Any) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:16]


class Group:
    def __init__(self, path: Path, record: dict[str, Any]):
        self.path = path
        self.record = record

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def file(self) -> Path:
        return self.path / f"{self.record['kind']}.json"

    @classmethod
    def create(cls, root: Path, kind: str, scenario: str, record: dict[str, Any]) -> Group:
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", scenario).strip("-")[:50] or "scenario"
        path = root / FOLDERS[kind] / f"{time.strftime('%Y%m%d-%H%M%S')}_{slug}_" \
                                   f"{secrets.token_hex(3)}"
        path.mkdir(parents=True)
        group = cls(path, {"schema_version": SCHEMA_VERSION, "kind": kind, "id": path.name,
                           "created": time.time(), "status": "running", **record})
        group.save()
        return group

    @classmethod
    def open(cls, root: Path, kind: str, ref: str) -> Group | None:
        base = root / FOLDERS[kind]
        candidates = [base / ref] if (base / ref).is_dir() else \
            [p for p in base.glob(f"*{ref}*") if p.is_dir()] if base.is_dir() else []
        if len(candidates) != 1 or not (candidates[0] / f"{kind}.json").exists():
            return None
        path = candidates[0]
        return cls(path, json.loads((path / f"{kind}.json").read_text(encoding="utf-8")))

    @classmethod
    def unfinished(cls, root: Path, kind: str, key: str) -> Group | None:
        """The newest group of this key that did not finish."""
        base = root / FOLDERS[kind]
        for path in sorted(base.glob("*"), reverse=True) if base.is_dir() else []:
            try:
                record = json.loads((path / f"{kind}.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if record.get("key") == key and record.get("status") != "done":
                return cls(path, record)
        return None

    def save(self) -> None:
        write_json(self.file, self.record)


def write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.parent / f".{path.name}.tmp"
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
