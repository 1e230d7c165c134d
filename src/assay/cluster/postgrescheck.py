"""`assay hosts check --scenario FILE`: the hosts a scenario places a postgres workload on
have PostgreSQL, and its user reaches their target (the agent's `pgbench check`, as a run
does before any IO). Other hosts are not asked."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.hosts.inventory import Host
from assay.plan import load
from assay.plan.instances import host_dir
from assay.postgres.hostspec import check_host
from assay.runners.ssh import SshRunner
from assay.workloads.postgres import Params


def needs(scenario: str, hosts: Sequence[Host]) -> dict[str, list[dict[str, Any]]]:
    """Host -> its databases (where they go), for the hosts that run one."""
    plan = load(scenario, hosts=list(hosts))
    assert plan.cluster is not None
    out: dict[str, list[dict[str, Any]]] = {}
    for h, hp in plan.cluster.hosts.items():
        for name, w in plan.resolved.workloads.items():
            if isinstance(w, Params) and name in hp.instances:
                base = f"{hp.host.path}/{w.subdir or host_dir(h, 0)}"
                out.setdefault(h, []).append({"base": base, "name": name, "wal": w.wal_path})
    return out


def check(scenario: str, hosts: Sequence[Host], accept_new: bool = False) \
        -> dict[str, str | None]:
    """Host -> why it cannot run the scenario's database (None: it can)."""
    wanted = needs(scenario, hosts)
    by_name = {h.name: h for h in hosts}

    def one(name: str) -> str | None:
        with tempfile.TemporaryDirectory(prefix="assay-hostcheck-") as d:
            runner = SshRunner(by_name[name], Path(d), run_id="hostcheck", accept_new=accept_new)
            try:
                return check_host(runner, _bindir(by_name[name]), wanted[name])
            except Exception as e:  # noqa: BLE001 - said per host, as the other checks are
                return f"the postgres workload cannot be checked there: {e}"
            finally:
                runner.close()

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(wanted)))) as pool:
        return dict(zip(wanted, pool.map(one, wanted), strict=True))


def _bindir(host: Host) -> str | None:
    given = host.vars.get("assay_pg_bindir")
    return str(given) if given else None
