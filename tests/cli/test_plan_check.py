"""`assay plan`'s fio check on a cluster: each host's job files checked by fio, each distinct
text once and many to one fio, not one fio per file (1,024 hosts took minutes); a refused
file is named by its host and its name."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from assay.cli.plan import fio_check
from assay.hosts import inventory
from assay.plan import PREFILL_JOB, RUN_JOB, Plan
from assay.plan.build import load
from tests.conftest import needs_fio
from tests.fio.logged import logged_fio, started

pytestmark = needs_fio


def cluster(n: int) -> Plan:
    hosts = inventory.parse("".join(f"n{i} assay_path=/mnt/n{i}\n" for i in range(n)),
                            "inventory.ini")
    return load("oltp-cluster", hosts=hosts)


def test_64_hosts_are_checked_by_a_few_fios_each_file_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = logged_fio(tmp_path, monkeypatch)
    plan = cluster(64)
    assert fio_check(plan, pool=2) is None
    runs = started(log)
    files = [f for run in runs for f in run]
    distinct = {t for files_ in plan.jobfiles.values() for t in files_.values()}
    assert len(files) == len(set(files)) == len(distinct) == 128  # each host's own seed
    assert len(runs) == 2, [len(r) for r in runs]  # was 128 fios, one after another


def test_a_refused_file_is_named_by_its_host(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    log = logged_fio(tmp_path, monkeypatch)
    plan = cluster(6)
    files = {h: dict(f) for h, f in plan.jobfiles.items()}
    for host in ("n2", "n4"):  # the same fault on two hosts, a third host's other fault
        files[host][RUN_JOB] = files[host][RUN_JOB].replace("rw=randread", "rw=sideways", 1)
    files["n5"][PREFILL_JOB] += "\n[odd]\nbs=lots\n"
    complaint = fio_check(replace(plan, jobfiles=files), pool=2)
    assert complaint is not None
    named = [ln for ln in complaint.splitlines() if ln.startswith("n")]  # fio's own: "fio: "
    assert len(named) == 2, complaint
    assert named[0].startswith("n2/run.fio, n4/run.fio: ") and "sideways" in named[0]
    assert named[1].startswith("n5/prefill.fio: ") and "lots" in complaint
    assert not any(h in complaint for h in ("n0/", "n1/", "n3/"))
    assert started(log)  # the real fio said so


def test_one_complaint_of_many_hosts_names_a_few(tmp_path: Path) -> None:
    plan = cluster(5)
    files = {h: {RUN_JOB: f[RUN_JOB].replace("rw=randread", "rw=sideways", 1)}
             for h, f in plan.jobfiles.items()}
    complaint = fio_check(replace(plan, jobfiles=files))
    assert complaint is not None
    assert complaint.startswith("n0/run.fio, n1/run.fio, n2/run.fio and 2 more: ")
