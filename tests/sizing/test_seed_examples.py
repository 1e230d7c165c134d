"""Every worked number of the source articles (the seeds), reproduced by `assay size`.

One test per worked example. Each names the article, quotes its number, and computes assay's
answer from the article's inputs. Where assay deliberately differs, the test asserts assay's
answer and docs/sizing.md ("The source articles, reproduced") says why.
"""

import json
import math

import pytest
from click.testing import CliRunner

from assay.cli.size import command
from assay.sizing import backup, cluster, exchange, oltp, reliability, resiliency, units
from assay.sizing.backup import BackupDesign
from assay.sizing.cluster import ClusterDesign, Demand, NodeSpec
from assay.sizing.exchange import ExchangeDesign, MailboxTier
from assay.thresholds.presets import PRESETS as THRESHOLD_PRESETS

GIB = 1 << 30
MB, GB, TB = 10**6, 10**9, 10**12

# Atlantis HyperScale testing with Jetstress (seed 003): 60,000 mailboxes, 150 messages/day
# ("0.121 IOPS per mailbox (150 messages per day plus 20% headroom)"), 800 MB, two database
# copies, three Jetstress servers, eight databases per server.
ATLANTIS = ["exchange", "--mailboxes", "60000", "--messages", "150", "--mailbox-size", "800MB",
            "--servers", "3", "--copies", "2", "--databases-per-server", "8"]


def size_json(*args: str) -> dict:
    r = CliRunner().invoke(command, [*args, "--json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)


@pytest.fixture(scope="module")
def atlantis() -> dict:
    return size_json(*ATLANTIS)["figures"]


def atlantis_design(**kw) -> ExchangeDesign:
    base = dict(tiers=(MailboxTier(60_000, 150, 800 * MB),), servers=3, copies=2,
                databases_per_server=8)
    base.update(kw)
    return ExchangeDesign(**base)


# ------------------------------------------------------------ seed 003: Atlantis, Jetstress

def test_atlantis_total_target_is_7260_iops(atlantis):
    """"The configuration targeted a total of 7260 IOPS (60,000 mailboxes X 0.121
    IOPS/mailbox)"."""
    assert atlantis["iops_per_mailbox"]["value"] == 0.121
    assert atlantis["iops_total"]["value"] == 7260


def test_atlantis_per_jetstress_server_20000_mailboxes_2420_iops(atlantis):
    """"60,000 mailboxes - 20,000 per Jetstress server": 20,000 x 0.121 = 2,420 IOPS in
    normal operation; the N-1 target (one server down, Microsoft's worst failure mode) is
    shown beside it: 30,000 mailboxes, 3,630 IOPS."""
    assert atlantis["active_per_server_normal"]["value"] == 20_000
    assert atlantis["jetstress_iops_normal"]["value"] == pytest.approx(2420)
    assert atlantis["active_per_server_worst"]["value"] == 30_000
    assert atlantis["jetstress_iops_worst"]["value"] == pytest.approx(3630)
    # the three servers' normal targets add up to the article's total
    assert 3 * atlantis["jetstress_iops_normal"]["value"] == pytest.approx(
        atlantis["iops_total"]["value"])


def test_atlantis_passive_copies_are_not_the_jetstress_target(atlantis):
    """Two copies on three servers: every server also holds 20,000 passive copies. assay counts
    them at 50 % of an active copy's IO (Exchange 2013+) in the server's DB IOPS, and leaves
    them out of the Jetstress target, as Jetstress does (issue 17: 4,840 was twice 2,420)."""
    per_server = atlantis["db_iops_per_server_normal"]["value"]
    assert atlantis["passive_per_server_normal"]["value"] == 20_000
    assert per_server == pytest.approx(20_000 * 0.121 + 20_000 * 0.121 * 0.5)  # 3,630
    assert per_server != pytest.approx(2 * 2420)


def test_atlantis_roughly_16tb_of_databases_per_server(atlantis):
    """"eight logical drives ... to store the roughly 16TB of databases we needed":
    20,000 mailboxes x 800 MB = 16 TB (decimal), kept apart from the production capacity."""
    assert atlantis["jetstress_dataset_normal"]["value"] == 16 * TB
    # production adds copies, whitespace, dumpster, growth, content index and logs
    assert atlantis["storage_per_server"]["value"] > 3 * atlantis["jetstress_dataset_normal"][
        "value"]


def test_atlantis_eight_databases_per_server_24_in_all(atlantis):
    """"Eight databases per server", three servers: 24 databases, each Jetstress database
    16 TB / 8 = 2 TB; every server holds 16 database copies (8 active, 8 passive)."""
    assert atlantis["databases"]["value"] == 24
    assert atlantis["jetstress_databases_normal"]["value"] == 8
    assert atlantis["db_copies_per_server"]["value"] == 16
    assert atlantis["jetstress_db_size"]["value"] == 2 * TB


def test_atlantis_layout_in_production_breaks_the_2tb_rule(atlantis):
    """Deliberate difference: the article's 2 TB databases hold the quota only. With
    Microsoft's allowances (whitespace, 14 days of dumpster, 20 % growth) each production
    database is about 3 TB, over the 2 TB best practice: assay flags it (docs/sizing.md)."""
    doc = size_json(*ATLANTIS)
    db = next(c for c in doc["checks"] if c["rule"] == "Database size best practice")
    assert not db["ok"] and db["limit"] == 2 * TB
    assert atlantis["db_size"]["value"] == pytest.approx(
        atlantis["db_total"]["value"] / 24)
    assert 2.9 * TB < atlantis["db_size"]["value"] < 3.1 * TB


def test_atlantis_8798_measured_iops_support_72000_mailboxes():
    """"achieved 8798 IOPS, or just over 20% more than required ... We could have repeated
    the tests with 72,000 mailboxes": 8,798 / 0.121 = 72,710 mailboxes."""
    f = size_json(*ATLANTIS, "--iops", "8798")["figures"]
    assert f["mailboxes_supported"]["value"] == math.floor(8798 / 0.121)
    assert f["mailboxes_supported"]["value"] >= 72_000
    assert round(f["measured_headroom"]["value"]) == 21  # the article's "Difference 21%"
    # and the question asked the other way round, without --mailboxes
    inverse = size_json("exchange", "--iops", "8798", "--servers", "3")
    assert inverse["inputs"]["tiers"][0]["mailboxes"] == 72_710


def test_atlantis_latency_targets_are_jetstress_strict(tmp_path):
    """"Targeted: average database read latency 20ms, average log file write latency 10ms":
    the emitted scenario is graded with Jetstress' strict set, which holds those averages.
    (Achieved 7.2 ms and 3.2 ms: "64%" and "68%" below them.)"""
    out = tmp_path / "atlantis.yaml"
    CliRunner().invoke(command, [*ATLANTIS, "--emit-scenario", str(out)])
    assert "mail: jetstress-strict" in out.read_text()
    strict = THRESHOLD_PRESETS["jetstress-strict"]
    assert "db.read.lat_avg <= 20ms" in strict and "log.write.lat_avg <= 10ms" in strict


def test_atlantis_four_nodes_tolerate_one_node_failure():
    """"Three Jetstress servers (VMs) ... across the four node CX-12. This system can,
    therefore, tolerate a node failure": 3 VMs of 8 vCPU / 64 GB need the RF2 minimum of 3
    nodes plus one spare, N+1 = 4 (384 GB of RAM per node)."""
    d = ClusterDesign(node=NodeSpec(cores=24, ram=384 * GIB, drives=4, drive_size=2 * TB),
                      workloads=(Demand("exchange", 3 * 8, 3 * 64 * GIB, 0),))
    r = cluster.size(d)
    assert r.value("nodes") == 4 and r.value("spare_nodes") == 1
    assert not r.failed


def test_atlantis_thin_vmdks_rely_on_data_reduction(atlantis):
    """"Eight 800GB thin provisioned VMDK" held the 16 TB per server: 16 TB / 6.4 TB = 2.5:1
    from Jetstress' very reducible data. Deliberate difference: assay never counts on data
    reduction (it shows a ratio you give beside the unreduced figures, never instead)."""
    provisioned = 8 * 800 * GB
    assert atlantis["jetstress_dataset_normal"]["value"] / provisioned == 2.5
    node = NodeSpec(cores=24, ram=384 * GIB, drives=4, drive_size=2 * TB)
    plain = cluster.size(ClusterDesign(node=node, workloads=(Demand("raw", 1, GIB, 48 * TB),)))
    reduced = cluster.size(ClusterDesign(node=node, workloads=(Demand("raw", 1, GIB, 48 * TB),),
                                         data_reduction=2.5))
    assert reduced.value("nodes") == plain.value("nodes")  # sized without the reduction
    assert reduced.value("nodes_needed_with_reduction") < plain.value("nodes")


# ------------------------------------------------------------ seed 000: Nutanix ESRP

def test_esrp_validates_at_n_minus_1_by_default(tmp_path):
    """"The solution was performance tested/validated with N-1 nodes": the emitted scenario
    is one server's load after the worst failure unless normal operation is asked for."""
    out = tmp_path / "esrp.yaml"
    CliRunner().invoke(command, [*ATLANTIS, "--emit-scenario", str(out)])
    text = out.read_text()
    assert "name: exchange-n-1-validation" in text and "mailboxes: 30000" in text


def test_esrp_worst_failure_cpu_80_percent_and_24_cores():
    """"under the Microsoft recommended CPU utilization threshold for a 'Worst Failure Mode'
    of <= 80 percent" and "within the recommended maximum of 24 CPUs"."""
    base = dict(tiers=(MailboxTier(10_000, 150, GB),), servers=4, specint_per_core=50,
                version="2016")
    ok = exchange.size(ExchangeDesign(cores_per_server=24, **base))
    over = exchange.size(ExchangeDesign(cores_per_server=25, **base))
    cpu = next(c for c in ok.checks if c.rule == "CPU in the worst failure mode")
    assert cpu.ok and cpu.limit == 80
    assert [c.rule for c in over.failed] == ["Exchange 2016 cores per server"]


def test_esrp_384tb_drives_double_the_1gb_mailboxes():
    """"increased in size from supporting 1 GB mailboxes to >2 GB simply by choosing 3.84 TB
    drives vs. the 1.92 TB drives": with the Sizer's ~80 GB per SSD reserve, the bigger drives
    hold 2.04x the data, so 1 GB mailboxes become more than 2 GB."""
    assert units.parse_size("3.84TB") == 3_840_000_000_000

    def recommended(drive: str) -> float:
        node = NodeSpec(cores=28, ram=512 * GIB, drives=4, drive_size=units.parse_size(drive),
                        drive_reserve=80 * GB)
        return cluster.size(ClusterDesign(node=node, nodes=4,
                                          workloads=(Demand("exchange", 10, GIB, TB),))
                            ).value("recommended")

    ratio = recommended("3.84TB") / recommended("1.92TB")
    assert 1 * GB * ratio > 2 * GB


def test_esrp_add_nodes_at_80_percent_full():
    """"when the storage capacity is reaching a high threshold such as 80%+, customers can
    non disruptively add storage nodes": the capacity ceiling is configurable (90 % by
    default, KB 1557)."""
    node = NodeSpec(cores=32, ram=512 * GIB, drives=6, drive_size=4 * TB)
    demand = (Demand("raw", 1, GIB, 40 * TB),)
    at_90 = cluster.size(ClusterDesign(node=node, workloads=demand))
    at_80 = cluster.size(ClusterDesign(node=node, workloads=demand, max_full_pct=80))
    assert at_80.value("recommended") / at_80.value("usable") == pytest.approx(0.8)
    assert at_90.value("recommended") / at_90.value("usable") == pytest.approx(0.9)
    assert at_80.value("nodes") >= at_90.value("nodes")


def test_esrp_backup_215_mb_per_database_is_over_1_7_gbps_per_node():
    """"Database backup performance of 215MB/sec per database which equates to more than
    1.7GBps per node": 8 databases per node x 215 MB/s = 1,720 MB/s."""
    r = backup.size(BackupDesign(databases=8, per_database=215 * MB))
    assert r.value("throughput") == 8 * 215
    assert r.value("throughput") > 1700


# ------------------------------------------------------------ seed 000: truth about benchmarking

def test_benchmarking_requirements_exceeded_by_247_percent():
    """"The required (or Target) IOPS was just 216 per MS Exchange instance"; test 7 achieved
    751.275: "the requirements were exceeded by 247%"; tests 1 to 6 differ "by up to 81%"
    (362.729 vs 200.663). The article's "107.46% increase" of test 7 over test 6 does not follow
    from its own numbers: assay gets 107.1 % (docs/sizing.md)."""
    assert int(exchange.headroom_pct(751.275, 216)) == 247
    assert round(exchange.headroom_pct(362.729, 200.663)) == 81
    assert exchange.headroom_pct(751.275, 362.729) == pytest.approx(107.1, abs=0.05)


def test_sql_datafiles_split_8gb_over_4_files_is_2gb_each():
    """Splitting SQL datafiles: a 10 GB database with 2 GB free spread over 4 data files:
    "each of the new databases should be sized at no more than 2GB": 8 GB / 4."""
    profile = oltp.OltpProfile(data_iops=1000, log_iops=50, read_pct=70, data_files=4,
                               log_files=1, dataset=10 * GB - 2 * GB)
    r = oltp.size(oltp.OltpDesign(profile=profile, ram=GB))
    assert r.value("data_file_size") == 2 * GB


# ------------------------------------------------------------ seed 001: X-Ray OLTP

def test_xray_oltp_6000_database_and_400_log_iops():
    """"generates 6000 IOPS across the database and 400 IOPS for the logs": the high
    preset."""
    f = size_json("oltp", "--preset", "high")["figures"]
    assert f["data_iops"]["value"] == 6000 and f["log_iops"]["value"] == 400


# ------------------------------------------------------------ seed 002: resiliency

@pytest.mark.parametrize("rf, nodes, spares", [(2, 24, 1), (2, 25, 2), (3, 7, 2)])
def test_resiliency_n_plus_1_rf2_n_plus_2_above_24_and_rf3(rf, nodes, spares):
    """"If you're using RF2, size for N+1 as a minimum ... For cluster sizes above 24, I
    recommend N+2 ... If you're using RF3, size for N+2 as a minimum"."""
    assert resiliency.planned_failures(rf, nodes, None) == spares


def test_resiliency_rf3_dual_self_heal_needs_seven_nodes():
    """"If you want RF3 and the ability to self heal from a dual node failure ... then you need
    a seven node cluster"."""
    d = ClusterDesign(node=NodeSpec(32, 512 * GIB, 6, 4 * TB), rf=3,
                      workloads=(Demand("raw", 10, 64 * GIB, TB),))
    assert cluster.nodes_needed(d) == 7


def test_resiliency_rf3_six_nodes_is_a_documented_option():
    """"If you only wish to self heal from a single node failure, six nodes is an option":
    assay still fails the RF3 N+2 minimum (exit 1) but says that this is the documented
    option and how to choose it."""
    node = NodeSpec(32, 512 * GIB, 6, 4 * TB)
    demand = (Demand("raw", 10, 64 * GIB, TB),)
    auto = cluster.size(ClusterDesign(node=node, rf=3, nodes=6, workloads=demand))
    heal = next(c for c in auto.failed if c.rule == "RF3 self-heals after losing 2 node(s)")
    assert "documented option" in heal.message and "--plan n+1" in heal.message
    chosen = cluster.size(ClusterDesign(node=node, rf=3, nodes=6, plan="n+1",
                                        workloads=demand))
    assert [c.rule for c in chosen.failed] == ["RF3: size for N+2 as a minimum"]
    assert "documented option" in chosen.failed[0].message
    assert "RF3 self-heals after losing 1 node(s)" in {c.rule for c in chosen.checks if c.ok}


@pytest.mark.parametrize("rf, per_block, spare", [(2, 4, 4), (2, 2, 2), (3, 2, 4), (3, 4, 8)])
def test_resiliency_block_awareness_n_plus_4_and_n_plus_8(rf, per_block, spare):
    """"RF2 and your physical hardware is 4 nodes per block ... you will need N+4 ... 2 nodes
    per block, then N+2 ... Block Awareness with RF3 ... N+4 when using Two nodes per block,
    and N+8 when using Four nodes per block"."""
    d = ClusterDesign(node=NodeSpec(32, 512 * GIB, 6, 4 * TB), rf=rf, awareness="block",
                      nodes_per_domain=per_block, workloads=(Demand("raw", 10, 64 * GIB, TB),))
    assert cluster.size(d).value("spare_nodes") == spare


def test_resiliency_rf2_five_nines_as_nines():
    """"RF2 delivers around 99.999% measured across the Nutanix install base": five nines.
    assay's availability counts node failures only, so its estimate shows more nines than that
    all-causes measurement (docs/sizing.md)."""
    assert reliability.nines(1 - 0.99999) == pytest.approx(5)
    r = cluster.size(ClusterDesign(node=NodeSpec(32, 512 * GIB, 6, 4 * TB),
                                   workloads=(Demand("raw", 10, 64 * GIB, 40 * TB),)))
    assert r.value("availability_nines") == pytest.approx(
        -math.log10(1 - r.value("availability") / 100))
    assert r.value("availability_nines") > 5


# ------------------------------------------------------------ seed 004: SQL Server on Nutanix

def test_backup_120_mb_from_4_hdds_is_about_25_to_30_per_spindle():
    """"around 120 MB/s writing directly to the HDD spindles on a single node with 4 HDDs ...
    around 25MB/s per HDD spindle": measured 120 MB/s over 4 spindles is 30 MB/s each; the
    article's rule of thumb, 25 MB/s, is assay's default (docs/sizing.md)."""
    r = backup.size(BackupDesign(spindles=4, throughput=120 * MB, targets=16))
    assert r.value("per_spindle_measured") == 30
    assert backup.size(BackupDesign(spindles=4)).value("throughput") == 100  # 4 x 25


def test_backup_500_mb_needs_20_spindles():
    """"On a larger platform with more spindles - we could easily drive 500MB/s": at 25 MB/s
    per spindle, 20 spindles."""
    r = backup.size(BackupDesign(spindles=4, required=500 * MB))
    assert r.value("spindles_needed") == 20


def test_backup_16_targets_keep_16_to_32_ios_outstanding():
    """"SQL Server will generate 1-2 outstanding IO's per target. I created 16 total
    targets"."""
    one = backup.size(BackupDesign(spindles=4, targets=16, outstanding=1))
    two = backup.size(BackupDesign(spindles=4, targets=16, outstanding=2))
    assert (one.value("outstanding_ios"), two.value("outstanding_ios")) == (16, 32)


def test_tpcc_1m_tpm_per_node_is_4_2m_on_4_nodes():
    """SuperScalin': "a little over 1Million SQL transactions per minute (TPM) on a single
    Nutanix node ... 4.2 Million TPM with 4 Nutanix nodes" (16 vCPU, 64 GB, 6 data + 1 log
    vDisks): 1.05 M TPM per SQL Server VM, one per node, scaled linearly."""
    f = size_json("oltp", "--tpm", "1.05M", "--data-iops", "6000", "--instances", "4",
                  "--nodes", "4", "--vcpus", "16", "--ram", "64GiB", "--data-files", "6",
                  "--log-files", "1")["figures"]
    assert f["tpm"]["value"] == 1_050_000
    assert f["tpm_total"]["value"] == 4_200_000
    assert f["tpm_per_node"]["value"] == 1_050_000
    # after a node failure one node carries two of the four servers
    assert f["tpm_per_node_worst"]["value"] == 2_100_000


def test_tps_log_throughput_follows_the_stated_rule():
    """Issue 17 item 5: 4 KiB of log per transaction at 16,667 TPS is about 68 MB/s (TPS x log
    bytes), not 546 MB/s (32 KiB per log IO)."""
    f = size_json("oltp", "--tps", "16667", "--data-iops", "4000")["figures"]
    assert f["log_mbps"]["value"] == pytest.approx(16_667 * 4096 / 1e6)
    assert round(f["log_mbps"]["value"]) == 68
