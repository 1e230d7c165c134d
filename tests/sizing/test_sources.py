"""Every source a figure or rule cites is in docs/sizing.md's sources table (issue 17: the OLTP
preset cited a section the table did not have)."""

import re
from pathlib import Path

import pytest

from assay.sizing import backup, cluster, exchange, oltp, vdi
from assay.sizing.backup import BackupDesign
from assay.sizing.cluster import ClusterDesign, Demand, NodeSpec
from assay.sizing.exchange import ExchangeDesign, MailboxTier
from assay.sizing.vdi import VdiDesign

DOCS = Path(__file__).parents[2] / "docs" / "sizing.md"
GIB, TB = 1 << 30, 10**12
REF = re.compile(r"(sizing-rules|jetstress-and-fio|xray-and-hcibench) (§[\d.]+(?:, §[\d.]+)*)"
                 r"|seed (\d{3})")


def results():
    t = oltp.Transactions(1000, 2, 1)
    node = NodeSpec(32, 512 * GIB, 6, 4 * TB)
    return [
        exchange.size(ExchangeDesign(tiers=(MailboxTier(10_000, 150, 2 * 10**9),), servers=4,
                                     specint_per_core=50, measured_iops=2000, ram_per_server=
                                     128 * GIB)),
        oltp.size(oltp.OltpDesign(profile=oltp.PRESETS["high"], preset="high", nodes=3)),
        oltp.size(oltp.OltpDesign(profile=oltp.transaction_profile(
            t, oltp.PRESETS["standard"], False), transactions=t, nodes=3)),
        vdi.size(VdiDesign(desktops=100, nodes=3)),
        backup.size(BackupDesign(spindles=4, databases=2, per_database=2e8, throughput=1e8,
                                 dataset=TB, window_s=3600)),
        cluster.size(ClusterDesign(node=node, workloads=(Demand("raw", 10, GIB, TB),), ec=True,
                                   rf=3, awareness="block", nodes_per_domain=2,
                                   data_reduction=2, node_iops=1e5, nodes=6, plan="n+1")),
    ]


def cited() -> set[str]:
    refs = set()
    for r in results():
        texts = [f.source for f in r.figures.values()] + [c.source for c in r.checks] + \
                [v.source for v in r.views]
        assert all(texts), f"{r.kind}: a figure or rule without a source"
        for text in texts:
            for doc, sections, seed in REF.findall(text):
                if seed:
                    refs.add(f"seed {seed}")
                else:
                    refs.update(f"{doc} {s.strip()}" for s in sections.split(","))
    return refs


def sources_section() -> str:
    return DOCS.read_text().split("\n## Sources\n", 1)[1]


def test_citations_are_found():
    refs = cited()
    assert {"sizing-rules §2.2", "jetstress-and-fio §1.4", "xray-and-hcibench §1.6",
            "seed 003"} <= refs


@pytest.mark.parametrize("ref", sorted(cited()))
def test_every_citation_is_in_the_sources_table(ref):
    table = sources_section()
    assert re.search(rf"\| (?:[^|]*, )?{re.escape(ref)}(?:,[^|]*)? \|", table), ref
