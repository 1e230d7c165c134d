"""The catalogue of runs: one SQLite file beside the run directories (stdlib, no server).

The run directories are the truth; the catalogue is only an index of them. Every read
compares it with the directories (their names and run.json times) and brings it up to date:
a missing file, a file that is not a catalogue, a run without a row or a row without a run is
repaired from the directories. Where it cannot be written (a read-only results directory, a
full disk) runs are listed from the directories alone and `notice` says so.

A damaged run.json (too large, too deep, not JSON, a listed field of the wrong type or a time
no run can have: results/record.py) spoils only its own row: the run is listed as
`unreadable` with the reason in `damaged`, and every other run is listed as before. A row read
back from the index is checked again (the index is a file anyone may have edited).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from assay.results.liveness import effective_status
from assay.results.printable import printable
from assay.results.record import Listed, RecordError, parse_listed, sane_time
from assay.results.rundir import read_document

VERSION = 3  # PRAGMA user_version; a catalogue of another version is rebuilt
RUN_FILE = "run.json"
UNREADABLE = "unreadable"  # the status of a run whose run.json is damaged
LISTED = tuple(Listed.model_fields)  # the keys of run.json a row is made from
COLUMNS = ("id", "path", "scenario", "started", "duration_s", "status", "target", "platform",
           "summary", "parent", "mtime", "damaged")
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
    mtime REAL,
    damaged TEXT
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
        except (sqlite3.Error, OSError, UnicodeError) as e:
            self.notice = (f"the catalogue {self.file} cannot be updated ({_reason(e)}); "
                           f"runs are listed from their directories")
            rows = [dict(zip(COLUMNS, _row(p), strict=True)) for p in dirs.values()]
        for r in rows:
            if r["status"] == "running":  # the only status that can be out of date
                r["status"] = effective_status(_read(Path(r["path"]))[0] or {}, Path(r["path"]))
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
        if ref == "last":  # the newest run that can be read: a damaged one is skipped
            good = [r for r in rows if not r["damaged"]]
            return Path(max(good, key=lambda r: r["started"] or 0)["path"]) if good else None
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
            return [_checked(dict(zip(COLUMNS, row, strict=True))) for row in cur]
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


def _read(run_dir: Path) -> tuple[dict[str, Any] | None, str]:
    """run.json decoded, or None and why not (results/record.py: size, depth, JSON)."""
    try:
        return read_document(run_dir / RUN_FILE), ""
    except FileNotFoundError:
        return None, f"no {RUN_FILE}"
    except RecordError as e:
        return None, _why(str(e), run_dir)


def _why(message: str, run_dir: Path) -> str:
    """A RecordError's message without the path (the row names the run), on one line."""
    text = message.replace(printable(str(run_dir / RUN_FILE)), RUN_FILE)
    return _text(text.replace(":\n  ", ": ").replace("\n  ", "; "))


def _mtime(run_dir: Path) -> float | None:
    try:
        return (run_dir / RUN_FILE).stat().st_mtime
    except OSError:
        return None


def _row(run_dir: Path) -> tuple[Any, ...]:
    """The index row of a run directory; a damaged run.json still gets a row, so the run is
    listed (as `unreadable`, with the reason) rather than lost, or losing the others."""
    mtime = _mtime(run_dir)
    data, why = _read(run_dir)
    name, path = _text(run_dir.name), _text(str(run_dir))
    if not _text_ok(str(run_dir)):
        why = "its directory's name is not UTF-8 text: rename it to list it"
    listed = None
    if data is not None and not why:
        try:  # a name that is not UTF-8 (os.fsdecode's lone surrogates) is kept, escaped
            listed = parse_listed({k: _texts(data[k]) for k in LISTED if k in data}, RUN_FILE)
        except RecordError as e:
            why = _why(str(e), run_dir)
    if listed is None:
        return (name, path, "", sane_time(mtime), None, UNREADABLE, "", "", "{}", None,
                mtime, why or "unreadable")
    target, verdict = listed.target, listed.verdict
    return (name, path, _text(listed.scenario.name or ""), listed.started, listed.elapsed_s,
            _text(listed.status or "unknown"), _text(target.path or target.device or ""),
            _text(target.platform or ""),
            json.dumps({"passed": verdict.passed, "failed": verdict.failed,
                        "not_graded": verdict.not_graded}),
            None if listed.parent is None else _text(listed.parent), mtime, None)


def _texts(value: Any) -> Any:
    """`_text` of every string of a decoded value (bounded in depth by record.decode)."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_texts(k): _texts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_texts(v) for v in value]
    return value


def _text_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(text: str) -> str:
    """Text SQLite and JSON can hold: a lone surrogate (a name that is not UTF-8) escaped."""
    return text if _text_ok(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _checked(row: dict[str, Any]) -> dict[str, Any]:
    """A row read back from the index with the types a reader expects (text, sane times)."""
    for key in ("started", "duration_s"):
        row[key] = sane_time(row[key])
    for key in ("id", "path", "scenario", "status", "target", "platform", "summary"):
        if not isinstance(row[key], str):
            row[key] = "" if row[key] is None else str(row[key])
    if len(row["summary"]) > 200:  # three counts: anything longer is not one
        row["summary"] = "{}"
    for key in ("parent", "damaged"):
        if row[key] is not None and not isinstance(row[key], str):
            row[key] = str(row[key])
    if not isinstance(row["mtime"], int | float):
        row["mtime"] = None
    return row


def _reason(e: Exception) -> str:
    return getattr(e, "strerror", None) or str(e) or type(e).__name__
