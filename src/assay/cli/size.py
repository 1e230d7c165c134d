"""`assay size`: application profile -> requirements -> resilient cluster -> validating scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.exitcodes import UserError
from assay.scenario import units
from assay.sizing import cluster as cluster_mod
from assay.sizing import emit, exchange, oltp, vdi
from assay.sizing.explain import Result
from assay.sizing.render import render


class _Unit(click.ParamType):
    """A size, duration, ratio or percentage in fio's units; a bad value is a one-line error."""

    def __init__(self, name: str, parse: Any, example: str):
        self.name = name
        self._parse = parse
        self._example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except units.UnitError as e:
            opt = param.opts[0] if param is not None and param.opts else "value"
            raise UserError(f"{opt}: {e}") from None


SIZE = _Unit("size", units.parse_size, "8GiB")
DURATION = _Unit("duration", units.parse_duration, "20ms")
RATIO = _Unit("ratio", units.parse_ratio, "2:1")
PERCENT = _Unit("percent", units.parse_percent, "80")


def _output(options: list[Any]) -> Any:
    """--json and --explain, shared by every subcommand."""
    def decorate(f: Any) -> Any:
        f = click.option("--json", "as_json", is_flag=True,
                         help="Print one JSON document (figures with formulas, checks, demand) "
                              "instead of tables.")(f)
        f = click.option("--explain", is_flag=True,
                         help="Show the formula, inputs and source behind every number.")(f)
        for o in reversed(options):
            f = o(f)
        return f
    return decorate


def _emit_option() -> Any:
    return click.option("--emit-scenario", "emit_path", metavar="FILE",
                        help="Write the scenario YAML that validates this design: one "
                             "server's/node's load after the worst failure. Run it with "
                             "`assay run FILE`.")


def _finish(result: Result, as_json: bool, explain: bool, scenario: str | None,
            emit_path: str | None) -> None:
    written = None
    if scenario is not None and emit_path:
        written = str(emit.write(emit_path, scenario))
    if as_json:
        doc = result.to_json()
        doc["scenario_file"] = written
        click.echo(json.dumps(doc, indent=2))
    else:
        console = Console(highlight=False)
        render(result, console, explain=explain)
        if written:
            console.print(f"scenario written to {written}: run it with `assay run {written}`",
                          markup=False)
    if result.failed:
        click.get_current_context().exit(1)


@click.group("size", context_settings={"help_option_names": ["-h", "--help"]})
def command() -> None:
    """Size a deployment from its application profile and emit the scenario that proves it.

    \b
    Exit codes: 0 every design rule holds, 1 at least one fails (the numbers
    and the scenario are still produced), 2 invalid input.

    \b
    Examples:
      assay size exchange --mailboxes 10000 --messages 150 --servers 4 \\
          --cores 24 --specint-per-core 50 --exchange-version 2016
      assay size vdi --desktops 1000 --profile knowledge --nodes 8
      assay size cluster --node-cores 32 --node-ram 512GiB --drives 6 \\
          --drive-size 3.84TiB --workload exchange.json --rf 2
    """


# --------------------------------------------------------------------------------- exchange

def _tier(text: str) -> exchange.MailboxTier:
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise UserError(f"--tier {text!r}: expected MAILBOXES:MESSAGES:MAILBOX_SIZE"
                        f"[:MESSAGE_SIZE], e.g. 5000:150:2GiB:75KiB")
    try:
        count, msgs = int(parts[0]), int(parts[1])
        size = units.parse_size(parts[2])
        msg = units.parse_size(parts[3]) if len(parts) == 4 else exchange.BASE_MESSAGE_SIZE
    except (ValueError, units.UnitError) as e:
        raise UserError(f"--tier {text!r}: {e}") from None
    return exchange.MailboxTier(count, msgs, size, msg)


@command.command("exchange")
@_output([
    click.option("--mailboxes", type=int, help="Mailboxes (single tier; or use --tier)."),
    click.option("--messages", type=int, default=150, show_default=True,
                 help="Messages sent + received per mailbox per day."),
    click.option("--mailbox-size", type=SIZE, default="2GiB", show_default=True,
                 help="Mailbox quota (fio units: 2GiB, 500MiB)."),
    click.option("--message-size", type=SIZE, default="75KiB", show_default=True,
                 help="Average message size."),
    click.option("--tier", "tiers", multiple=True, metavar="N:MSGS:SIZE[:MSGSIZE]",
                 help="A mailbox tier, e.g. 5000:150:2GiB:75KiB; repeat for up to 4 tiers."),
    click.option("--servers", type=int, required=True, help="Mailbox servers in the DAG."),
    click.option("--copies", type=int, default=2, show_default=True,
                 help="Highly available copies of each database."),
    click.option("--cores", type=int, default=24, show_default=True,
                 help="Physical cores per server."),
    click.option("--specint-per-core", type=float, required=True,
                 help="SPECint_rate2006 of the server divided by its cores (e.g. 1200/24 = 50)."),
    click.option("--exchange-version", type=click.Choice(["2013", "2016", "2019"]),
                 default="2019", show_default=True, help="Exchange version (CPU table, limits)."),
    click.option("--failures", type=int,
                 help="Servers lost in the worst failure mode [default: copies - 1]."),
    click.option("--databases", type=int,
                 help="Databases per copy [default: from the 2 TiB / 200 GiB size rule]."),
    click.option("--headroom/--no-headroom", default=True, show_default=True,
                 help="Add the calculator's 20 % I/O overhead to IOPS per mailbox."),
    click.option("--log-days", type=float, default=3.0, show_default=True,
                 help="Days of transaction logs kept on disk."),
    click.option("--retention-days", type=float, default=14.0, show_default=True,
                 help="Deleted item retention, days."),
    click.option("--growth", type=float, default=20.0, show_default=True,
                 help="Database growth overhead, %."),
    click.option("--content-index", type=float, default=10.0, show_default=True,
                 help="Content index size, % of the database."),
    click.option("--single-item-recovery/--no-single-item-recovery", default=True,
                 show_default=True, help="Count 3 % of the quota for single item recovery."),
    click.option("--hypervisor-overhead", type=float, default=0.0, show_default=True,
                 help="CPU lost to the hypervisor, %."),
    click.option("--ram", type=SIZE, help="RAM per server, to check [default: recommend one]."),
    click.option("--max-cpu", type=float, default=80.0, show_default=True,
                 help="CPU ceiling in the worst failure mode, %."),
    _emit_option(),
])
def exchange_cmd(mailboxes: int | None, messages: int, mailbox_size: int, message_size: int,
                 tiers: tuple[str, ...], servers: int, copies: int, cores: int,
                 specint_per_core: float, exchange_version: str, failures: int | None,
                 databases: int | None, headroom: bool, log_days: float, retention_days: float,
                 growth: float, content_index: float, single_item_recovery: bool,
                 hypervisor_overhead: float, ram: int | None, max_cpu: float,
                 emit_path: str | None, as_json: bool, explain: bool) -> None:
    """Exchange mailbox role: IOPS, capacity, CPU and RAM per server, worst failure mode.

    Give one tier with --mailboxes/--messages/--mailbox-size, or up to four --tier.
    """
    if tiers and mailboxes is not None:
        raise UserError("give either --mailboxes (one tier) or --tier, not both")
    if tiers:
        parsed = tuple(_tier(t) for t in tiers)
    elif mailboxes is not None:
        parsed = (exchange.MailboxTier(mailboxes, messages, mailbox_size, message_size),)
    else:
        raise UserError("give --mailboxes (one tier) or --tier N:MSGS:SIZE")
    d = exchange.ExchangeDesign(
        tiers=parsed, servers=servers, specint_per_core=specint_per_core, cores_per_server=cores,
        copies=copies, version=exchange_version, failures=failures, databases=databases,
        headroom=headroom, log_days=log_days, retention_days=retention_days, growth_pct=growth,
        content_index_pct=content_index, single_item_recovery=single_item_recovery,
        hypervisor_overhead_pct=hypervisor_overhead, ram_per_server=ram, max_cpu_pct=max_cpu)
    result = exchange.size(d)
    scenario = emit.exchange_scenario(d, result) if emit_path else None
    _finish(result, as_json, explain, scenario, emit_path)


# --------------------------------------------------------------------------------- oltp

_NODE_OPTIONS = [
    click.option("--nodes", type=int,
                 help="Nodes the servers run on (needed for --emit-scenario: N-1 load)."),
    click.option("--failures", type=int, default=1, show_default=True,
                 help="Nodes lost in the worst failure."),
    click.option("--duration", default="1h", show_default=True,
                 help="Measured time of the emitted scenario."),
    click.option("--warmup", default="5m", show_default=True,
                 help="Warm-up of the emitted scenario."),
]


def _check_duration(opt: str, text: str) -> str:
    try:
        units.parse_duration(text)
    except units.UnitError as e:
        raise UserError(f"{opt}: {e}") from None
    return text


@command.command("oltp")
@_output([
    click.option("--preset", type=click.Choice(sorted(oltp.PRESETS)), default="standard",
                 show_default=True,
                 help="X-Ray profile per server: standard 4,000 data + 200 log IOPS; medium "
                      "6,000 + 300 over 568 GiB; high 6,000 + 400."),
    click.option("--data-iops", type=float, help="Data file IOPS per server (overrides preset)."),
    click.option("--log-iops", type=float, help="Log IOPS per server (overrides preset)."),
    click.option("--read-pct", type=float, help="Share of data IOPS that are reads, %."),
    click.option("--data-files", type=int, help="Data files per server."),
    click.option("--log-files", type=int, help="Log files per server."),
    click.option("--dataset", type=SIZE, help="Database size per server (fio units)."),
    click.option("--tps", type=float, help="Transactions per second per server (switches to "
                                           "the transaction model)."),
    click.option("--reads-per-txn", type=float, default=0.0, show_default=True,
                 help="Logical page reads per transaction (measure them)."),
    click.option("--writes-per-txn", type=float, default=0.0, show_default=True,
                 help="Page writes per transaction reaching the data files (checkpoints)."),
    click.option("--log-per-txn", type=SIZE, default="4KiB", show_default=True,
                 help="Log bytes per transaction."),
    click.option("--hit-ratio", type=float, default=0.0, show_default=True,
                 help="Buffer cache hit ratio, 0-1 (0 = every read reaches storage)."),
    click.option("--instances", type=int, default=1, show_default=True,
                 help="Database servers with this profile."),
    click.option("--vcpus", type=int, default=4, show_default=True,
                 help="vCPUs per database server (counted 1:1 as cores)."),
    click.option("--ram", type=SIZE, default="4GiB", show_default=True,
                 help="RAM per database server."),
    click.option("--growth", type=float, default=0.0, show_default=True,
                 help="Capacity growth to provision, %."),
    *_NODE_OPTIONS,
    click.option("--data-latency", default="20ms", show_default=True,
                 help="p99 data read latency threshold in the emitted scenario."),
    click.option("--log-latency", default="10ms", show_default=True,
                 help="p99 log write latency threshold in the emitted scenario."),
    _emit_option(),
])
def oltp_cmd(preset: str, data_iops: float | None, log_iops: float | None,
             read_pct: float | None, data_files: int | None, log_files: int | None,
             dataset: int | None, tps: float | None, reads_per_txn: float,
             writes_per_txn: float, log_per_txn: int, hit_ratio: float, instances: int,
             vcpus: int, ram: int, growth: float, nodes: int | None, failures: int,
             duration: str, warmup: str, data_latency: str, log_latency: str,
             emit_path: str | None, as_json: bool, explain: bool) -> None:
    """OLTP database servers: IOPS, throughput, capacity, and one node's load after a failure."""
    base = oltp.PRESETS[preset]
    transactions = None
    if tps is not None:
        transactions = oltp.Transactions(tps, reads_per_txn, writes_per_txn, log_per_txn,
                                         hit_ratio)
        if tps > 0 and 0 <= hit_ratio < 1:
            base = oltp.profile_from_transactions(transactions, dataset or base.dataset)
    overrides = {"data_iops": data_iops, "log_iops": log_iops, "read_pct": read_pct,
                 "data_files": data_files, "log_files": log_files, "dataset": dataset}
    given = {k: v for k, v in overrides.items() if v is not None}
    profile = oltp.OltpProfile(**{**vars(base), **given})
    label: str | None = preset if not given and transactions is None else None
    d = oltp.OltpDesign(profile=profile, preset=label, transactions=transactions,
                        instances=instances, vcpus=vcpus, ram=ram, growth_pct=growth,
                        nodes=nodes, failures=failures)
    result = oltp.size(d)
    scenario = None
    if emit_path:
        for opt, text in (("--data-latency", data_latency), ("--log-latency", log_latency),
                          ("--duration", duration), ("--warmup", warmup)):
            _check_duration(opt, text)
        scenario = emit.oltp_scenario(d, result, data_latency, log_latency, duration, warmup)
    _finish(result, as_json, explain, scenario, emit_path)


# --------------------------------------------------------------------------------- vdi

@command.command("vdi")
@_output([
    click.option("--desktops", type=int, required=True, help="Virtual desktops."),
    click.option("--profile", type=click.Choice(sorted(vdi.IOPS_PER_DESKTOP)),
                 default="knowledge", show_default=True,
                 help="Login VSI worker profile: task 8, knowledge 12, power 26 IOPS steady."),
    click.option("--os", "os_", type=click.Choice(sorted(vdi.USERS_PER_CORE)), default="win10",
                 show_default=True, help="Desktop OS, for the users-per-core density."),
    click.option("--vcpus", type=int, default=2, show_default=True,
                 help="vCPUs per desktop (recorded; cores come from the density)."),
    click.option("--ram", type=SIZE, default="2GiB", show_default=True,
                 help="RAM per desktop."),
    click.option("--images", type=int, default=1, show_default=True, help="Master images."),
    click.option("--image-size", type=SIZE, default="40GiB", show_default=True,
                 help="Size of one master image (3 versions are kept)."),
    click.option("--cache", type=SIZE, default="6GiB", show_default=True,
                 help="Write cache / clone delta per desktop."),
    click.option("--profile-size", type=SIZE, default="0", show_default=True,
                 help="User profile data per desktop kept on the cluster."),
    *_NODE_OPTIONS,
    click.option("--latency", default="20ms", show_default=True,
                 help="p99 read and write latency threshold in the emitted scenario."),
    _emit_option(),
])
def vdi_cmd(desktops: int, profile: str, os_: str, vcpus: int, ram: int, images: int,
            image_size: int, cache: int, profile_size: int, nodes: int | None, failures: int,
            duration: str, warmup: str, latency: str, emit_path: str | None, as_json: bool,
            explain: bool) -> None:
    """Virtual desktops: IOPS (steady, login and boot storms), cores, RAM and capacity."""
    d = vdi.VdiDesign(desktops=desktops, profile=profile, os=os_, vcpus=vcpus, ram=ram,
                      images=images, image_size=image_size, cache=cache,
                      profile_size=profile_size, nodes=nodes, failures=failures)
    result = vdi.size(d)
    scenario = None
    if emit_path:
        for opt, text in (("--latency", latency), ("--duration", duration),
                          ("--warmup", warmup)):
            _check_duration(opt, text)
        scenario = emit.vdi_scenario(d, result, latency, duration, warmup)
    _finish(result, as_json, explain, scenario, emit_path)


# --------------------------------------------------------------------------------- cluster

def _load_workload(path: str) -> cluster_mod.Demand:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"--workload {path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise UserError(f"--workload {path}: not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise UserError(f"--workload {path}: expected the JSON of `assay size ... --json`")
    return cluster_mod.Demand.from_json(doc, name=Path(path).stem)


@command.command("cluster")
@_output([
    click.option("--node-cores", type=int, required=True, help="Physical cores per node."),
    click.option("--node-ram", type=SIZE, required=True, help="RAM per node (e.g. 512GiB)."),
    click.option("--drives", type=int, required=True, help="Capacity drives per node."),
    click.option("--drive-size", type=SIZE, required=True,
                 help="Size of one drive (fio units: 3.84TiB is binary)."),
    click.option("--drive-reserve", type=SIZE, default="0", show_default=True,
                 help="Capacity per drive the platform keeps (Sizer: ~80 GB per SSD)."),
    click.option("--workload", "workloads", multiple=True, metavar="FILE",
                 help="Demand from `assay size exchange|oltp|vdi --json > FILE`; repeatable."),
    click.option("--cores", type=float, default=0.0, help="Extra demand: cores."),
    click.option("--ram", type=SIZE, default="0", help="Extra demand: RAM."),
    click.option("--capacity", type=SIZE, default="0",
                 help="Extra demand: logical capacity, before RF."),
    click.option("--iops", type=float, default=0.0, help="Extra demand: IOPS."),
    click.option("--rf", type=int, default=2, show_default=True,
                 help="Replication factor: 2 or 3."),
    click.option("--ec", is_flag=True, help="Erasure coding (EC-X) on top of the RF."),
    click.option("--ec-share", type=float, default=50.0, show_default=True,
                 help="Share of the theoretical EC saving to count, % (Odgers: 50-80)."),
    click.option("--plan", default="auto", show_default=True,
                 help="Spare failure domains: auto (RF2 N+1, N+2 above 24 nodes; RF3 N+2), "
                      "n+0, n+1, n+2."),
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
    click.option("--data-reduction", type=RATIO,
                 help="Data reduction ratio (e.g. 2:1): shown beside the unreduced figures, "
                      "never instead of them."),
    click.option("--node-iops", type=float,
                 help="IOPS one node delivers, if you measured it (adds an IOPS node count)."),
    click.option("--node-afr", type=float, default=5.0, show_default=True,
                 help="Annual failure rate of a node, % (reliability estimate)."),
    click.option("--rebuild-rate", type=SIZE, default="200MiB", show_default=True,
                 help="Re-protection bandwidth per node, per second."),
    click.option("--replacement-time", type=DURATION, default="48h", show_default=True,
                 help="Time to replace a node, the exposure window with N+0."),
])
def cluster_cmd(node_cores: int, node_ram: int, drives: int, drive_size: int,
                drive_reserve: int, workloads: tuple[str, ...], cores: float, ram: int,
                capacity: int, iops: float, rf: int, ec: bool, ec_share: float, plan: str,
                awareness: str, nodes_per_block: int, nodes_per_rack: int, nodes: int | None,
                cvm_cores: float | None, cvm_ram: int, hypervisor_ram: int, target_cpu: float,
                data_reduction: float | None, node_iops: float | None, node_afr: float,
                rebuild_rate: int, replacement_time: float, as_json: bool,
                explain: bool) -> None:
    """Node count with RF2/RF3/EC and N+x spares; capacity, failure headroom, reliability."""
    demands = [_load_workload(w) for w in workloads]
    if cores or ram or capacity or iops:
        demands.append(cluster_mod.Demand("raw", cores, ram, capacity, iops, name="raw"))
    per_domain = {"node": 1, "block": nodes_per_block, "rack": nodes_per_rack}[awareness]
    d = cluster_mod.ClusterDesign(
        node=cluster_mod.NodeSpec(node_cores, node_ram, drives, drive_size, drive_reserve),
        workloads=tuple(demands), rf=rf, ec=ec, ec_share_pct=ec_share, plan=plan,
        awareness=awareness, nodes_per_domain=per_domain, nodes=nodes, cvm_cores=cvm_cores,
        cvm_ram=cvm_ram, hypervisor_ram=hypervisor_ram, target_cpu_pct=target_cpu,
        data_reduction=data_reduction, node_iops=node_iops, afr_pct=node_afr,
        rebuild_rate=rebuild_rate, replacement_hours=replacement_time / 3600)
    _finish(cluster_mod.size(d), as_json, explain, None, None)

