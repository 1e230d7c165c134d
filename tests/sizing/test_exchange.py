"""Exchange sizing against the published tables and worked examples (sizing-rules §2)."""

import pytest

from assay.exitcodes import UserError
from assay.sizing import exchange
from assay.sizing.exchange import ExchangeDesign, MailboxTier

GIB = 1 << 30
TB = 10**12

# sizing-rules §2.2 / jetstress-and-fio §1.5: msgs/day -> IOPS/mailbox, +20 %, cache MiB
IOPS_TABLE = {50: 0.034, 100: 0.067, 150: 0.101, 200: 0.134, 250: 0.168, 300: 0.201,
              350: 0.235, 400: 0.268, 450: 0.302, 500: 0.335}
HEADROOM_TABLE = {50: 0.040, 100: 0.080, 150: 0.121, 200: 0.161, 250: 0.201, 300: 0.241,
                  350: 0.282, 400: 0.322, 450: 0.362, 500: 0.402}
CACHE_TABLE = {50: 3, 100: 6, 150: 9, 200: 12, 250: 15, 300: 18, 350: 21, 400: 24, 450: 27,
               500: 30}
# sizing-rules §2.2 megacycles: (2013 multi-role active, 2013 passive, 2016 active, 2016 passive)
MC_TABLE = {50: (2.93, 0.69, 2.99, 0.70), 100: (5.84, 1.37, 5.97, 1.40),
            150: (8.77, 2.06, 8.96, 2.10), 200: (11.69, 2.74, 11.94, 2.80),
            250: (14.62, 3.43, 14.93, 3.50), 300: (17.53, 4.11, 17.91, 4.20),
            350: (20.46, 4.80, 20.90, 4.90), 400: (23.38, 5.48, 23.88, 5.60),
            450: (26.30, 6.17, 26.87, 6.30), 500: (29.22, 6.85, 29.85, 7.00)}


@pytest.mark.parametrize("msgs", sorted(IOPS_TABLE))
def test_iops_per_mailbox_matches_the_published_table(msgs):
    assert exchange.iops_per_mailbox(msgs, headroom=False) == IOPS_TABLE[msgs]
    # the published +20 % row mixes rounding before and after the headroom: within 0.001
    assert exchange.iops_per_mailbox(msgs, headroom=True) == pytest.approx(
        HEADROOM_TABLE[msgs], abs=0.0011)


@pytest.mark.parametrize("msgs", sorted(CACHE_TABLE))
def test_db_cache_per_mailbox_matches_the_table(msgs):
    assert exchange.cache_per_mailbox(msgs) == pytest.approx(CACHE_TABLE[msgs])


@pytest.mark.parametrize("msgs", sorted(MC_TABLE))
def test_megacycles_match_the_published_table(msgs):
    a13, p13, a16, p16 = MC_TABLE[msgs]
    assert exchange.megacycles_per_mailbox(msgs, "2013") == pytest.approx((a13, p13), abs=0.011)
    assert exchange.megacycles_per_mailbox(msgs, "2016") == pytest.approx((a16, p16), abs=1e-9)


def design(**kw):
    base = dict(tiers=(MailboxTier(10_000, 150, 2 * GIB),), servers=4, specint_per_core=50,
                cores_per_server=24, copies=2, version="2016")
    base.update(kw)
    return ExchangeDesign(**base)


def test_worked_example_2_7():
    """10,000 mailboxes, 150 msgs, 4 servers, 2 copies, 2016, SPECint 1,200 over 24 cores."""
    f = exchange.size(design()).figures
    assert f["active_per_server_worst"].value == 3334
    assert f["passive_per_server_worst"].value == 1666
    assert f["mc_required_worst"].value == pytest.approx(33_371, abs=1)
    assert f["mc_per_core"].value == pytest.approx(2963, abs=0.5)
    assert f["mc_available"].value == pytest.approx(71_111, abs=1)
    assert round(f["cpu_worst"].value) == 47
    assert f["db_cache"].value / GIB == pytest.approx(29.3, abs=0.05)
    assert f["ram_required"].value / GIB == pytest.approx(117, abs=0.5)
    assert f["ram_recommended"].value == 128 * GIB
    # Deliberate difference: the reference counts each of the 5,000 copies at full IO (606);
    # assay counts a passive copy at 50 % of an active one (Exchange 2013+, docs/sizing.md).
    assert f["jetstress_iops_worst"].value == pytest.approx(3334 * 0.121)
    assert f["db_iops_per_server_worst"].value == pytest.approx(
        3334 * 0.121 + 1666 * 0.121 * 0.5)
    assert f["db_iops_per_server_worst"].value < 606


def test_passive_copies_count_at_the_passive_share():
    half = exchange.size(design()).figures
    full = exchange.size(design(passive_io_pct=100)).figures
    # normal operation: 2,500 active + 2,500 passive per server
    assert half["db_iops_per_server_normal"].value == pytest.approx(2500 * 0.121 * 1.5)
    assert full["db_iops_per_server_normal"].value == pytest.approx(5000 * 0.121)
    # the Jetstress target (active mailboxes only) does not depend on the passive share
    assert half["jetstress_iops_normal"].value == full["jetstress_iops_normal"].value
    assert half["iops_all_copies"].value == pytest.approx(10_000 * 0.121 * 1.5)


def test_jetstress_target_grows_after_the_failure_but_copies_stay():
    f = exchange.size(design()).figures
    assert f["active_per_server_normal"].value == 2500
    assert f["active_per_server_worst"].value == 3334
    assert (f["active_per_server_normal"].value + f["passive_per_server_normal"].value
            == f["active_per_server_worst"].value + f["passive_per_server_worst"].value)
    assert f["jetstress_iops_worst"].value > f["jetstress_iops_normal"].value


def test_databases_per_server_sets_the_layout():
    f = exchange.size(design(databases_per_server=2)).figures
    assert f["databases"].value == 8  # 2 x 4 servers
    assert f["db_copies_per_server"].value == 4  # 8 x 2 copies / 4 servers
    assert f["jetstress_databases_normal"].value == 2
    assert f["jetstress_databases_worst"].value == 3  # ceil(8 / 3 survivors)
    with pytest.raises(UserError, match="not both"):
        exchange.size(design(databases=8, databases_per_server=2))


def test_cpu_is_optional_but_the_core_limit_is_always_checked():
    r = exchange.size(design(specint_per_core=None, cores_per_server=32))
    assert "cpu_worst" not in r.figures
    assert [c.rule for c in r.failed] == ["Exchange 2016 cores per server"]
    assert any("--specint-per-core" in n for n in r.notes)


def test_measured_iops_give_the_mailboxes_they_support():
    r = exchange.size(design(measured_iops=1500))
    f = r.figures
    assert f["mailboxes_supported"].value == int(1500 // 0.121)  # 12,396
    assert f["measured_headroom"].value == pytest.approx(100 * (1500 / 1210 - 1))
    assert next(c for c in r.checks if "Measured" in c.rule).ok
    short = exchange.size(design(measured_iops=1000))
    assert not next(c for c in short.checks if "Measured" in c.rule).ok
    assert exchange.mailboxes_for_iops(1210, 150) == 10_000


def test_worst_failure_mode_is_heavier_than_normal_operation():
    f = exchange.size(design()).figures
    assert f["cpu_worst"].value > f["cpu_normal"].value
    # normal: 2,500 active + 2,500 passive per server
    assert f["mc_required_normal"].value == pytest.approx(2500 * 8.96 + 2500 * 2.10)


def test_cpu_rule_fails_and_says_by_how_much():
    r = exchange.size(design(specint_per_core=20))  # 20 x 2000/33.75 x 24 = 28,444 Mcycles
    cpu = next(c for c in r.checks if c.rule == "CPU in the worst failure mode")
    assert not cpu.ok
    expected = 100 * 33_371.24 / (20 * 2000 / 33.75 * 24)
    assert cpu.actual == pytest.approx(expected, rel=1e-4)
    assert cpu.over_by == pytest.approx(expected - 80, rel=1e-4)
    assert "exceeds" in cpu.message


def test_core_limit_depends_on_the_version():
    assert not exchange.size(design(cores_per_server=32)).checks[1].ok  # 2016: 24 cores
    r19 = exchange.size(design(cores_per_server=32, version="2019"))
    assert next(c for c in r19.checks if "cores" in c.rule).ok  # 2019: 48 cores


def test_memory_limit_fails_when_one_server_carries_too_many_actives():
    r = exchange.size(design(tiers=(MailboxTier(40_000, 500, GIB),), servers=2))
    mem = next(c for c in r.checks if "memory" in c.rule)
    assert not mem.ok and mem.limit == 192 * GIB


def test_database_size_rule_uses_the_given_database_count():
    r = exchange.size(design(databases=4))
    db = next(c for c in r.checks if c.rule == "Database size best practice")
    assert not db.ok and db.limit == 2 * TB  # "2 TB", decimal as every size in sizing
    standalone = exchange.size(design(copies=1, servers=1, databases=4))
    assert next(c for c in standalone.checks if "Database" in c.rule).limit == 200 * 10**9


def test_computed_database_count_keeps_databases_under_2_tib_and_even_per_server():
    f = exchange.size(design()).figures
    assert f["db_size"].value <= 2 * TB
    assert f["databases"].value % 4 == 0


def test_mailbox_size_on_disk_adds_whitespace_dumpster_and_recovery():
    t = MailboxTier(1, 100, 1 * GIB, 100 * 1024)
    daily = 100 * 100 * 1024
    expected = GIB + daily + daily * 14 + GIB * (0.012 + 0.03)
    assert exchange.mailbox_size_on_disk(t, 14, True) == pytest.approx(expected)
    assert exchange.mailbox_size_on_disk(t, 14, False) == pytest.approx(expected - 0.03 * GIB)


def test_logs_150_messages_at_75kb_are_30_per_day_and_double_size_is_1_9x():
    r = exchange.size(design(tiers=(MailboxTier(1000, 150, GIB),), servers=2))
    assert r.figures["logs_per_day"].value == pytest.approx(1000 * 30 * (1 << 20))
    assert exchange.log_factor(2 * exchange.BASE_MESSAGE_SIZE) == pytest.approx(1.9)
    assert exchange.BASE_MESSAGE_SIZE == 75_000  # 75 KB, decimal
    assert r.figures["log_space"].value == pytest.approx(3 * r.figures["logs_per_day"].value)


def test_three_copies_tolerate_two_server_failures():
    r = exchange.size(design(copies=3, servers=6))
    assert r.inputs["failures"] == 2
    assert r.figures["active_per_server_worst"].value == 2500  # 10,000 / 4 survivors


@pytest.mark.parametrize("kw, words", [
    (dict(tiers=(MailboxTier(-5, 150, GIB),)), "positive"),
    (dict(copies=3, servers=2), "at least 3 servers"),
    (dict(failures=2), "survives at most 1"),
    (dict(passive_io_pct=120), "--passive-io"),
    (dict(databases_per_server=0), "--databases-per-server"),
    (dict(measured_iops=-1), "--iops"),
    (dict(version="2010"), "2013, 2016 or 2019"),
    (dict(tiers=tuple(MailboxTier(10, 150, GIB) for _ in range(5))), "at most 4"),
])
def test_invalid_designs_are_user_errors(kw, words):
    with pytest.raises(UserError, match=words):
        exchange.size(design(**kw))


def test_multiple_tiers_add_up():
    one = exchange.size(design(tiers=(MailboxTier(6000, 150, GIB),))).figures["iops_total"]
    two = exchange.size(design(tiers=(MailboxTier(6000, 150, GIB), MailboxTier(4000, 300, GIB))))
    assert two.figures["iops_total"].value == pytest.approx(one.value + 4000 * 0.241)
