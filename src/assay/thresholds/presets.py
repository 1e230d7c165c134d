"""Named threshold sets, applied to one workload (`mail: jetstress-strict`).

Jetstress grades performance-counter samples, each an average over its log interval (15 s in
a Jetstress 2013 JetstressConfig.xml), so its "maximum" latencies are the largest 15 s
averages (`lat_max_sample`), not the single slowest IO (`lat_max`). It grades each database
instance on its own: `db` names every per-database stream (`db1`, `db2`, ...). X-Ray judges
IOPS by its 95 % Poisson band around the expected rate on 1 s samples, and shows latency as
the median of those samples.
"""

from __future__ import annotations


def _jetstress(maximum: str) -> list[str]:
    return ["db.read.lat_avg <= 20ms", f"db.read.lat_max_sample <= {maximum}",
            "log.write.lat_avg <= 10ms", f"log.write.lat_max_sample <= {maximum}",
            "db.iops >= target"]

STRESS_AFTER_S = 6 * 3600  # Jetstress treats a performance run longer than 6 h as a stress test


def jetstress_for(seconds: float) -> str:
    """`jetstress`: the threshold set Jetstress itself would pick for a run this long."""
    return "jetstress-lenient" if seconds > STRESS_AFTER_S else "jetstress-strict"


PRESETS: dict[str, list[str]] = {
    # Jetstress 2013 JetstressConfig.xml: Strict for performance runs, Lenient for stress runs
    "jetstress-strict": _jetstress("100ms"),
    "jetstress-lenient": _jetstress("200ms"),
    # X-Ray (curie test YAMLs): the median 1 s IOPS inside target ± 1.96·√target
    "xray": ["iops_median in band"],
    # any fixed-rate workload: it delivered its rate and never fell behind its schedule
    "rate": ["iops >= target", "behind <= 1"],
    # MLPerf Storage (workload YAML `metric: au`): 90 %, CosmoFlow 70 %, from the kind's preset
    "mlperf": ["au >= target"],
}

DESCRIPTIONS = {
    "jetstress-strict": "Jetstress performance run, per database: DB read avg <= 20 ms and 15 s "
                        "sample max <= 100 ms, log write avg <= 10 ms and sample max <= 100 ms, "
                        "achieved IOPS >= target",
    "jetstress-lenient": "Jetstress stress run: as strict, with both sample maxima at 200 ms",
    "jetstress": "jetstress-strict for a run of up to 6 h, jetstress-lenient beyond (Jetstress "
                 "treats a longer performance run as a stress test)",
    "xray": "X-Ray: the median 1 s IOPS of every fixed-rate component inside its 95 % band, "
            "target ± 1.96·√target",
    "rate": "every fixed-rate component achieved its target and kept its schedule",
    "mlperf": "MLPerf Storage training: accelerator utilisation at least the model's pass "
              "level (90 %; 70 % for CosmoFlow)",
}
