"""PostgreSQL: a real database on the target, driven by pgbench (TPC-B-like or a TPC-C-like mix).

Not fio: assay creates a throw-away cluster whose data directory lives on the target, loads it
once (reused while unchanged, like the prefill), and runs pgbench beside any fio workloads
(assay.postgres.sidecar). Its transactions are graded like IO: `pg.tps >= target`,
`pg.lat_p99 < 50ms`, `pg.failed == 0`, `pg.lag.lat_p99 < 10ms` (schedule lag), `pg.nopm`.

Components: `NAME.tx.commit` (committed transactions: tps, latency from the due time),
`NAME.tx.failed` (failed or skipped), `NAME.tx.lag` (schedule lag, fixed rate only) and, for
the TPC-C-like mix, one `NAME.TYPE.commit` per transaction type (new_order, payment, ...).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from assay.metrics.sampler import ComponentSpec
from assay.scenario.models import Duration, Size, WorkloadBase
from assay.workloads.base import BuildContext, Stream

MB = 1_000_000
BYTES_PER_SCALE = 16 * MB  # pgbench -i: 100,000 accounts and their index per scale unit
BYTES_PER_WAREHOUSE = 100 * MB  # the TPC-C-like population of one warehouse (measured)
MIX = {  # TPROC-C's transaction mix (percent), the scripts in assay/postgres/tpcc/
    "new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}
NOT_FOR_POSTGRES = ("data", "access", "load", "prefill", "start", "stop")
PLACEMENT = ("count_per_host", "stagger")  # one database per host, started with the run


class Params(WorkloadBase):
    kind: Literal["postgres"] = "postgres"
    driver: Literal["pgbench", "tpcc"] = Field(
        "pgbench", description="pgbench's TPC-B-like scripts, or the TPC-C-like mix")
    script: Literal["tpcb-like", "simple-update", "select-only"] = Field(
        "tpcb-like", description="pgbench's built-in script (driver pgbench)")
    scale: int | None = Field(None, ge=1, le=100_000,
                              description="pgbench scale factor (default: from `dataset`, else 10)")
    warehouses: int | None = Field(None, ge=1, le=10_000,
                                   description="TPC-C warehouses (default: from `dataset`, else 1)")
    clients: int = Field(8, ge=1, le=1000, description="database sessions")
    threads: int = Field(2, ge=1, le=64, description="pgbench worker threads")
    rate: float | None = Field(None, gt=0, description="transactions/s, Poisson arrivals "
                                                       "(pgbench -R); default: as fast as it goes")
    latency_limit: Duration | None = Field(
        None, gt=0, description="with `rate`: transactions later than this are skipped, "
                                "and counted as failed")
    max_tries: int | None = Field(None, ge=1, le=100, description="tries of a transaction that "
                                  "hits a serialization failure or deadlock (tpcc default 10)")
    shared_buffers: Size | None = Field(None, description="default: `cache` of the dataset")
    cache: float = Field(0.1, gt=0, le=2.0, description="shared_buffers as a share of the "
                                                       "dataset, when not given")
    wal_path: str | None = Field(None, description="directory for the WAL (a second target: "
                                                  "the log disk)")
    settings: dict[str, str | int | float] = Field(
        default_factory=dict, description="more postgresql.conf settings, recorded in run.json")

    @field_validator(*PLACEMENT)
    @classmethod
    def _here(cls, v: Any, info: ValidationInfo) -> Any:
        one = {"count_per_host": (1,), "stagger": (0, 0.0)}
        if v not in one[info.field_name or ""]:  # the defaults (validated too) are fine
            raise ValueError("a postgres workload runs one database per host, from the run's "
                             "start: `count_per_host` and `stagger` do not apply")
        return v

    @field_validator("settings")
    @classmethod
    def _settings(cls, v: dict[str, str | int | float]) -> dict[str, str | int | float]:
        for key in v:
            if not key.replace("_", "").replace(".", "").isalnum():
                raise ValueError(f"{key!r} is not a PostgreSQL setting name")
            if key in ("port", "listen_addresses", "unix_socket_directories"):
                raise ValueError(f"{key} is assay's: the cluster listens on a private socket")
            if key == "shared_buffers":
                raise ValueError("give the workload's own `shared_buffers` (or `cache`)")
        return v

    @model_validator(mode="after")
    def _applies(self) -> Params:
        given = [k for k in NOT_FOR_POSTGRES if k in self.model_fields_set]
        if given:
            raise ValueError(f"{', '.join(given)} do not apply to a postgres workload")
        if self.latency_limit is not None and self.rate is None:
            raise ValueError("`latency_limit` needs a `rate` (pgbench skips late transactions "
                             "only at a fixed rate)")
        if self.threads > self.clients:
            raise ValueError(f"`threads` ({self.threads}) cannot exceed `clients` "
                             f"({self.clients})")
        if self.driver == "pgbench" and self.warehouses is not None:
            raise ValueError("`warehouses` is for driver tpcc; pgbench takes `scale`")
        if self.driver == "tpcc" and (self.scale is not None or "script" in self.model_fields_set):
            raise ValueError("driver tpcc takes `warehouses`, not `scale` or `script`")
        return self

    @property
    def size(self) -> int:
        """The scale factor (pgbench) or the warehouses (tpcc)."""
        per = BYTES_PER_SCALE if self.driver == "pgbench" else BYTES_PER_WAREHOUSE
        given = self.scale if self.driver == "pgbench" else self.warehouses
        if given is not None:
            return given
        if self.dataset is not None:
            return max(1, math.ceil(self.dataset / per))
        return 10 if self.driver == "pgbench" else 1

    @property
    def dataset_estimate(self) -> int:
        return self.size * (BYTES_PER_SCALE if self.driver == "pgbench" else BYTES_PER_WAREHOUSE)

    @property
    def tries(self) -> int:
        return self.max_tries or (10 if self.driver == "tpcc" else 1)


def build(name: str, p: Params, ctx: BuildContext) -> list[Stream]:
    specs = [ComponentSpec(f"{name}.tx.commit", [], "commit", p.rate, poisson=True),
             ComponentSpec(f"{name}.tx.failed", [], "failed", view=True)]
    if p.rate:
        specs.append(ComponentSpec(f"{name}.tx.lag", [], "lag", view=True))
    what = (f"pgbench {p.script}, scale {p.size}" if p.driver == "pgbench"
            else f"TPC-C-like mix, {p.size} warehouse{'s' if p.size > 1 else ''}")
    streams = [Stream(name, "tx", [], [], specs, description=what)]
    if p.driver == "tpcc":
        streams += [Stream(name, kind, [], [], [ComponentSpec(f"{name}.{kind}.commit", [],
                                                              "commit", view=True)],
                           transactional=False, description=f"{kind} transactions ({pct}%)")
                    for kind, pct in MIX.items()]
    pace = f"at {p.rate:g} tx/s" if p.rate else "as fast as it goes"
    ctx.notes.append(f"{name}: PostgreSQL on the target, {what}, {p.clients} clients {pace}; "
                     f"run by pgbench beside fio, not in the job file")
    return streams
