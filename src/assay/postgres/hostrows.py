"""The rows a database sends (agent/pgfold.py folds pgbench's log into them, on its host or on
this machine for a local run), made samples, and a cluster's hosts' rows merged into the run's
seconds.

Every host's pgbench starts at the same instant, so second k of every host is the same
second of the run: a second of the cluster is the hosts' rows for k added up (counts and
sums added, maxima taken, histogram buckets added: percentiles come from the merged
buckets, never from averaged percentiles). A second is complete when every host still
running has sent it; a host that ended, or was lost, no longer holds the others back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from assay.metrics.histogram import Histogram
from assay.metrics.sampler import ComponentSpec, Sample
from assay.postgres.dataset import SCRIPTS
from assay.workloads.postgres import Params

Row = dict[str, dict[str, Any]]  # transaction stream ("tx", "new_order", ...) -> its counts
ADDED = ("n", "f", "ls", "gs")
HIGHEST = ("lm", "gm")
BUCKETS = ("h", "g")


def merge(rows: Iterable[Row]) -> Row:
    """The hosts' rows of one second, as one."""
    out: Row = {}
    for row in rows:
        for stream, counts in row.items():
            into = out.setdefault(stream, {"h": {}, "g": {}})
            for key in ADDED:
                into[key] = into.get(key, 0) + int(counts.get(key) or 0)
            for key in HIGHEST:
                into[key] = max(into.get(key, 0), int(counts.get(key) or 0))
            for key in BUCKETS:
                for b, n in (counts.get(key) or {}).items():
                    into[key][int(b)] = into[key].get(int(b), 0) + int(n)
    return out


def transaction_types(p: Params) -> list[str]:
    """The transaction types a workload's scripts count, in script order (pgbench's script
    number is the index): the TPC-C-like mix's, none for a built-in script."""
    return list(SCRIPTS) if p.driver == "tpcc" else []


@dataclass
class Names:
    """A postgres workload's components (workloads/postgres.py declares them)."""

    workload: str
    types: list[str] = field(default_factory=list)  # the TPC-C-like mix's transaction types
    rate: bool = False

    @classmethod
    def of(cls, workload: str, p: Params) -> Names:
        return cls(workload, transaction_types(p), bool(p.rate))

    def samples(self, row: Row, t: float, phase: str,
                target: Callable[[str], float | None]) -> list[Sample]:
        """One second's samples; `target(component)` is its fixed rate then, if any."""
        w = self.workload

        def sample(name: str, counts: dict[str, Any] | None, lag: bool = False) -> Sample:
            c = counts or {}
            n = int(c.get("f" if name.endswith(".failed") else "n") or 0)
            if name.endswith(".failed"):
                return Sample(name, t, 1.0, n, 0, 0.0, None, Histogram(), None, 0.0, phase)
            s, m, b = ("gs", "gm", "g") if lag else ("ls", "lm", "h")
            behind = int(c.get("gm") or 0) / 1e9 if name == f"{w}.tx.commit" else 0.0
            return Sample(name, t, 1.0, n, 0, float(c.get(s) or 0), int(c.get(m) or 0) or None,
                          Histogram({int(k): int(v) for k, v in (c.get(b) or {}).items()}),
                          target(name), behind, phase)

        tx = row.get("tx")
        out = [sample(f"{w}.tx.commit", tx), sample(f"{w}.tx.failed", tx)]
        if self.rate:
            out.append(sample(f"{w}.tx.lag", tx, lag=True))
        return out + [sample(f"{w}.{x}.commit", row.get(x)) for x in self.types]


class Seconds:
    """One workload's rows from its hosts, handed out by whole seconds."""

    def __init__(self, hosts: Iterable[str]):
        self.rows: dict[str, dict[int, Row]] = {h: {} for h in hosts}
        self.seen: dict[str, int] = {h: -1 for h in self.rows}  # the newest second per host
        self.closed: set[str] = set()  # ended or lost: sends no more
        self.next = 0  # the first second not handed out yet

    def add(self, host: str, second: int, row: Row) -> None:
        if host in self.closed:
            return
        at = max(second, self.next)  # late for a second handed out: counts in the next
        into = self.rows[host].get(at)
        self.rows[host][at] = merge([into, row]) if into else row
        self.seen[host] = max(self.seen[host], second)

    def close(self, host: str) -> None:
        self.closed.add(host)

    def ready(self, final: bool = False) -> list[tuple[int, dict[str, Row]]]:
        """The complete seconds, each with every host's row ({} for a host that sent none)."""
        waiting = [h for h in self.rows if h not in self.closed]
        newest = max(self.seen.values(), default=-1)
        last = newest if final or not waiting else min(self.seen[h] for h in waiting)
        out = []
        while self.next <= last:
            out.append((self.next, {h: self.rows[h].pop(self.next, {}) for h in self.rows}))
            self.next += 1
        return out


def rates(specs: dict[str, ComponentSpec], t: float) -> Callable[[str], float | None]:
    """Each component's fixed rate at `t` (None: closed loop, or not this host's)."""
    return lambda c: specs[c].rate_at(t) if c in specs else None
