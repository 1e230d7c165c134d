"""`assay size cluster`: the options; the sizing is assay.sizing.cluster."""

from __future__ import annotations

import json
from pathlib import Path

import click

from assay.cli.size_common import DURATION, RATE, RATIO, SIZE, finish, output, state_units
from assay.exitcodes import UserError
from assay.sizing import cluster


def _load_workload(path: str) -> cluster.Demand:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"--workload {path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise UserError(f"--workload {path}: not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise UserError(f"--workload {path}: expected the JSON of `assay size ... --json`")
    return cluster.Demand.from_json(doc, name=Path(path).stem)


@click.command("cluster")
@output([
    click.option("--node-cores", type=int, required=True, help="Physical cores per node."),
    click.option("--node-ram", type=SIZE, required=True, help="RAM per node (e.g. 512GiB)."),
    click.option("--drives", type=int, required=True, help="Capacity drives per node."),
    click.option("--drive-size", type=SIZE, required=True,
                 help="Size of one drive, decimal as sold: 3.84TB = 3.84 x 10^12 bytes "
                      "(3.84TiB is binary)."),
    click.option("--drive-reserve", type=SIZE, default="0", show_default=True,
                 help="Capacity per drive the platform keeps (Sizer: ~80GB per SSD)."),
    click.option("--workload", "workloads", multiple=True, metavar="FILE",
                 help="Demand from `assay size exchange|oltp|vdi --json > FILE`; repeatable."),
    click.option("--cores", type=float, default=0.0, help="Extra demand: cores."),
    click.option("--ram", type=SIZE, default="0", help="Extra demand: RAM."),
    click.option("--capacity", type=SIZE, default="0",
                 help="Extra demand: logical capacity, before RF (e.g. 40TB)."),
    click.option("--iops", type=float, default=0.0, help="Extra demand: IOPS."),
    click.option("--rf", type=int, default=2, show_default=True,
                 help="Replication factor: 2 or 3."),
    click.option("--ec", is_flag=True, help="Erasure coding (EC-X) on top of the RF."),
    click.option("--ec-share", type=float, default=50.0, show_default=True,
                 help="Share of the theoretical EC saving to count, % (Odgers: 50-80)."),
    click.option("--plan", default="auto", show_default=True,
                 help="Spare failure domains: auto (RF2 N+1, N+2 above 24 nodes; RF3 N+2), "
                      "n+0, n+1, n+2 (RF3 n+1 on 6 nodes: the documented single-heal option)."),
    click.option("--awareness", type=click.Choice(["node", "block", "rack"]), default="node",
                 show_default=True, help="Failure domain the data is spread across."),
    click.option("--nodes-per-block", type=int, default=1, show_default=True,
                 help="Nodes per block (with --awareness block)."),
    click.option("--nodes-per-rack", type=int, default=1, show_default=True,
                 help="Nodes per rack (with --awareness rack)."),
    click.option("--nodes", type=int, help="Check this node count instead of computing one."),
    click.option("--cvm-cores", type=float,
                 help="CVM cores per node [default: 4 VDI/raw, 6 Exchange/SQL, weighted]."),
    click.option("--cvm-ram", type=SIZE, default="32GiB", show_default=True,
                 help="CVM RAM per node (+8 GiB added for RF3)."),
    click.option("--hypervisor-ram", type=SIZE, default="0", show_default=True,
                 help="RAM per node kept by the hypervisor."),
    click.option("--target-cpu", type=float, default=80.0, show_default=True,
                 help="CPU ceiling after the worst failure, %."),
    click.option("--max-full", type=float, default=90.0, show_default=True,
                 help="Capacity ceiling after the worst failure, % (KB 1557: 90; add nodes "
                      "at 80 %+, seed 000)."),
    click.option("--data-reduction", type=RATIO,
                 help="Data reduction ratio (e.g. 2:1): shown beside the unreduced figures, "
                      "never instead of them."),
    click.option("--node-iops", type=float,
                 help="IOPS one node delivers, if you measured it (adds an IOPS node count)."),
    click.option("--node-afr", type=float, default=5.0, show_default=True,
                 help="Annual failure rate of a node, % (reliability estimate)."),
    click.option("--rebuild-rate", type=RATE, default="200MiB/s", show_default=True,
                 help="Re-protection bandwidth per node (e.g. 200MB/s)."),
    click.option("--replacement-time", type=DURATION, default="48h", show_default=True,
                 help="Time to replace a node, the exposure window with N+0."),
    click.option("--restore-time", type=DURATION, default="24h", show_default=True,
                 help="Time to bring data back after more than FT node failures "
                      "(availability estimate)."),
])
def command(node_cores: int, node_ram: int, drives: int, drive_size: int,
            drive_reserve: int, workloads: tuple[str, ...], cores: float, ram: int,
            capacity: int, iops: float, rf: int, ec: bool, ec_share: float, plan: str,
            awareness: str, nodes_per_block: int, nodes_per_rack: int, nodes: int | None,
            cvm_cores: float | None, cvm_ram: int, hypervisor_ram: int, target_cpu: float,
            max_full: float, data_reduction: float | None, node_iops: float | None,
            node_afr: float, rebuild_rate: int, replacement_time: float, restore_time: float,
            as_json: bool, explain: bool) -> None:
    """Node count with RF2/RF3/EC and N+x spares; capacity, failure headroom, durability and
    availability in nines."""
    demands = [_load_workload(w) for w in workloads]
    if cores or ram or capacity or iops:
        demands.append(cluster.Demand("raw", cores, ram, capacity, iops, name="raw"))
    per_domain = {"node": 1, "block": nodes_per_block, "rack": nodes_per_rack}[awareness]
    d = cluster.ClusterDesign(
        node=cluster.NodeSpec(node_cores, node_ram, drives, drive_size, drive_reserve),
        workloads=tuple(demands), rf=rf, ec=ec, ec_share_pct=ec_share, plan=plan,
        awareness=awareness, nodes_per_domain=per_domain, nodes=nodes, cvm_cores=cvm_cores,
        cvm_ram=cvm_ram, hypervisor_ram=hypervisor_ram, target_cpu_pct=target_cpu,
        max_full_pct=max_full, data_reduction=data_reduction, node_iops=node_iops,
        afr_pct=node_afr, rebuild_rate=rebuild_rate, replacement_hours=replacement_time / 3600,
        restore_hours=restore_time / 3600)
    finish(cluster.size(d), as_json, explain, None, None)


state_units(command)
