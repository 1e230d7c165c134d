"""The catalogue of runs: one SQLite file beside the run directories (stdlib, no server).

The run directories are the truth; the catalogue is only an index of them. Every read
compares it with the directories (their names and run.json times) and brings it up to date:
a missing file, a file that is not a catalogue, a run without a row or a row without a run is
repaired from the directories. Where it cannot be written (a read-only results directory, a
full disk) runs are listed from the directories alone and `notice` says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from assay.results.liveness import effective_status

VERSION = 2  # PRAGMA user_version; a catalogue of another version is rebuilt
RUN_FILE = "run.json"
COLUMNS = ("id", "path", "scenario", "started", "duration_s", "status", "target", "platform",
           "summary", "parent", "mtime")
_SCHEMA = f"""
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    scenario TEXT NOT NULL,
    started REAL,
    duration_s REAL,
    status TEXT,
    target TEXT,
    platform TEXT,
    summary TEXT,
    parent TEXT,
    mtime REAL
);
CREATE INDEX runs_started ON runs(started);
PRAGMA user_version = {VERSION};
"""
Rows = list[dict[str, Any]]  # (the method `Catalogue.list` hides the builtin in the class)
_INSERT = f"INSERT OR REPLACE INTO runs VALUES ({','.join('?' * len(COLUMNS))})"


class Catalogue:
    def __init__(self, root: Path):
        self.root = root
        self.file = root / "catalogue.sqlite"
        self.notice: str | None = None  # why the list came from the directories alone

    # -- the run directories (the truth) --------------------------------------------------

    def run_dirs(self) -> dict[str, Path]:
        """Run id → directory, for every directory under the root holding a run.json."""
        try:
            children = list(self.root.iterdir())
        except OSError:
            return {}  # no results yet
        base = _resolved(self.root)
        return {p.name: base / p.name for p in children if _is_file(p / RUN_FILE)}

    # -- the index ------------------------------------------------------------------------

    def record(self, run_dir: Path) -> None:
        """Insert or refresh one run (the engine calls this at the end of a run); raises
        sqlite3.Error or OSError when the index cannot be written, which loses nothing."""
        con = self._open_for_write()
        try:
            with con:
                con.execute(_INSERT, _row(_resolved(run_dir)))
        finally:
            con.close()

    def rebuild(self) -> int:
        """Write a new index from the run directories; returns how many runs it holds."""
        dirs = self.run_dirs()
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
        con = sqlite3.connect(tmp)
        try:
            con.executescript(_SCHEMA)
            with con:
                con.executemany(_INSERT, (_row(p) for p in dirs.values()))
        except BaseException:  # a full disk: no half-built index left in the results
            con.close()
            for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
                leftover.unlink(missing_ok=True)
            raise
        finally:
            con.close()
        with contextlib.suppress(FileNotFoundError):  # belongs to the file being replaced
            os.unlink(f"{self.file}-journal")
        os.replace(tmp, self.file)
        return len(dirs)

    def rows(self) -> Rows:
        """Every run, index brought up to date first (or read from the directories alone)."""
        self.notice = None
        dirs = self.run_dirs()
        try:
            rows = self._synced(dirs)
        except (sqlite3.Error, OSError) as e:
            self.notice = (f"the catalogue {self.file} cannot be updated ({_reason(e)}); "
                           f"runs are listed from their directories")
            rows = [dict(zip(COLUMNS, _row(p), strict=True)) for p in dirs.values()]
        for r in rows:
            if r["status"] == "running":  # the only status that can be out of date
                r["status"] = effective_status(_read(Path(r["path"])) or {}, Path(r["path"]))
        return rows

    def list(self, limit: int = 50, scenario: str | None = None) -> Rows:
        """Runs newest first, optionally only those whose scenario name contains `scenario`."""
        rows = self.rows()
        if scenario:
            rows = [r for r in rows if scenario.lower() in (r["scenario"] or "").lower()]
        rows.sort(key=lambda r: r["started"] or 0, reverse=True)
        return rows[:limit]

    def find(self, ref: str) -> Path | None:
        """A run by directory path, full id, unique id prefix or suffix, or `last`."""
        p = Path(ref)
        if _is_file(p / RUN_FILE):
            return p
        rows = self.rows()
        if ref == "last":
            return Path(max(rows, key=lambda r: r["started"] or 0)["path"]) if rows else None
        matches = self.matches(ref, rows)
        return Path(matches[0]["path"]) if len(matches) == 1 else None

    def matches(self, ref: str, rows: Rows | None = None) -> Rows:
        """The runs an id, or a prefix or suffix of one, names, newest first: more than one
        is an ambiguous reference, which the caller names."""
        rows = self.rows() if rows is None else rows
        exact = [r for r in rows if r["id"] == ref]
        found = exact or [r for r in rows if r["id"].startswith(ref) or r["id"].endswith(ref)]
        return sorted(found, key=lambda r: r["started"] or 0, reverse=True)

    def _synced(self, dirs: dict[str, Path]) -> Rows:
        if not dirs and not self.file.exists():
            return []  # nothing to index: do not create files on a read
        con = self._open_for_write()
        try:
            stored = {r[0]: (r[1], r[2]) for r in con.execute("SELECT id, path, mtime FROM runs")}
            fresh = [_row(p) for name, p in dirs.items()
                     if stored.get(name) != (str(p), _mtime(p))]
            gone = [(name,) for name in stored if name not in dirs]
            if fresh or gone:
                with con:
                    con.executemany("DELETE FROM runs WHERE id = ?", gone)
                    con.executemany(_INSERT, fresh)
            cur = con.execute(f"SELECT {', '.join(COLUMNS)} FROM runs")
            return [dict(zip(COLUMNS, row, strict=True)) for row in cur]
        finally:
            con.close()

    def _open(self) -> sqlite3.Connection:
        """The existing index; a file that is not one (corrupt, another version) is rebuilt."""
        con = sqlite3.connect(self.file, timeout=10)
        try:
            if con.execute("PRAGMA user_version").fetchone()[0] == VERSION:
                con.execute("SELECT id, path, mtime FROM runs LIMIT 1").fetchall()
                return con
        except sqlite3.OperationalError as e:
            if "no such" not in str(e):  # locked, read-only, disk full: not ours to replace
                con.close()
                raise
        except sqlite3.DatabaseError:  # "file is not a database", "malformed"
            pass
        con.close()
        self.rebuild()
        return sqlite3.connect(self.file, timeout=10)

    def _open_for_write(self) -> sqlite3.Connection:
        if not self.file.exists():
            self.rebuild()
        return self._open()


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # unreadable, a name too long, a NUL byte
        return False


def _read(run_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _mtime(run_dir: Path) -> float | None:
    try:
        return (run_dir / RUN_FILE).stat().st_mtime
    except OSError:
        return None


def _row(run_dir: Path) -> tuple[Any, ...]:
    """The index row of a run directory; an unreadable run.json still gets a row, so the run
    is listed (as `unreadable`) rather than lost."""
    data = _read(run_dir)
    mtime = _mtime(run_dir)
    if data is None:
        return (run_dir.name, str(run_dir), "", mtime, None, "unreadable", "", "", "{}", None,
                mtime)
    scenario, target, verdict = (_mapping(data.get(k)) for k in ("scenario", "target", "verdict"))
    return (run_dir.name, str(run_dir), str(scenario.get("name") or ""),
            _number(data.get("started")), _number(data.get("elapsed_s")),
            str(data.get("status") or "unknown"),
            str(target.get("path") or target.get("device") or ""),
            str(target.get("platform") or ""),
            json.dumps({"passed": verdict.get("passed"), "failed": verdict.get("failed"),
                        "not_graded": verdict.get("not_graded")}),
            data.get("parent") if isinstance(data.get("parent"), str) else None, mtime)


def _mapping(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _reason(e: Exception) -> str:
    return getattr(e, "strerror", None) or str(e) or type(e).__name__
