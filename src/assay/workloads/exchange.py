"""Microsoft Exchange, the Jetstress way.

Target transactional IOPS = mailboxes × IOPS per mailbox (0.00067 × messages/day, +20 %
headroom). Per database: 32 KiB random reads and writes (3:2), sequential synchronous log
appends of 4-8 KiB (about 7 KiB: Jetstress 2007's tuning goal of 6-8 KB per log write, the
only published figure), background database maintenance (BDM) as sequential 256 KiB reads at
1 MiB/s per database copy (Exchange 2013 and later) and, with `copies` >= 2, log replication
reads for the passive copies. Log, BDM and replication IO come on top of the target, as in
Jetstress.

Each database is graded on its own, as Jetstress grades each instance: with 2 or more
databases the components `db1.read`, `db2.read`, ... (and `log1.write`, ...) sit beside the
server's `db.read`, and `db` in a threshold names them all.

`mode: assay` (the default) issues the target rate open loop, Poisson arrivals: latency at the
application's own rate. `mode: jetstress` is Jetstress' way: closed-loop threads (from
`load.threads`, else Jetstress 2010's rule, target / (databases x 135) per database), graded
achieved >= target with no pacing slack; the log and BDM stay at their rates.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import Field, model_validator

from assay.metrics.sampler import ComponentSpec
from assay.scenario.models import Size, WorkloadBase
from assay.scenario.strict import Percent
from assay.workloads.base import BuildContext, DataFile, Pattern, Stream, build_stream

IOPS_PER_MESSAGE = 0.00067
HEADROOM = 1.2
MiB = 1 << 20
IOPS_PER_THREAD = 135  # Jetstress 2010 "Configuring Thread Count": DB IO/s of one thread
# mean 6.9 KiB: Jetstress' 6-8 KB per log write
LOG_SIZES: list[tuple[int, float]] = [(4096, 30.0), (8192, 70.0)]
REPLICATION_BLOCK = 64 * 1024
BACKUP_BLOCK = 64 * 1024  # ESE reads 64 KiB for backup and log replay [inferred]
RECOVERY_LOGS = 500  # Jetstress' LogFilesToReplay


class Params(WorkloadBase):
    kind: Literal["exchange"] = "exchange"
    mailboxes: int = Field(..., ge=1, description="mailboxes on this server")
    mailbox_size: Size = Field(2 << 30, description="quota per mailbox")
    messages_per_day: int | None = Field(None, ge=1, description="sent+received per mailbox")
    iops_per_mailbox: float | None = Field(None, gt=0, description="overrides messages_per_day")
    headroom: bool = Field(True, description="add 20 % to IOPS from messages_per_day")
    databases: int = Field(1, ge=1, le=100)
    read_pct: Percent = Field(60, description="DB reads:writes 3:2 (Jetstress tuning goal)")
    log_ratio: float = Field(0.1, ge=0, le=1, description="log writes per transactional IO")
    bdm_rate: Size = Field(MiB, description="BDM read bytes/s per database; 0 turns it off")
    copies: int = Field(1, ge=1, le=16, description="copies of each database (Jetstress' "
                                                   "DatabaseCopyCount): >= 2 adds log "
                                                   "replication reads")
    mode: Literal["assay", "jetstress"] = Field(
        "assay", description="assay: open loop at the target rate; jetstress: closed-loop "
                             "threads, achieved >= target")
    test: Literal["performance", "stress", "backup", "soft_recovery"] = Field(
        "performance", description="Jetstress test type: performance and stress are the "
                                   "transactional load (grade stress with jetstress-lenient, "
                                   "or `jetstress` by run length); backup reads every database "
                                   "sequentially; soft_recovery replays logs into the databases")

    @model_validator(mode="after")
    def _profile(self) -> Params:
        if self.iops_per_mailbox is None and self.messages_per_day is None:
            self.messages_per_day = 150
        return self

    @property
    def mailbox_iops(self) -> float:
        if self.iops_per_mailbox is not None:
            return self.iops_per_mailbox
        assert self.messages_per_day is not None
        raw = IOPS_PER_MESSAGE * self.messages_per_day * (HEADROOM if self.headroom else 1.0)
        # the published tables (and Jetstress configs) round to 3 decimals: 150 -> 0.121
        return float(Decimal(str(raw)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))

    @property
    def target_iops(self) -> float:
        return self.mailboxes * self.mailbox_iops

    def db_bytes(self) -> int:
        """Per database. Jetstress reserves 25 % for growth beyond the quota total."""
        total = self.dataset
        if total is None:
            total = int(self.mailboxes * self.mailbox_size * 1.25)
        return max(64 * MiB, total // self.databases // MiB * MiB)


def threads(p: Params) -> int:
    """Jetstress threads per database: the user's, or target / (databases x 135)."""
    return p.load.threads or max(1, -(-int(p.target_iops) // (p.databases * IOPS_PER_THREAD)))


def _fixed(p: Params) -> Params:
    return p.model_copy(update={"load": p.load.model_copy(update={"model": "fixed"})})


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    db_files = [DataFile(f"{name}.db.{i + 1}.edb", p.db_bytes()) for i in range(p.databases)]
    log_size = max(64 * MiB, min(p.db_bytes() // 20, 4 << 30)) // MiB * MiB
    log_files = [DataFile(f"{name}.log.{i + 1}.log", log_size) for i in range(p.databases)]
    if p.test in ("backup", "soft_recovery"):
        return recovery_tests(name, p, db_files, log_files, ctx)
    jetstress = p.mode == "jetstress"
    if not jetstress and p.load.model != "closed":
        ctx.notes.append(f"{name}: open loop, Poisson arrivals at the target: latency at the "
                         f"mailboxes' own rate. Jetstress runs closed-loop threads and passes "
                         f"when achieved >= target; `mode: jetstress` does that "
                         f"(docs/fidelity.md)")
    closed = p.load.model == "closed" or jetstress
    db_params = p.model_copy(update={"load": p.load.model_copy(update={
        "model": "closed", "threads": threads(p), "iodepth": p.load.iodepth or 1})}) \
        if jetstress else p
    db = build_stream(name, "db", db_params, db_files,
                      Pattern([(32768, 100)], p.read_pct, iodepth=16,
                              target_iops=None if closed else p.target_iops),
                      description="ESE database: 32k random reads and writes" +
                      (f", {threads(p)} closed-loop threads per database" if jetstress else ""))
    if jetstress:  # graded against the target, achieved >= target as Jetstress does
        for c in db.components:
            share = p.read_pct if c.direction == "read" else 100 - p.read_pct
            c.target_iops = p.target_iops * p.load.scale * share / 100
    log_rate = p.target_iops * p.log_ratio
    log = build_stream(name, "log", _fixed(p) if jetstress else p, log_files,
                       Pattern(LOG_SIZES, 0, random=False, iodepth=1, sync=True,
                               target_iops=None if p.load.model == "closed" else log_rate),
                       transactional=False,
                       description="log: sequential O_DSYNC appends, 4k/8k (about 7 KiB)")
    streams = [db, log]
    if p.databases > 1:
        per_database(db, p.databases)
        per_database(log, p.databases)
    if p.copies > 1 and log_rate:
        # the passive copies read each log as it is written: its bytes, once per copy
        mean = sum(bs * pct for bs, pct in LOG_SIZES) / 100
        repl = log_rate * mean * (p.copies - 1) / REPLICATION_BLOCK
        streams.append(build_stream(
            name, "repl", _fixed(p), log_files,
            Pattern([(REPLICATION_BLOCK, 100)], 100, random=False, iodepth=1, target_iops=repl),
            transactional=False,
            description=f"log replication reads for {p.copies - 1} passive "
                        f"cop{'y' if p.copies == 2 else 'ies'}: 64k sequential"))
    if p.bdm_rate > 0:
        # BDM is paced by bytes in Exchange: a fixed rate even in closed-loop runs, and its
        # own (bytes/s per database) whatever the load's scale, as Jetstress runs it. Scaled
        # down it would read once in seconds, and fio's status dumps wait for every job's
        # next IO: the whole run's seconds would come that far apart.
        bdm_iops = p.bdm_rate * p.databases / (256 * 1024)
        streams.append(build_stream(
            name, "bdm", p.model_copy(update={"load": p.load.model_copy(
                update={"model": "fixed", "pacing": "even", "scale": 1.0})}), db_files,
            Pattern([(256 * 1024, 100)], 100, random=False, iodepth=1, target_iops=bdm_iops),
            transactional=False, description="background database maintenance: 256k reads"))
    return streams


def per_database(stream: Stream, databases: int) -> None:
    """Components per database (`mail.db1.read`, ...), fed by that database's file's jobs,
    beside the server's pooled ones: Jetstress reports and grades each instance. Views of the
    pooled ones' IOs: a host's IO/s and the live line count those once."""
    pooled = list(stream.components)
    for i in range(1, databases + 1):
        prefix = f"{stream.key}.{i}"
        for c in pooled:
            jobs = [j for j in c.jobs if j == prefix or j.startswith(prefix + ".")]
            stream.components.append(ComponentSpec(
                f"{stream.workload}.{stream.name}{i}.{c.direction}", jobs, c.direction,
                view=True))


def recovery_tests(name: str, p: Params, db_files: list[DataFile], log_files: list[DataFile],
                   ctx: BuildContext) -> list[Stream]:
    """Jetstress' DatabaseBackup and SoftRecovery tests: as fast as the storage goes, one
    reader per database, graded per database on MB/s (`db.read.mbps >= 50`, say)."""
    closed = p.model_copy(update={"load": p.load.model_copy(update={"model": "closed",
                                                                     "threads": 1})})
    if p.test == "backup":
        # a streaming (VSS-style) backup reads each database file front to back
        backup = build_stream(name, "db", closed, db_files,
                              Pattern([(BACKUP_BLOCK, 100)], 100, random=False, iodepth=1),
                              description="database backup: 64k sequential reads")
        if p.databases > 1:
            per_database(backup, p.databases)
        ctx.notes.append(f"{name}: Jetstress DatabaseBackup reads every database to its end; "
                         f"assay reads for the run's duration and grades the MB/s per "
                         f"database (time to back up = database size / MB/s)")
        return [backup]
    # soft recovery: log files read in order while their changes go to the database pages
    logs = build_stream(name, "log", closed, log_files,
                        Pattern([(BACKUP_BLOCK, 100)], 100, random=False, iodepth=1),
                        transactional=False, description="log replay: 64k sequential reads")
    db = build_stream(name, "db", closed, db_files,
                      Pattern([(32768, 100)], p.read_pct, iodepth=4),
                      description="replayed changes: 32k random database reads and writes")
    if p.databases > 1:
        per_database(logs, p.databases)
        per_database(db, p.databases)
    ctx.notes.append(f"{name}: Jetstress SoftRecovery replays {RECOVERY_LOGS} 1 MB logs per "
                     f"database; replay time = {RECOVERY_LOGS} MB / the log read MB/s")
    return [db, logs]
