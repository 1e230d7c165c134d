from pathlib import Path

from assay.report.jsondoc import summary_document, transactional
from assay.results.record import RunRecord


def stats(name: str, target: float, iops: float, p99: float) -> dict:
    return {"component": name, "seconds": 10.0, "ios": int(iops * 10), "bytes": 0,
            "iops": iops, "mbps": 0.0, "lat_avg_ms": None, "lat_p50_ms": None,
            "lat_p95_ms": None, "lat_p99_ms": p99, "lat_p999_ms": None, "lat_max_ms": None,
            "target_iops": target, "behind_max_s": 0.0, "rate_tolerance": 0.0}


RUN = RunRecord.model_validate({
    "status": "passed", "id": "r1", "started": 0.0, "scenario": {"name": "mail"},
    "plan": {"duration_s": 10.0},
    "components": {"mail.db.read": {"transactional": True},
                   "mail.db.write": {"transactional": True},
                   "mail.log.write": {"transactional": False},
                   "mail.bdm.read": {"transactional": False}},
    "stats": {
        "mail.db.read": stats("mail.db.read", 60.0, 61.0, 2.0),
        "mail.db.write": stats("mail.db.write", 40.0, 39.0, 3.0),
        "mail.log.write": stats("mail.log.write", 10.0, 10.0, 1.0),
        "mail.bdm.read": stats("mail.bdm.read", 4.0, 4.0, 1.0),
    },
})


def test_transactional_iops_is_database_io_only_as_in_jetstress():
    assert transactional(RUN) == {"mail": {"target_iops": 100.0, "achieved_iops": 100.0}}


def test_document_shape():
    doc = summary_document(RUN, Path("results/r1"))
    assert doc["status"] == "passed" and doc["run_dir"] == "results/r1"
    assert doc["workloads"]["mail"]["components"]["db.write"]["achieved_iops"] == 39.0
    assert doc["workloads"]["mail"]["transactional"]["target_iops"] == 100.0
