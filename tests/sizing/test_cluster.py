"""Resiliency, capacity and node-count rules against the published examples (sizing-rules §1)."""

import math

import pytest

from assay.exitcodes import UserError
from assay.sizing import capacity, cluster, resiliency
from assay.sizing.cluster import ClusterDesign, Demand, NodeSpec

GIB = 1 << 30
TIB = 1 << 40


# ---------------------------------------------------------------- resiliency rules (seed 002)

def test_minimum_nodes_per_rf():
    assert resiliency.min_nodes(2) == 3
    assert resiliency.min_nodes(3) == 5


def test_rf3_self_heal_needs_six_nodes_for_one_failure_and_seven_for_two():
    assert resiliency.self_heal_min_nodes(3, 1) == 6
    assert resiliency.self_heal_min_nodes(3, 2) == 7
    assert resiliency.self_heal_min_nodes(2, 1) == 4  # 4-node RF2 heals into 3 (Part 9)


@pytest.mark.parametrize("rf, per_block, spare", [(2, 4, 4), (2, 2, 2), (3, 2, 4), (3, 4, 8)])
def test_block_awareness_spares_cover_whole_blocks(rf, per_block, spare):
    failures = resiliency.planned_failures(rf, 12, None)
    assert resiliency.spare_nodes(failures, per_block) == spare


def test_rf2_is_n_plus_1_up_to_24_nodes_then_n_plus_2():
    assert resiliency.planned_failures(2, 24, None) == 1
    assert resiliency.planned_failures(2, 25, None) == 2
    assert resiliency.planned_failures(3, 6, None) == 2
    assert resiliency.planned_failures(2, 30, resiliency.parse_plan("n+1")) == 1


@pytest.mark.parametrize("rf, nodes, strip", [
    (2, 3, None), (2, 4, (2, 1)), (2, 5, (3, 1)), (2, 6, (4, 1)), (2, 7, (4, 1)), (2, 32, (4, 1)),
    (3, 5, None), (3, 6, (2, 2)), (3, 7, (3, 2)), (3, 8, (4, 2)), (3, 32, (4, 2))])
def test_ec_strip_table(rf, nodes, strip):
    assert resiliency.ec_strip(rf, nodes) == strip


def test_ec_overheads():
    assert resiliency.ec_overhead(2, 1) == 1.5
    assert resiliency.ec_overhead(4, 1) == 1.25
    assert resiliency.ec_overhead(4, 2) == 1.5
    # Odgers: RF3 + EC 4/2 doubles usable, 3.33 -> 6.66 TB per 10 TB node
    assert 10 / resiliency.ec_overhead(4, 2) == pytest.approx(2 * 10 / 3)


def test_rf4_is_refused():
    with pytest.raises(UserError, match="2 or 3"):
        resiliency.min_nodes(4)


# ---------------------------------------------------------------- capacity (§1.4, §1.5)

def test_three_node_rf2_n_plus_1_sizer_example():
    # 3 nodes, 34 TiB extent store, RF2 + N+1 -> (34 - 34/3) / 2 = 11.33 TiB
    usable = capacity.usable_rf([34 / 3 * TIB] * 3, rf=2, spare=1)
    assert usable / TIB == pytest.approx(11.33, abs=0.005)


def test_odgers_100_tb_minus_one_node_rf2():
    # 100 TB raw, lose one 4.8 TB node -> 95.2 -> RF2 -> 47.6 TB
    nodes = [4.8] * 20 + [4.0]
    assert sum(nodes) == pytest.approx(100)
    assert capacity.usable_rf(nodes, rf=2, spare=1) == pytest.approx(47.6)


def test_mixed_nodes_20_and_10_tb_hold_only_10_tb_of_rf2_data():
    assert capacity.replicable([20, 10], 2) == 10
    assert capacity.replicable([10, 10, 10], 2) == 15
    assert capacity.replicable([30, 10, 10], 3) == 10


def test_prism_ec_example():
    # 4 x 20 TB, RF2 = 40 TB usable; with EC 2/1 -> 80 / 1.5 = 53 TB
    assert capacity.usable_rf([20] * 4, 2, spare=0) == 40
    assert capacity.usable_ec([20] * 4, resiliency.ec_overhead(2, 1), spare=0) == \
        pytest.approx(53.3, abs=0.05)


def test_kb1557_recommended_is_90_percent_of_capacity_after_spares():
    # RF3: M = 0.9 x (T - (N1 + N2)), in logical terms / 3
    caps = [10.0] * 8
    assert capacity.recommended(capacity.usable_rf(caps, 3, spare=2)) == \
        pytest.approx(0.9 * (80 - 20) / 3)


def test_partial_ec_saving():
    assert capacity.effective_overhead(2, None, 0.5) == 2
    assert capacity.effective_overhead(2, 1.25, 1.0) == 1.25
    assert capacity.effective_overhead(2, 1.25, 0.5) == pytest.approx(1.625)


# ---------------------------------------------------------------- node count

NODE = NodeSpec(cores=32, ram=512 * GIB, drives=6, drive_size=4 * TIB)


def design(**kw):
    base = dict(node=NODE, workloads=(Demand("raw", 10, 64 * GIB, 1 * TIB),))
    base.update(kw)
    return ClusterDesign(**base)


def test_small_demand_gets_the_rule_minimum():
    assert cluster.nodes_needed(design(rf=2)) == 4   # RF2 + N+1 self-heal
    assert cluster.nodes_needed(design(rf=3)) == 7   # RF3 + N+2: self-heal from two failures
    assert cluster.nodes_needed(design(rf=2, ec=True)) == 4


def test_block_awareness_rounds_to_whole_blocks_and_needs_three():
    d = design(awareness="block", nodes_per_domain=4)
    assert cluster.nodes_needed(d) == 12
    r = cluster.size(d)
    assert r.figures["spare_nodes"].value == 4
    assert r.figures["domains"].value == 3


def test_cpu_bound_demand_uses_surviving_nodes_at_80_percent():
    # 28 usable cores per node (32 - 4 CVM) x 0.8 = 22.4 per node; 200 cores -> 9 nodes + 1
    d = design(workloads=(Demand("raw", 200, 64 * GIB, 1 * TIB),))
    assert cluster.nodes_needed(d) == 10
    r = cluster.size(d)
    assert r.figures["nodes_for_cpu"].value == 9
    assert r.figures["cpu_after_failure"].value <= 80
    assert r.figures["cpu_after_failure"].value > r.figures["cpu_normal"].value


def test_storage_bound_demand():
    # 24 TiB per node, 90 % usable, RF2: 100 TiB logical -> 200 / 21.6 = 9.26 -> 10 + 1 spare
    d = design(workloads=(Demand("raw", 1, GIB, 100 * TIB),))
    assert cluster.nodes_needed(d) == 11
    r = cluster.size(d)
    assert r.figures["recommended"].value >= 100 * TIB
    assert cluster.nodes_needed(design(workloads=(Demand("raw", 1, GIB, 100 * TIB),),
                                       rf=3)) > 11


def test_large_rf2_cluster_switches_to_n_plus_2():
    d = design(workloads=(Demand("raw", 22.4 * 24, GIB, TIB),))  # exactly 24 nodes of CPU
    n = cluster.nodes_needed(d)
    assert n == 26  # 24 + 1 = 25 > 24 -> N+2
    assert cluster.size(d).figures["spare_nodes"].value == 2


def test_given_node_count_is_checked_not_replaced():
    r = cluster.size(design(nodes=3))
    assert r.figures["nodes"].value == 3
    failed = {c.rule for c in r.failed}
    assert "Enough nodes for the demand and the rules" in failed
    assert "RF2 self-heals after losing 1 node(s)" in failed


def test_n_plus_0_and_rf3_n_plus_1_are_flagged():
    assert "Never size N+0" in {c.rule for c in cluster.size(design(plan="n+0", nodes=4)).failed}
    assert "RF3: size for N+2 as a minimum" in {
        c.rule for c in cluster.size(design(rf=3, plan="n+1", nodes=6)).failed}


def test_cvm_cores_are_weighted_by_workload_cores():
    d = design(workloads=(Demand("exchange", 30, GIB, TIB), Demand("vdi", 10, GIB, TIB)))
    assert cluster.cvm_cores(d) == pytest.approx(0.75 * 6 + 0.25 * 4)
    assert cluster.cvm_ram(design(rf=3)) == 40 * GIB


def test_data_reduction_is_shown_beside_never_instead():
    d = design(workloads=(Demand("raw", 1, GIB, 100 * TIB),), data_reduction=2.0)
    r = cluster.size(d)
    assert r.figures["nodes"].value == cluster.nodes_needed(design(
        workloads=(Demand("raw", 1, GIB, 100 * TIB),)))
    assert r.figures["nodes_needed_with_reduction"].value < r.figures["nodes"].value
    assert r.figures["recommended_effective"].value == pytest.approx(
        2 * r.figures["recommended"].value)


def test_ec_reduces_nodes_for_storage_bound_demand():
    plain = cluster.nodes_needed(design(workloads=(Demand("raw", 1, GIB, 100 * TIB),)))
    ec = cluster.nodes_needed(design(workloads=(Demand("raw", 1, GIB, 100 * TIB),), ec=True,
                                     ec_share_pct=100))
    assert ec < plain


def test_demand_from_json_requires_the_demand_block():
    d = Demand.from_json({"demand": {"kind": "vdi", "cores": 5, "ram_bytes": 1,
                                     "capacity_bytes": 2}}, "x")
    assert d.kind == "vdi" and d.cores == 5
    with pytest.raises(UserError, match="demand"):
        Demand.from_json({"figures": {}}, "x.json")


def test_invalid_cluster_inputs():
    with pytest.raises(UserError, match="2 or 3"):
        cluster.size(design(rf=4))
    with pytest.raises(UserError, match="negative"):
        cluster.size(design(workloads=(Demand("raw", -1, GIB, TIB),)))
    with pytest.raises(UserError, match="plan"):
        cluster.size(design(plan="n+7"))


def test_capacity_ceiling_is_configurable_and_checked():
    d = design(workloads=(Demand("raw", 1, GIB, 100 * TIB),), max_full_pct=80)
    r = cluster.size(d)
    assert r.figures["recommended"].value == pytest.approx(0.8 * r.figures["usable"].value)
    assert "80 %" in r.figures["recommended"].label
    assert any(c.rule.startswith("Storage <= 80 %") for c in r.checks)
    assert cluster.nodes_needed(d) > cluster.nodes_needed(design(
        workloads=(Demand("raw", 1, GIB, 100 * TIB),)))
    with pytest.raises(UserError, match="--max-full"):
        cluster.size(design(max_full_pct=0))


def test_durability_and_availability_in_nines():
    rf2 = cluster.size(design(workloads=(Demand("raw", 10, GIB, 50 * TIB),)))
    rf3 = cluster.size(design(workloads=(Demand("raw", 10, GIB, 50 * TIB),), rf=3))
    for r in (rf2, rf3):
        f = r.figures
        assert f["durability_nines"].value == pytest.approx(
            -math.log10(f["loss_probability"].value))
        assert 0 < 100 - f["availability"].value < 1e-3
    assert rf3.figures["durability_nines"].value > rf2.figures["durability_nines"].value
    longer = cluster.size(design(workloads=(Demand("raw", 10, GIB, 50 * TIB),),
                                 restore_hours=240))
    assert longer.figures["availability_nines"].value == pytest.approx(
        rf2.figures["availability_nines"].value - 1)  # 10x the restore time: one nine less
