"""The transaction model: TPS or TPM (HammerDB's unit) -> data and log IO.

`data IOPS = TPS x reads x (1 - hit) + TPS x writes`, `log bytes/s = TPS x log bytes per
transaction` (sizing-rules §3.2). The per-transaction IO is measured on your database or
derived from a data IOPS figure you declare: assay never assumes it is zero.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from assay.exitcodes import UserError
from assay.sizing.explain import KIB
from assay.sizing.oltp.profiles import LOG_IO_BYTES, OltpProfile

SRC_TXN = "sizing-rules §3.2: data IOPS = TPS x reads x (1 - hit) + checkpoint writes"
SRC_LOG_RULE = "sizing-rules §3.2: log MB/s = TPS x log bytes per transaction"
SRC_TPM = "HammerDB TPM: commits + rollbacks per minute (sizing-rules §3.2; seed 004)"
DEFAULT_LOG_PER_TXN = 4 * KIB  # [R] a small OLTP commit; measure yours


@dataclass(frozen=True)
class Transactions:
    """Per-transaction IO measured on your own database (HammerDB, production counters)."""

    tps: float
    reads_per_txn: float | None = None
    writes_per_txn: float | None = None
    log_bytes_per_txn: int = DEFAULT_LOG_PER_TXN
    hit_ratio: float = 0.0  # buffer cache hit ratio; 0 = every read reaches storage

    @property
    def tpm(self) -> float:
        return 60 * self.tps

    @property
    def measured(self) -> bool:
        return self.reads_per_txn is not None and self.writes_per_txn is not None

    @property
    def log_bytes_per_s(self) -> float:
        return self.tps * self.log_bytes_per_txn


def validate(t: Transactions) -> None:
    if t.tps <= 0:
        raise UserError(f"--tps / --tpm must be positive, got {t.tps:g} per second")
    if (t.reads_per_txn is None) != (t.writes_per_txn is None):
        missing = "--writes-per-txn" if t.writes_per_txn is None else "--reads-per-txn"
        raise UserError(f"give {missing} too: the data IO per transaction is reads and writes")
    if min(t.reads_per_txn or 0, t.writes_per_txn or 0) < 0:
        raise UserError("--reads-per-txn and --writes-per-txn cannot be negative")
    if not 0 <= t.hit_ratio < 1:
        raise UserError(f"--hit-ratio must be in [0, 1), got {t.hit_ratio}")
    if t.log_bytes_per_txn <= 0:
        raise UserError("--log-per-txn must be positive")


def log_iops(t: Transactions) -> float:
    """One flush per commit at least, one per 32 KiB of log at most (group commit makes it
    fewer commits per flush, large transactions more flushes per commit)."""
    return max(t.tps, t.log_bytes_per_s / LOG_IO_BYTES)


def profile_from_transactions(t: Transactions, dataset: int, data_files: int = 4,
                              log_files: int = 2, log_dataset: int = 0) -> OltpProfile:
    """Turn measured per-transaction IO into an IO profile."""
    if not t.measured:
        raise UserError("measured per-transaction IO needs --reads-per-txn and "
                        "--writes-per-txn")
    assert t.reads_per_txn is not None and t.writes_per_txn is not None
    reads = t.tps * t.reads_per_txn * (1 - t.hit_ratio)
    writes = t.tps * t.writes_per_txn
    data = reads + writes
    read_pct = 100 * reads / data if data else 0.0
    flushes = log_iops(t)
    return OltpProfile(data, flushes, read_pct, data_files, log_files, dataset, log_dataset,
                       t.log_bytes_per_s / flushes)


def transaction_profile(t: Transactions, base: OltpProfile, declared: bool) -> OltpProfile:
    """The IO profile of a transaction rate: measured per-transaction IO (files and dataset
    from `base`), or the data IOPS of `base` when you declared it (--data-iops or --preset),
    with the log from the transactions either way."""
    validate(t)
    if t.measured:
        return profile_from_transactions(t, base.dataset, base.data_files, base.log_files,
                                         base.log_dataset)
    if not declared:
        raise UserError("--tps/--tpm needs the data IO per transaction: give --reads-per-txn "
                        "and --writes-per-txn (measure them on a HammerDB run), or declare "
                        "the data IOPS with --data-iops or --preset; assay will not assume 0")
    flushes = log_iops(t)
    return replace(base, log_iops=flushes, log_io_bytes=t.log_bytes_per_s / flushes)
