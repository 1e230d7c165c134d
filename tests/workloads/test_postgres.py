"""kind postgres at plan time: its components, the database metrics of the threshold grammar,
and the refusals that must come before any IO (file:line, field)."""

from __future__ import annotations

import pytest

from assay.metrics.summary import Stats
from assay.plan import plan_text
from assay.scenario.overrides import resolve_param
from assay.scenario.yamlsource import ScenarioInvalid, load_yaml
from assay.thresholds.evaluate import evaluate
from assay.thresholds.grammar import ThresholdError, parse
from assay.workloads import kinds
from tests.cluster.test_group import hosts_in


def plan(workload: str, extra: str = ""):
    return plan_text(f"name: t\nworkloads:\n  pg: {workload}\n{extra}", "t.yaml")


def issues(workload: str, extra: str = "") -> list[tuple[int, str, str]]:
    with pytest.raises(ScenarioInvalid) as e:
        plan(workload, extra)
    return [(i.line, i.field, i.message) for i in e.value.issues]


def test_pgbench_components_and_no_fio_job():
    p = plan("{kind: postgres, scale: 3, rate: 500, latency_limit: 50ms}")
    assert {c.name: c.target_iops for c in p.components} == {
        "pg.tx.commit": 500, "pg.tx.failed": None, "pg.tx.lag": None}
    assert not p.jobs and not p.files  # the database is no fio job: nothing to prefill
    assert any("pgbench tpcb-like, scale 3" in n and "500 tx/s" in n for n in p.notes)


def test_tpcc_has_a_component_per_transaction_type_and_sizes_from_dataset():
    p = plan("{kind: postgres, driver: tpcc, dataset: 250MB}")
    names = {c.name for c in p.components}
    assert {"pg.tx.commit", "pg.new_order.commit", "pg.payment.commit",
            "pg.delivery.commit", "pg.stock_level.commit", "pg.order_status.commit"} <= names
    assert "pg.tx.lag" not in names  # closed loop: no schedule
    # the commits are the load; failures and each type's commits are views of it
    assert {c.name for c in p.components if not c.view} == {"pg.tx.commit"}
    assert p.resolved.workloads["pg"].size == 3  # 300 MB / 100 MB per warehouse


def stats(name: str, ios: int, seconds: float = 10.0, target: float | None = None) -> Stats:
    return Stats(name, seconds, ios, 0, ios / seconds, 0.0, 2.0, 1.0, 3.0, 40.0, 60.0, 80.0,
                 target, 0.0, 0.0)


def test_database_metrics_read_their_own_components():
    p = plan("{kind: postgres, driver: tpcc, rate: 100}", "thresholds:\n"
             "  pg.tps: '>= target'\n  pg.failed: '== 0'\n  pg.nopm: '>= 2000'\n"
             "  pg.lat_p99: '< 50ms'\n  pg.lag.lat_p99: '< 5ms'\n  pg.tpm: '>= 5000'\n")
    components = p.components
    s = {c.name: stats(c.name, 10) for c in components}
    s["pg.tx.commit"] = stats("pg.tx.commit", 1000, target=100.0)
    s["pg.new_order.commit"] = stats("pg.new_order.commit", 450)
    s["pg.tx.failed"] = stats("pg.tx.failed", 2)
    got = {r.threshold.text: (r.component, r.observed, r.passed)
           for r in evaluate(p.thresholds, components, s)}
    assert got["pg.tps >= target"] == ("pg.tx.commit", 100.0, True)
    assert got["pg.failed == 0"] == ("pg.tx.failed", 2.0, False)
    assert got["pg.nopm >= 2000"] == ("pg.new_order.commit", 2700.0, True)
    assert got["pg.tpm >= 5000"] == ("pg.tx.commit", 6000.0, True)
    # `pg.lat_p99` grades the transactions, not the lag, failures or one type of the mix
    assert got["pg.lat_p99 < 50ms"] == ("pg.tx.commit", 40.0, True)
    assert got["pg.lag.lat_p99 < 5ms"][0] == "pg.tx.lag"
    assert len(evaluate(p.thresholds, components, s)) == 6


def test_database_metrics_need_a_database():
    with pytest.raises(ThresholdError):
        parse("pg.failed >= target")
    text = "name: t\nworkloads:\n  db: {kind: oltp, preset: standard}\nthresholds:\n" \
           "  db.tps: '>= 10'\n"
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "t.yaml")
    assert "matches no component" in str(e.value)


@pytest.mark.parametrize(("workload", "field", "words"), [
    ("{kind: postgres, latency_limit: 10ms}", "workloads.pg", "needs a `rate`"),
    ("{kind: postgres, clients: 2, threads: 4}", "workloads.pg", "cannot exceed"),
    ("{kind: postgres, warehouses: 2}", "workloads.pg", "driver tpcc"),
    ("{kind: postgres, access: {distribution: zipf}}", "workloads.pg", "do not apply"),
    ("{kind: postgres, settings: {port: 5}}", "workloads.pg.settings", "private socket"),
    ("{kind: postgres, settings: {shared_buffers: 1GB}}", "workloads.pg.settings", "`cache`"),
    ("{kind: postgres, driver: mysql}", "workloads.pg.driver", ""),
    ("{kind: postgres, host: db2}", "workloads.pg.host", "give --hosts FILE"),
    ("{kind: postgres, count_per_host: 2}", "workloads.pg.count_per_host",
     "one database per host"),
])
def test_bad_postgres_workloads_are_refused_with_their_line(workload, field, words):
    ((line, where, message),) = issues(workload)
    assert line == 3 and where == field and words in message


def test_pg_backup_needs_a_postgres_workload_and_a_filesystem():
    steps = "timeline:\n  steps:\n    - {action: pg_backup, at: 5s, to: bk}\n"
    text = f"name: t\nworkloads:\n  db: {{kind: oltp, preset: standard}}\n{steps}"
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "t.yaml")
    ((issue),) = e.value.issues
    assert issue.line == 6 and "has none" in issue.message
    text = ("name: t\ntarget: {device: /dev/loop99}\nworkloads:\n  pg: {kind: postgres}\n"
            "timeline:\n  steps:\n    - {action: pg_backup, at: 5s, to: bk, workload: nope}\n")
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(text, "t.yaml")
    found = {(i.field, i.line) for i in e.value.issues}
    assert found == {("target.device", 2), ("timeline.steps[0].workload", 7)}


def test_pg_backup_plans_for_one_host_and_for_hosts(tmp_path):
    """One path: the step copies each host's database there (actions/pg_backup.py)."""
    text = ("name: t\nworkloads:\n  pg: {kind: postgres, hosts: ':2'}\n"
            "timeline:\n  steps:\n    - {action: pg_backup, at: 5s}\n")
    on_hosts = plan_text(text, "t.yaml", hosts=hosts_in(tmp_path, ["n1", "n2", "n3"]))
    local = plan_text(text.replace(", hosts: ':2'", ""), "t.yaml")
    for p in (on_hosts, local):
        assert [s.action for s in p.resolved.steps] == ["pg_backup"]
    assert on_hosts.cluster is not None
    assert [h for h, hp in on_hosts.cluster.hosts.items() if "pg" in hp.instances] == \
        ["n1", "n2"]


def test_search_can_vary_the_rate_or_the_clients():
    src = load_yaml("name: t\nworkloads:\n  pg: {kind: postgres, rate: 100}\n", "t.yaml")
    rate = resolve_param(src, "pg.rate", kinds())
    clients = resolve_param(src, "pg.clients", kinds())
    assert (rate.current, rate.integer) == (100, False) and clients.integer
