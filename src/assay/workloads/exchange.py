"""Microsoft Exchange, the Jetstress way.

Target transactional IOPS = mailboxes × IOPS per mailbox (0.00067 × messages/day, +20 %
headroom). Per database: 32 KiB random reads and writes (3:2), sequential synchronous log
appends, and background database maintenance (BDM) as sequential 256 KiB reads at 1 MiB/s per
database copy (Exchange 2013 and later). Log and BDM IO come on top of the target, as in
Jetstress.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import Field, model_validator

from assay.scenario.models import Percent, Size, WorkloadBase
from assay.workloads.base import BuildContext, DataFile, Pattern, Stream, build_stream

IOPS_PER_MESSAGE = 0.00067
HEADROOM = 1.2
MiB = 1 << 20


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


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    db_files = [DataFile(f"{name}.db.{i + 1}.edb", p.db_bytes()) for i in range(p.databases)]
    log_size = max(64 * MiB, min(p.db_bytes() // 20, 4 << 30)) // MiB * MiB
    log_files = [DataFile(f"{name}.log.{i + 1}.log", log_size) for i in range(p.databases)]
    closed = p.load.model == "closed"
    streams = [
        build_stream(name, "db", p, db_files,
                     Pattern([(32768, 100)], p.read_pct, iodepth=16,
                             target_iops=None if closed else p.target_iops),
                     description="ESE database: 32k random reads and writes"),
        build_stream(name, "log", p, log_files,
                     Pattern([(4096, 30), (8192, 30), (16384, 20), (32768, 10), (65536, 10)],
                             0, random=False, iodepth=1, sync=True,
                             target_iops=None if closed else p.target_iops * p.log_ratio),
                     transactional=False,
                     description="log: sequential O_DSYNC appends, 4k-64k"),
    ]
    if p.bdm_rate > 0:
        # BDM is paced by bytes in Exchange: a fixed rate even in closed-loop runs
        bdm_iops = p.bdm_rate * p.databases / (256 * 1024)
        streams.append(build_stream(
            name, "bdm", p.model_copy(update={"load": p.load.model_copy(
                update={"model": "fixed", "pacing": "even"})}), db_files,
            Pattern([(256 * 1024, 100)], 100, random=False, iodepth=1, target_iops=bdm_iops),
            transactional=False, description="background database maintenance: 256k reads"))
    return streams
