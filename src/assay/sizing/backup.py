"""Backup stream sizing: throughput per spindle / database / target, outstanding IO, time.

Seed 004 backs a SQL Server database up to the 4 HDDs of one node: 16 target files, SQL
Server keeping 1-2 IOs outstanding per target, about 120 MB/s once the files exist (64 MB/s
the first time, while creating them): around 25-30 MB/s per spindle, so 500 MB/s takes about
20 spindles. Seed 000 (the Nutanix ESRP) reads 215 MB/s per Exchange database, more than
1.7 GB/s from the 8 databases of a node. The slower side, reading or writing, sets the pace.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.exitcodes import UserError
from assay.sizing.explain import MB, Bytes, Figure, Rate, Result, at_most, ceil_div

SRC_SPINDLE = "SQL*Server on Nutanix, Force backups to HDD: ~25 MB/s per HDD spindle (seed 004)"
SRC_TARGETS = "SQL Server keeps 1-2 IOs outstanding per backup target file (seed 004)"
SRC_PER_DB = "Nutanix ESRP: 215 MB/s backup read per database (seed 000)"
SRC_TIME = "time = dataset / throughput"

PER_SPINDLE = 25 * MB  # bytes/s one HDD takes of a backup stream (seed 004)
MAX_OUTSTANDING = 2  # SQL Server: 1-2 IOs in flight per target


@dataclass(frozen=True)
class BackupDesign:
    dataset: int | None = None  # bytes to back up
    window_s: float | None = None  # the backup window
    required: float | None = None  # bytes/s wanted, instead of dataset / window
    spindles: int | None = None  # drives the backup writes to
    per_spindle: float = PER_SPINDLE  # bytes/s per spindle
    databases: int = 1  # databases read in parallel
    per_database: float | None = None  # bytes/s one database streams
    throughput: float | None = None  # bytes/s you measured
    targets: int = 4  # backup target files
    outstanding: int = MAX_OUTSTANDING  # IOs in flight per target


def validate(d: BackupDesign) -> None:
    if d.spindles is None and d.per_database is None and d.throughput is None:
        raise UserError("give what paces the backup: --spindles (writing side), "
                        "--per-database (reading side) or --throughput (measured)")
    for name, v in (("--spindles", d.spindles), ("--databases", d.databases),
                    ("--targets", d.targets)):
        if v is not None and v < 1:
            raise UserError(f"{name} must be at least 1, got {v}")
    if not 1 <= d.outstanding <= MAX_OUTSTANDING:
        raise UserError(f"--outstanding is 1 or 2 (SQL Server's IOs per target), got "
                        f"{d.outstanding}")
    for name, r in (("--per-spindle", d.per_spindle), ("--per-database", d.per_database),
                    ("--throughput", d.throughput), ("--required", d.required),
                    ("--dataset", d.dataset), ("--window", d.window_s)):
        if r is not None and r <= 0:
            raise UserError(f"{name} must be positive")
    if d.window_s is not None and d.dataset is None and d.required is None:
        raise UserError("--window needs --dataset (the bytes to back up in it)")


def size(d: BackupDesign) -> Result:
    validate(d)
    r = Result("backup", inputs={k: v for k, v in vars(d).items()})
    sides: list[float] = []
    if d.spindles is not None:
        sides.append(d.spindles * d.per_spindle)
        r.add("spindle_throughput", Figure(
            "Throughput the spindles take", sides[-1] / MB, "MB/s",
            "spindles x per_spindle", {"spindles": d.spindles,
                                       "per_spindle": Rate(d.per_spindle)}, SRC_SPINDLE))
    if d.per_database is not None:
        sides.append(d.databases * d.per_database)
        r.add("database_throughput", Figure(
            "Throughput the databases give", sides[-1] / MB, "MB/s",
            "databases x per_database", {"databases": d.databases,
                                         "per_database": Rate(d.per_database)}, SRC_PER_DB))
    if d.throughput is not None:
        rate, how, src = d.throughput, "measured (--throughput)", "your measurement"
    else:
        rate, how, src = min(sides), "the slower of reading and writing", SRC_SPINDLE
    r.add("throughput", Figure("Backup throughput", rate / MB, "MB/s", how, {}, src))
    if d.throughput is not None and d.spindles is not None:
        r.add("per_spindle_measured", Figure(
            "Throughput per spindle (measured)", rate / d.spindles / MB, "MB/s",
            "throughput / spindles", {"spindles": d.spindles}, SRC_SPINDLE))
    r.add("per_target", Figure("Throughput per target file", rate / d.targets / MB, "MB/s",
                               "throughput / targets", {"targets": d.targets}, SRC_TARGETS))
    r.add("outstanding_ios", Figure(
        "IOs outstanding", d.targets * d.outstanding, "IOs", "targets x outstanding_per_target",
        {"targets": d.targets, "outstanding_per_target": d.outstanding}, SRC_TARGETS))
    if d.dataset is not None:
        r.add("backup_hours", Figure("Time to back up", d.dataset / rate / 3600, "h",
                                     "dataset / throughput", {"dataset": Bytes(d.dataset)},
                                     SRC_TIME))
    _requirement(d, r, rate)
    r.notes.append("Sizes and rates are decimal: 25MB/s = 25 x 10^6 bytes per second.")
    r.notes.append("The first backup to new target files is slower while they are created "
                   "(seed 004: ~64 MB/s, then ~120 MB/s).")
    return r


def _requirement(d: BackupDesign, r: Result, rate: float) -> None:
    required = d.required
    if required is None and d.window_s is not None and d.dataset is not None:
        required = d.dataset / d.window_s
    if required is None:
        return
    r.add("required_throughput", Figure(
        "Throughput required", required / MB, "MB/s",
        "given (--required)" if d.required else "dataset / window",
        {"dataset": Bytes(d.dataset or 0), "window_s": d.window_s or 0}, SRC_TIME))
    r.add("spindles_needed", Figure(
        "Spindles needed", ceil_div(required, d.per_spindle), "spindles",
        "ceil(required / per_spindle)", {"per_spindle": Rate(d.per_spindle)}, SRC_SPINDLE))
    if d.per_database is not None:
        r.add("databases_needed", Figure(
            "Databases streaming in parallel needed", ceil_div(required, d.per_database),
            "databases", "ceil(required / per_database)",
            {"per_database": Rate(d.per_database)}, SRC_PER_DB))
    r.checks.append(at_most("The backup fits its throughput", required / MB, rate / MB, "MB/s",
                            "Throughput required", SRC_TIME))
