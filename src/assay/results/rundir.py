"""A run directory, written as the run goes so that an interrupted run stays readable.

    <results>/<time>_<scenario>_<id>/
      run.json         resolved plan, environment, status, verdict (rewritten at each stage)
      scenario.yaml    the input, verbatim
      events.ndjson    every action and notable event, with start/end and outcome
      series.ndjson    per-second, per-component metrics (for charts)
      samples.ndjson   the same seconds with latency histogram bins (for exact re-aggregation)
      hosts/<host>/    rendered fio jobs and raw fio output, verbatim
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.results.printable import printable, printable_tree
from assay.results.record import MAX_BYTES, RecordError, RunRecord, decode, parse_record
from assay.results.record import SCHEMA_VERSION as RECORD_VERSION

SCHEMA_VERSION = 1  # of the other files (events, series); run.json has RECORD_VERSION
RECORD = "run.json"


def default_results_root() -> Path:
    return Path(os.environ.get("ASSAY_RESULTS") or "results")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:60] or "run"


class RunDir:
    def __init__(self, path: Path):
        self.path = path
        self._handles: dict[str, Any] = {}
        self._hosts: dict[str, Path] = {}  # host directories made (asked for every second)

    @classmethod
    def create(cls, root: Path, scenario_name: str) -> RunDir:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = root.resolve() / f"{stamp}_{_slug(scenario_name)}_{secrets.token_hex(3)}"
        path.mkdir(parents=True, exist_ok=False)
        return cls(path)

    @property
    def id(self) -> str:
        return self.path.name

    def host_dir(self, host: str = "local") -> Path:
        d = self._hosts.get(host)
        if d is None:
            d = self._hosts[host] = self.path / "hosts" / host
            d.mkdir(parents=True, exist_ok=True)
        return d

    def write_text(self, name: str, text: str) -> Path:
        p = self.path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p

    def write_json(self, name: str, data: dict[str, Any]) -> None:
        """Atomic: a reader never sees half a run.json."""
        data = {"schema_version": SCHEMA_VERSION, **data}
        tmp = self.path / f".{name}.tmp"
        try:
            tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
            tmp.replace(self.path / name)
        except OSError as e:  # a full disk: no half-written file left behind; named
            tmp.unlink(missing_ok=True)
            raise OSError(e.errno, e.strerror, str(self.path / name)) from None

    def write_record(self, record: RunRecord) -> None:
        """run.json, stamped with the current record version. Only the keys that were set (and
        unknown ones) are written, so the file says what the run knew, not our defaults.
        Atomic and synced: a reader, or a crash, never leaves half a record."""
        record.schema_version = RECORD_VERSION
        text = json.dumps(record.model_dump(exclude_unset=True), indent=2, default=str) + "\n"
        tmp = self.path / f".{RECORD}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            tmp.replace(self.path / RECORD)
        except OSError as e:  # a full disk: the last whole record stays, no half-written copy
            tmp.unlink(missing_ok=True)
            raise OSError(e.errno, e.strerror, str(self.path / RECORD)) from None
        dir_fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # the rename itself survives a power cut
        finally:
            os.close(dir_fd)

    def append(self, name: str, record: dict[str, Any]) -> None:
        """One NDJSON line, flushed: the file is complete up to the last second."""
        self.append_text(name, json.dumps(record, separators=(",", ":")))

    def append_text(self, name: str, line: str) -> None:
        """One NDJSON line already serialised by the caller, flushed."""
        fh = self._handles.get(name)
        if fh is None:
            fh = self._handles[name] = open(self.path / name, "a", encoding="utf-8")  # noqa: SIM115
        try:
            fh.write(line + "\n")
            fh.flush()
        except OSError as e:  # name the file: a write error says nothing of where it was
            raise OSError(e.errno, e.strerror, str(self.path / name)) from None

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        record = {"schema_version": SCHEMA_VERSION, "time": time.time(), "kind": kind, **fields}
        self.append("events.ndjson", record)
        return record

    def close(self) -> None:
        handles, self._handles = self._handles, {}
        failed: OSError | None = None
        for name, fh in handles.items():  # each closed; the first failure named, as append's
            try:
                fh.close()
            except OSError as e:
                failed = failed or OSError(e.errno, e.strerror, str(self.path / name))
        if failed is not None:
            raise failed


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object assay stored (a RecordError when it is damaged: see read_document)."""
    return read_document(path)


def read_document(path: Path) -> dict[str, Any]:
    """A stored JSON object (run.json, a search record), read through record.decode: at most
    MAX_BYTES of it, nested at most MAX_DEPTH deep. FileNotFoundError when there is none; a
    RecordError naming the file and the reason when it cannot be read or is damaged."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise RecordError(f"cannot read {printable(str(path))}: {e.strerror or e}") from None
    return decode(raw, printable(str(path)))


def read_record(run_dir: Path) -> RunRecord:
    """The run record of a run directory (any record version); a RecordError, with the file
    and what is wrong, for a missing, unreadable, torn, damaged or invalid run.json."""
    path = run_dir / RECORD
    try:
        data = read_document(path)
    except FileNotFoundError:
        raise RecordError(f"{printable(str(run_dir))}: no {RECORD} (not a run directory)") \
            from None
    # for the readers (show, report, compare): a stored name may hold escape sequences
    return parse_record(printable_tree(data), printable(str(path)))


def read_ndjson(path: Path) -> Iterator[dict[str, Any]]:
    """Records of an NDJSON file; a torn last line (killed mid-write) is skipped."""
    if not path.exists():
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):  # a line damaged into a list or a number is not one
                yield record
