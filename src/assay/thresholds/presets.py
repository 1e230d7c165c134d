"""Named threshold sets, applied to one workload (`mail: jetstress-strict`)."""

from __future__ import annotations

# Jetstress 2013 JetstressConfig.xml: Strict for performance runs, Lenient for stress runs.
PRESETS: dict[str, list[str]] = {
    "jetstress-strict": [
        "db.read.lat_avg <= 20ms", "db.read.lat_max <= 100ms",
        "log.write.lat_avg <= 10ms", "log.write.lat_max <= 100ms",
        "db.iops >= target",
    ],
    "jetstress-lenient": [
        "db.read.lat_avg <= 20ms", "db.read.lat_max <= 200ms",
        "log.write.lat_avg <= 10ms", "log.write.lat_max <= 200ms",
        "db.iops >= target",
    ],
    # any fixed-rate workload: it delivered its rate and never fell behind its schedule
    "rate": ["iops >= target", "behind <= 1"],
}

DESCRIPTIONS = {
    "jetstress-strict": "Jetstress performance run: DB read avg <= 20 ms and max <= 100 ms, log "
                        "write avg <= 10 ms and max <= 100 ms, achieved IOPS >= target",
    "jetstress-lenient": "Jetstress stress run: as strict, with both maxima at 200 ms",
    "rate": "every fixed-rate component achieved its target and kept its schedule",
}
