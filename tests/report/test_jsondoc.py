from pathlib import Path

from assay.report.jsondoc import summary_document, transactional

RUN = {
    "status": "passed", "id": "r1",
    "components": {"mail.db.read": {"transactional": True},
                   "mail.db.write": {"transactional": True},
                   "mail.log.write": {"transactional": False},
                   "mail.bdm.read": {"transactional": False}},
    "stats": {
        "mail.db.read": {"target_iops": 60.0, "iops": 61.0, "lat_p99_ms": 2.0},
        "mail.db.write": {"target_iops": 40.0, "iops": 39.0, "lat_p99_ms": 3.0},
        "mail.log.write": {"target_iops": 10.0, "iops": 10.0, "lat_p99_ms": 1.0},
        "mail.bdm.read": {"target_iops": 4.0, "iops": 4.0, "lat_p99_ms": 1.0},
    },
}


def test_transactional_iops_is_database_io_only_as_in_jetstress():
    assert transactional(RUN) == {"mail": {"target_iops": 100.0, "achieved_iops": 100.0}}


def test_document_shape():
    doc = summary_document(RUN, Path("results/r1"))
    assert doc["status"] == "passed" and doc["run_dir"] == "results/r1"
    assert doc["workloads"]["mail"]["components"]["db.write"]["achieved_iops"] == 39.0
    assert doc["workloads"]["mail"]["transactional"]["target_iops"] == 100.0
