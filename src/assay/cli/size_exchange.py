"""`assay size exchange`: the options; the sizing is assay.sizing.exchange."""

from __future__ import annotations

import click

from assay.cli.size_common import DURATION, SIZE, emit_option, finish, output, state_units
from assay.exitcodes import UserError
from assay.sizing import emit, esrp, exchange, units


def _tier(text: str) -> exchange.MailboxTier:
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise UserError(f"--tier {text!r}: expected MAILBOXES:MESSAGES:MAILBOX_SIZE"
                        f"[:MESSAGE_SIZE], e.g. 5000:150:2GB:75KB")
    try:
        count, msgs = int(parts[0]), int(parts[1])
    except ValueError:
        raise UserError(f"--tier {text!r}: mailboxes and messages are whole numbers") from None
    try:
        quota = units.parse_size(parts[2])
        msg = units.parse_size(parts[3]) if len(parts) == 4 else exchange.BASE_MESSAGE_SIZE
    except UserError as e:
        raise UserError(f"--tier {text!r}: {e}") from None
    return exchange.MailboxTier(count, msgs, quota, msg)


def _tiers(mailboxes: int | None, tiers: tuple[str, ...], messages: int, mailbox_size: int,
           message_size: int, iops: float | None, headroom: bool,
           ) -> tuple[exchange.MailboxTier, ...]:
    if tiers and mailboxes is not None:
        raise UserError("give either --mailboxes (one tier) or --tier, not both")
    if tiers:
        return tuple(_tier(t) for t in tiers)
    if mailboxes is None and iops is not None:
        # the inverse question: as many mailboxes as the measured IOPS carry
        mailboxes = exchange.mailboxes_for_iops(iops, messages, headroom)
        if mailboxes < 1:
            raise UserError(f"--iops {iops:g} carries no mailbox at {messages} messages/day")
    if mailboxes is None:
        raise UserError("give --mailboxes (one tier), --tier N:MSGS:SIZE, or --iops (the "
                        "mailboxes a measured IOPS figure supports)")
    return (exchange.MailboxTier(mailboxes, messages, mailbox_size, message_size),)


@click.command("exchange")
@output([
    click.option("--mailboxes", type=int, help="Mailboxes (single tier; or use --tier)."),
    click.option("--messages", type=int, default=150, show_default=True,
                 help="Messages sent + received per mailbox per day."),
    click.option("--mailbox-size", type=SIZE, default="2GB", show_default=True,
                 help="Mailbox quota, decimal: 800MB = 800 x 10^6 bytes (binary: 800MiB)."),
    click.option("--message-size", type=SIZE, default="75KB", show_default=True,
                 help="Average message size (decimal KB)."),
    click.option("--tier", "tiers", multiple=True, metavar="N:MSGS:SIZE[:MSGSIZE]",
                 help="A mailbox tier, e.g. 5000:150:2GB:75KB; repeat for up to 4 tiers."),
    click.option("--servers", type=int, required=True,
                 help="Mailbox servers in the DAG (Jetstress servers)."),
    click.option("--copies", type=int, default=2, show_default=True,
                 help="Highly available copies of each database."),
    click.option("--cores", type=int, default=24, show_default=True,
                 help="Physical cores per server."),
    click.option("--specint-per-core", type=float,
                 help="SPECint_rate2006 of the server divided by its cores (e.g. 1200/24 = "
                      "50) [default: CPU not sized]."),
    click.option("--exchange-version", type=click.Choice(["2013", "2016", "2019"]),
                 default="2019", show_default=True, help="Exchange version (CPU table, limits)."),
    click.option("--failures", type=int,
                 help="Servers lost in the worst failure mode [default: copies - 1]."),
    click.option("--databases", type=int,
                 help="Databases in all, each with `copies` copies [default: from the 2 TB / "
                      "200 GB size rule]."),
    click.option("--databases-per-server", type=int,
                 help="Active databases per server with all servers up (Jetstress' databases "
                      "per server): databases in all = this x servers."),
    click.option("--headroom/--no-headroom", default=True, show_default=True,
                 help="Add the calculator's 20 % I/O overhead to IOPS per mailbox."),
    click.option("--passive-io", type=float, default=exchange.PASSIVE_IO_PCT, show_default=True,
                 help="IO of a passive copy, % of an active copy's (Exchange 2013+: ~50)."),
    click.option("--iops", type=float,
                 help="Measured Jetstress IOPS, all servers: how many mailboxes they support "
                      "(without --mailboxes, size for that many)."),
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
    click.option("--ram", type=SIZE, help="RAM per server, to check (e.g. 128GiB) "
                                          "[default: recommend one]."),
    click.option("--max-cpu", type=float, default=80.0, show_default=True,
                 help="CPU ceiling in the worst failure mode, %."),
    click.option("--emit-load", type=click.Choice(["worst", "normal", "cluster"]),
                 default="worst", show_default=True,
                 help="What --emit-scenario writes: one server's Jetstress load after the worst "
                      "failure (N-1) or in normal operation; or cluster: ESRP on a cluster, "
                      "every server's load on its own host (--hosts), one server lost mid-run "
                      "and the survivors stepping up to their N-1 load."),
    click.option("--emit-iops", type=float,
                 help="--emit-load cluster: IOPS per server in normal operation, every rate "
                      "scaled to it (a small lab) [default: as sized]."),
    click.option("--emit-dataset", type=SIZE,
                 help="--emit-load cluster: Jetstress data per server, e.g. 96MiB for a "
                      "small lab [default: as sized]."),
    click.option("--emit-duration", type=DURATION, default="2h", show_default=True,
                 help="--emit-load cluster: the run's length; the server is lost at its "
                      "middle."),
    emit_option("one Jetstress server's load, N-1 unless --emit-load normal"),
])
def command(mailboxes: int | None, messages: int, mailbox_size: int, message_size: int,
            tiers: tuple[str, ...], servers: int, copies: int, cores: int,
            specint_per_core: float | None, exchange_version: str, failures: int | None,
            databases: int | None, databases_per_server: int | None, headroom: bool,
            passive_io: float, iops: float | None, log_days: float, retention_days: float,
            growth: float, content_index: float, single_item_recovery: bool,
            hypervisor_overhead: float, ram: int | None, max_cpu: float, emit_load: str,
            emit_iops: float | None, emit_dataset: int | None, emit_duration: float,
            emit_path: str | None, as_json: bool, explain: bool) -> None:
    """Exchange mailbox role: Jetstress targets per server (normal and N-1), IOPS, capacity,
    CPU and RAM.

    Give one tier with --mailboxes/--messages/--mailbox-size, up to four --tier, or --iops to
    ask how many mailboxes a measured IOPS figure supports.
    """
    if iops is not None and iops <= 0:
        raise UserError(f"--iops must be positive, got {iops:g}")
    parsed = _tiers(mailboxes, tiers, messages, mailbox_size, message_size, iops, headroom)
    d = exchange.ExchangeDesign(
        tiers=parsed, servers=servers, specint_per_core=specint_per_core, cores_per_server=cores,
        copies=copies, version=exchange_version, failures=failures, databases=databases,
        databases_per_server=databases_per_server, headroom=headroom, passive_io_pct=passive_io,
        log_days=log_days, retention_days=retention_days, growth_pct=growth,
        content_index_pct=content_index, single_item_recovery=single_item_recovery,
        hypervisor_overhead_pct=hypervisor_overhead, ram_per_server=ram, max_cpu_pct=max_cpu,
        measured_iops=iops)
    result = exchange.size(d)
    if not emit_path:
        scenario = None
    elif emit_load == "cluster":
        scenario = esrp.cluster_scenario(d, result, emit_iops, emit_dataset, emit_duration)
    else:
        scenario = emit.exchange_scenario(d, result, emit_load)
    finish(result, as_json, explain, scenario, emit_path)


state_units(command)
