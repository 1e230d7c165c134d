"""`assay plan --hosts` shows what runs on each host: fio's jobs and the participants beside
them, as text and in --json."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from assay.cli.plan import command

SCENARIO = """\
name: per-host
target:
  throttle: [{device: target, read_iops: 400}]
workloads:
  db: {kind: oltp, data_iops: 200, data_files: 1, log_files: 1, dataset: 64MiB}
  vdi: {kind: oltp, data_iops: 100, data_files: 1, log_files: 1, dataset: 32MiB, hosts: "n/2:"}
timeline:
  duration: 1m
  steps:
    - {action: throttle, at: 20s, for: 10s, read_iops: 100}
thresholds:
  db.data.read.iops: ">= 90% target"
"""


def plan(tmp_path: Path, *extra: str) -> str:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    (tmp_path / "inv.ini").write_text("n1 assay_path=/srv/a\nn2 assay_path=/srv/b\n")
    r = CliRunner().invoke(command, [str(tmp_path / "s.yaml"), "--hosts",
                                     str(tmp_path / "inv.ini"), "--no-check", *extra])
    assert r.exit_code == 0, r.output
    return r.output


def test_each_host_lists_its_fio_jobs_and_participants(tmp_path: Path) -> None:
    doc = json.loads(plan(tmp_path, "--json"))
    n1, n2 = (doc["hosts"][h]["participants"] for h in ("n1", "n2"))
    fio1, fio2 = n1[0], n2[0]
    assert fio1["name"] == fio2["name"] == "fio"
    # n2 runs vdi beside db: more jobs and more files than n1
    jobs = {h: int(p[0]["detail"].split()[0]) for h, p in (("n1", n1), ("n2", n2))}
    assert jobs["n2"] > jobs["n1"] > 0 and "in /srv/b" in fio2["detail"]
    assert jobs["n1"] == sum(1 for ln in doc["jobfiles"]["n1"]["run.fio"].splitlines()
                             if ln.startswith("[") and ln != "[global]")
    [t1] = [p for p in n1 if p["name"] == "blkio throttle"]
    assert "assay/<run>.n1" in t1["detail"] and "target read_iops 400" in t1["detail"]
    assert "target at 20s read_iops 100" in t1["detail"]
    [due] = [p for p in n2 if p["name"] == "due-time reader"]
    logged = sum(1 for ln in doc["jobfiles"]["n2"]["run.fio"].splitlines()
                 if ln.startswith("write_iolog="))  # the fixed-rate jobs the agent reads
    assert due["detail"] == f"{logged} fixed-rate jobs' issue logs" and logged > 0
    assert n1[-1]["name"] == n2[-1]["name"] == "utilisation"  # every host's, each second


def test_the_text_shows_each_hosts_participants_under_it(tmp_path: Path) -> None:
    out = plan(tmp_path)
    block = out.split("hosts: 2")[1].split("fio job file")[0]
    lines = [ln.strip() for ln in block.splitlines()]
    n2 = lines.index(next(ln for ln in lines if ln.startswith("n2 ")))
    assert lines[n2 + 1].startswith("fio: ") and "/srv/b" in lines[n2 + 1]
    assert any(ln.startswith("blkio throttle: group assay/<run>.n2") for ln in lines[n2:])


def test_a_database_only_host_says_the_databases_carry_the_load(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: pg\nworkloads:\n  pg: {kind: postgres, rate: 50, "
                                     "hosts: all}\ntimeline: {duration: 30s}\n")
    (tmp_path / "inv.ini").write_text("n1 assay_path=/srv/a\n")
    r = CliRunner().invoke(command, [str(tmp_path / "s.yaml"), "--hosts",
                                     str(tmp_path / "inv.ini"), "--no-check"])
    assert r.exit_code == 0, r.output
    assert "dataset: no fio file (a database loads its own)" in r.output
    lines = [ln.strip() for ln in r.output.split("hosts: 1")[1].splitlines()]
    assert lines[2] == "fio: no job: the databases carry the load"
    assert lines[3].startswith("due-time reader: none") and "PostgreSQL + pgbench: pg x1" in lines


def test_a_device_host_with_shared_files_is_planned_without_an_internal_error(
        tmp_path: Path) -> None:
    (tmp_path / "inv.ini").write_text("n1 assay_device=/dev/sdz\n")
    r = CliRunner().invoke(command, ["exchange-quick", "--hosts", str(tmp_path / "inv.ini"),
                                     "--no-check", "--json"])
    assert r.exit_code == 0, r.output
    assert "n1.0/n1.0" not in r.output and "filename=/dev/sdz" in r.output
