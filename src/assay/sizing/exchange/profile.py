"""Per-mailbox load of Exchange 2013/2016/2019, from the published tables.

Rules and constants: `sizing-rules.md` §2 and docs/sizing.md. Everything here is per mailbox;
how mailboxes land on servers is `layout.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assay.sizing.explain import GB, GIB, KB, round_half_up

SRC_IOPS = "Ask the Perf Guy: Sizing Exchange 2013 Deployments (sizing-rules §2.2)"
SRC_PASSIVE = ("Microsoft, Exchange 2013 storage: a passive copy's IOPS are about 50 % of the "
               "active copy's (100 MB checkpoint depth; jetstress-and-fio §1.4)")
SRC_JETSTRESS = ("Jetstress: target = mailboxes x IOPS per mailbox; DatabaseCopyCount adds the "
                 "passive copies' log reads (jetstress-and-fio §1.3, §1.5; seed 003)")
SRC_N1 = ("Microsoft worst failure mode; the Nutanix ESRP was validated at N-1 (sizing-rules "
          "§2.3; seed 000)")
SRC_MC = "SizingChecker.ps1 / Ask the Perf Guy 2016 (sizing-rules §2.2)"
SRC_CPU = "mcsmlab Exchange 2013 processor sizing; SizingChecker constants (sizing-rules §2.3)"
SRC_80 = "Microsoft: worst failure mode CPU <= 80 % (sizing-rules §2.3; seed 000)"
SRC_RAM = "samdrey: store gives ~25 % of RAM to the ESE cache (sizing-rules §2.4)"
SRC_CAP = "Understanding Mailbox Database and Log Capacity Factors (sizing-rules §2.5)"
SRC_DB = "Exchange Server storage configuration options (sizing-rules §2.5)"
SRC_LOG = "Capacity Planning - Transaction Log Space is Critical (sizing-rules §2.2)"
SRC_LIMITS = "Exchange Server system requirements; 2016 scalability update (sizing-rules §2.3)"

IOPS_PER_MESSAGE = 0.00067  # DB IOPS of an active mailbox per message/day
IO_HEADROOM = 0.20  # the calculator's 20 % I/O overhead factor
PASSIVE_IO_PCT = 50.0  # Exchange 2013+: a passive copy does about half an active copy's IO
CACHE_MIB_PER_MESSAGE = 0.06  # ESE cache per mailbox per message/day (memory: binary)
CACHE_SHARE_OF_RAM = 0.25  # Exchange 2013+ gives ~25 % of RAM to the database cache
LOGS_PER_MESSAGE = 0.2  # 150 msgs/day at 75 KB -> 30 x 1 MiB logs per mailbox per day
BASE_MESSAGE_SIZE = 75 * KB
LOG_GROWTH_PER_DOUBLING = 0.9  # doubling the message size multiplies log volume by 1.9
CALENDAR_VERSIONING = 0.012  # share of quota kept for calendar version logging
SINGLE_ITEM_RECOVERY = 0.03  # ~3-6 % of quota with single item recovery [R]
BASELINE_MC_PER_CORE = 2000 / 33.75  # megacycles per SPECint_rate2006 unit per core

# Megacycles per mailbox per message/day: (active, passive). 2013 is the multi-role figure
# (mailbox-only 0.0425 x 1.375, SP1 CAS:Mailbox 3:8); 2019 has no published table and the
# calculator reuses the 2016 figures.
MC_SLOPES = {"2013": (0.0425 * 1.375, 0.0137), "2016": (0.0597, 0.014), "2019": (0.0597, 0.014)}
MAX_CORES = {"2013": 24, "2016": 24, "2019": 48}
MAX_RAM = {"2013": 96 * GIB, "2016": 192 * GIB, "2019": 256 * GIB}
MIN_RAM_2019 = 128 * GIB  # mailbox role, recommended minimum
RAM_SIZES_GIB = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
# the source writes "2 TB" and "200 GB"; decimal, as every size in sizing is
MAX_DB_WITH_COPIES = 2 * 10**12  # best practice with two or more HA copies
MAX_DB_STANDALONE = 200 * 10**9  # best practice without HA copies


@dataclass(frozen=True)
class MailboxTier:
    """One class of mailboxes: how many, how busy, how big (sizes decimal, in bytes)."""

    count: int
    messages_per_day: int
    mailbox_size: int = 2 * GB  # quota
    message_size: int = BASE_MESSAGE_SIZE  # average message


def iops_per_mailbox(messages_per_day: int, headroom: bool = True) -> float:
    """Jetstress' MailboxIops: 0.00067 x messages/day (x 1.2), to 3 decimals as Jetstress takes it.

    150 messages/day -> 0.101, or 0.121 with the 20 % headroom (seed 003: 60,000 x 0.121 = 7,260).
    """
    factor = 1 + IO_HEADROOM if headroom else 1.0
    return round_half_up(IOPS_PER_MESSAGE * messages_per_day * factor, 3)


def megacycles_per_mailbox(messages_per_day: int, version: str) -> tuple[float, float]:
    """(active, passive) megacycles, rounded to 2 decimals as the published tables are."""
    active, passive = MC_SLOPES[version]
    return (round_half_up(active * messages_per_day, 2),
            round_half_up(passive * messages_per_day, 2))


def megacycles_per_core(specint_per_core: float) -> float:
    """Exchange megacycles one core delivers, against the 2000 MHz / 33.75 baseline."""
    return specint_per_core * BASELINE_MC_PER_CORE


def cache_per_mailbox(messages_per_day: int) -> float:
    """ESE database cache per active mailbox, MiB (150 msgs -> 9 MiB)."""
    return CACHE_MIB_PER_MESSAGE * messages_per_day


def log_factor(message_size: int) -> float:
    """Log volume relative to 75 KB messages: 1.9x per doubling, interpolated linearly."""
    return max(0.1, 1 + LOG_GROWTH_PER_DOUBLING * (message_size / BASE_MESSAGE_SIZE - 1))


def mailbox_size_on_disk(t: MailboxTier, retention_days: float, sir: bool) -> float:
    """quota + whitespace (one day of mail) + dumpster (retained mail, calendar versions, SIR)."""
    daily = t.messages_per_day * t.message_size
    dumpster = daily * retention_days + t.mailbox_size * CALENDAR_VERSIONING
    if sir:
        dumpster += t.mailbox_size * SINGLE_ITEM_RECOVERY
    return t.mailbox_size + daily + dumpster


def next_ram_size(required: float) -> int:
    """The next common server memory size at or above `required` bytes."""
    for g in RAM_SIZES_GIB:
        if g * GIB >= required:
            return g * GIB
    return math.ceil(required / (256 * GIB)) * 256 * GIB
