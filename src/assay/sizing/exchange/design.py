"""What an Exchange design is made of, and the inputs the rules cannot describe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.exitcodes import UserError
from assay.sizing.exchange.profile import MC_SLOPES, PASSIVE_IO_PCT, MailboxTier


@dataclass(frozen=True)
class ExchangeDesign:
    tiers: tuple[MailboxTier, ...]
    servers: int
    specint_per_core: float | None = None  # SPECint_rate2006 / cores; None: no CPU sizing
    cores_per_server: int = 24
    copies: int = 2
    version: str = "2019"
    failures: int | None = None  # servers lost in the worst failure mode (default copies - 1)
    databases: int | None = None  # in all, each with `copies` copies
    databases_per_server: int | None = None  # active databases per server, all servers up
    headroom: bool = True
    passive_io_pct: float = PASSIVE_IO_PCT
    log_days: float = 3.0
    retention_days: float = 14.0
    growth_pct: float = 20.0
    content_index_pct: float = 10.0
    single_item_recovery: bool = True
    hypervisor_overhead_pct: float = 0.0
    ram_per_server: int | None = None  # bytes, if the user has chosen it
    max_cpu_pct: float = 80.0
    measured_iops: float | None = None  # achieved Jetstress IOPS, all servers: the inverse

    @property
    def mailboxes(self) -> int:
        return sum(t.count for t in self.tiers)

    @property
    def worst_failures(self) -> int:
        return self.copies - 1 if self.failures is None else self.failures

    def inputs(self) -> dict[str, Any]:
        return {
            "tiers": [{"mailboxes": t.count, "messages_per_day": t.messages_per_day,
                       "mailbox_size": t.mailbox_size, "message_size": t.message_size}
                      for t in self.tiers],
            "servers": self.servers, "copies": self.copies,
            "cores_per_server": self.cores_per_server,
            "specint_per_core": self.specint_per_core, "version": self.version,
            "failures": self.worst_failures, "databases": self.databases,
            "databases_per_server": self.databases_per_server, "headroom": self.headroom,
            "passive_io_pct": self.passive_io_pct, "log_days": self.log_days,
            "retention_days": self.retention_days, "growth_pct": self.growth_pct,
            "content_index_pct": self.content_index_pct,
            "single_item_recovery": self.single_item_recovery,
            "hypervisor_overhead_pct": self.hypervisor_overhead_pct,
            "ram_per_server": self.ram_per_server, "max_cpu_pct": self.max_cpu_pct,
            "measured_iops": self.measured_iops,
        }


def validate(d: ExchangeDesign) -> None:
    """Refuse designs the rules cannot describe, with a message that names the option."""
    _validate_tiers(d.tiers)
    if d.version not in MC_SLOPES:
        raise UserError(f"--exchange-version must be 2013, 2016 or 2019, got {d.version}")
    if d.servers < 1:
        raise UserError(f"--servers must be at least 1, got {d.servers}")
    if d.copies < 1:
        raise UserError(f"--copies must be at least 1, got {d.copies}")
    if d.copies > d.servers:
        raise UserError(f"{d.copies} database copies need at least {d.copies} servers "
                        f"(each copy on its own server), got {d.servers}")
    if d.cores_per_server < 1 or (d.specint_per_core is not None and d.specint_per_core <= 0):
        raise UserError("--cores and --specint-per-core must be positive")
    f = d.worst_failures
    if f < 0:
        raise UserError(f"--failures cannot be negative, got {f}")
    if f > d.copies - 1:
        raise UserError(f"--failures {f} loses every copy of some databases: with {d.copies} "
                        f"copies a DAG survives at most {d.copies - 1} server failures")
    _validate_databases(d)
    if not 0 <= d.hypervisor_overhead_pct < 100:
        raise UserError("--hypervisor-overhead is a percentage between 0 and 99")
    if not 0 <= d.passive_io_pct <= 100:
        raise UserError(f"--passive-io is a percentage between 0 and 100, got "
                        f"{d.passive_io_pct:g}")
    if d.measured_iops is not None and d.measured_iops <= 0:
        raise UserError(f"--iops must be positive, got {d.measured_iops:g}")
    for name, v in (("--log-days", d.log_days), ("--retention-days", d.retention_days),
                    ("--growth", d.growth_pct), ("--content-index", d.content_index_pct)):
        if v < 0:
            raise UserError(f"{name} cannot be negative, got {v}")


def _validate_tiers(tiers: tuple[MailboxTier, ...]) -> None:
    if not tiers:
        raise UserError("give at least one mailbox tier (--mailboxes, --tier or --iops)")
    if len(tiers) > 4:
        raise UserError(f"the calculator has at most 4 mailbox tiers, got {len(tiers)}")
    for i, t in enumerate(tiers, 1):
        where = f"tier {i}: " if len(tiers) > 1 else ""
        if t.count <= 0:
            raise UserError(f"{where}mailboxes must be a positive number, got {t.count}")
        if not 1 <= t.messages_per_day <= 1000:
            raise UserError(f"{where}messages per day must be 1-1000, got {t.messages_per_day}")
        if t.mailbox_size <= 0 or t.message_size <= 0:
            raise UserError(f"{where}mailbox and message sizes must be positive")


def _validate_databases(d: ExchangeDesign) -> None:
    if d.databases is not None and d.databases_per_server is not None:
        raise UserError("give either --databases (in all) or --databases-per-server, not both")
    if d.databases is not None and d.databases < 1:
        raise UserError(f"--databases must be at least 1, got {d.databases}")
    if d.databases_per_server is not None and d.databases_per_server < 1:
        raise UserError(f"--databases-per-server must be at least 1, got "
                        f"{d.databases_per_server}")
