"""The server's configuration and the clean-up of crashed runs, without a server."""

from __future__ import annotations

import json
from pathlib import Path

from assay.postgres.leftovers import clean
from assay.postgres.load import MIN_SHARED_BUFFERS, caching, settings
from assay.workloads.postgres import Params


def params(**kw: object) -> Params:
    return Params.model_validate({"kind": "postgres", **kw})


def test_shared_buffers_follow_the_dataset_unless_given():
    assert settings(params(), 1 << 30, True, False)["shared_buffers"] == "104857kB"
    assert settings(params(cache=0.5), 1 << 30, True, False)["shared_buffers"] == "524288kB"
    assert settings(params(), 1 << 20, True, False)["shared_buffers"] == \
        f"{MIN_SHARED_BUFFERS // 1024}kB"
    assert settings(params(shared_buffers="64MiB"), 1 << 30, True, False)["shared_buffers"] == \
        "65536kB"


def test_wal_is_direct_unless_a_backup_needs_replication_or_the_target_cannot():
    direct = settings(params(), 1 << 30, True, False)
    assert direct["wal_sync_method"] == "open_datasync" and direct["wal_level"] == "minimal"
    backup = settings(params(), 1 << 30, True, True)
    assert backup["wal_level"] == "replica" and "wal_sync_method" not in backup
    buffered = settings(params(), 1 << 30, False, False)
    assert "wal_sync_method" not in buffered and "wal_level" not in buffered
    assert settings(params(settings={"wal_level": "logical", "work_mem": "8MB"}), 1 << 30, True,
                    False)["wal_level"] == "logical"  # the scenario's own settings win


def test_warnings_teach_when_caches_hold_the_database():
    assert any("fits in shared_buffers" in w for w in caching("pg", 10 << 20, 16 << 20))
    assert any("page cache" in w for w in caching("pg", 10 << 20, 1 << 20))
    assert caching("pg", 1 << 50, 1 << 20) == []


def test_clean_removes_only_the_clusters_assay_made(tmp_path: Path):
    run = tmp_path / "results" / "run1"
    mine, other = tmp_path / "t" / "pg-db.run", tmp_path / "t" / "important"
    for d in (mine, other):
        d.mkdir(parents=True)
        (d / "PG_VERSION").write_text("15\n")
    for name, path in (("db", mine), ("x", other)):
        (run / "postgres" / name).mkdir(parents=True)
        (run / "postgres" / name / "cluster.json").write_text(json.dumps({"data": str(path)}))
    marker = mine.with_name("pg-db.run.json")  # as agent/pgdata.py claims a copy
    marker.write_text(json.dumps({"data": str(mine), "wal": None, "pid": 2 ** 22 + 1}))
    done = clean(run)
    assert not mine.exists() and not marker.exists() and (other / "PG_VERSION").exists()
    assert done == [f"removed the PostgreSQL cluster {mine} of crashed run run1"]


def test_a_database_directory_assay_did_not_make_is_refused_never_written_over(
        tmp_path: Path) -> None:
    """The loaded database and the run's copy (postgres/dataset.py): the agent's rules, here
    as on a host (agent/pgdata.py)."""
    import pytest
    from rich.console import Console

    from assay.exitcodes import UserError
    from assay.postgres.dataset import ensure_loaded, working_copy

    bins = tmp_path / "bin"  # what ensure_loaded asks before it looks: the server's version
    bins.mkdir()
    (bins / "postgres").write_text("#!/bin/sh\necho 'postgres (PostgreSQL) 15.14'\n")
    (bins / "postgres").chmod(0o755)
    target = tmp_path / "t"
    golden = target / "pg-db.loaded"
    golden.mkdir(parents=True)
    (golden / "PG_VERSION").write_text("15\n")
    with pytest.raises(UserError, match=r"pg-db.loaded exists and is not assay's"):
        ensure_loaded("db", params(), target, tmp_path / "logs", False, Console(), bins)
    with pytest.raises(UserError, match=r"pg-db.loaded exists and is not assay's"):
        working_copy(target, "db", None)
    (target / "pg-db.loaded.json").write_text("{}")  # assay's now; a copy that is not
    (target / "pg-db.run").mkdir()
    with pytest.raises(UserError, match=r"pg-db.run exists and is not assay's"):
        working_copy(target, "db", None)
    assert (golden / "PG_VERSION").read_text() == "15\n" and (target / "pg-db.run").is_dir()
