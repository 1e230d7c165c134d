"""The catalogue of runs: one SQLite file beside the run directories (stdlib, no server)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.results.rundir import read_json

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    scenario TEXT NOT NULL,
    started REAL,
    duration_s REAL,
    status TEXT,
    target TEXT,
    platform TEXT,
    summary TEXT,
    parent TEXT
);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started);
"""


class Catalogue:
    def __init__(self, root: Path):
        self.root = root
        self.file = root / "catalogue.sqlite"

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.root.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.file, timeout=10)
        try:
            con.executescript(_SCHEMA)
            yield con
            con.commit()
        finally:
            con.close()

    def record(self, run_dir: Path) -> None:
        """Insert or refresh a run from its run.json."""
        data = read_json(run_dir / "run.json")
        verdict = data.get("verdict") or {}
        target = data.get("target") or {}
        with self._db() as con:
            con.execute(
                "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?)",
                (run_dir.name, str(run_dir.resolve()), data.get("scenario", {}).get("name", ""),
                 data.get("started"), data.get("elapsed_s"), data.get("status"),
                 target.get("path") or target.get("device") or "",
                 target.get("platform", ""),
                 json.dumps({"passed": verdict.get("passed"), "failed": verdict.get("failed")}),
                 data.get("parent")))

    def list(self, limit: int = 50, scenario: str | None = None) -> list[dict[str, Any]]:
        q = "SELECT id, path, scenario, started, duration_s, status, target, platform, summary " \
            "FROM runs"
        args: list[Any] = []
        if scenario:
            q += " WHERE scenario LIKE ?"
            args.append(f"%{scenario}%")
        q += " ORDER BY started DESC LIMIT ?"
        args.append(limit)
        with self._db() as con:
            cols = ["id", "path", "scenario", "started", "duration_s", "status", "target",
                    "platform", "summary"]
            return [dict(zip(cols, row, strict=True)) for row in con.execute(q, args)]

    def find(self, ref: str) -> Path | None:
        """A run by directory path, full id, unique id prefix or suffix, or `last`."""
        p = Path(ref)
        if (p / "run.json").exists():
            return p
        with self._db() as con:
            if ref == "last":
                row = con.execute("SELECT path FROM runs ORDER BY started DESC LIMIT 1").fetchone()
                return Path(row[0]) if row else None
            rows = con.execute("SELECT path FROM runs WHERE id = ? OR id LIKE ? OR id LIKE ?",
                               (ref, f"{ref}%", f"%{ref}")).fetchall()
        if len(rows) == 1:
            return Path(rows[0][0])
        return None
