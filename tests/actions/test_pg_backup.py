"""`pg_backup` over one host and over several, alike: each host's agent copies its own server
(stand-in pg_basebackup programs here, real processes; the real one runs in
tests/postgres/test_engine_postgres.py and on the lab's hosts). The figures add up over the
hosts, a host that fails is named, and a step that times out leaves no copy anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.actions import pg_backup
from assay.platforms.fsbase import ActionFailed
from assay.postgres.servers import DatabaseServer
from assay.runners.local import LocalRunner
from tests.actions.support import context, local_platform

# $WRITE bytes into -D, then $SLEEP s; exits $RC
STAND_IN = """#!/bin/sh
mkdir -p "$2" && head -c {size} /dev/zero > "$2/base.tar" && sleep {sleep}
[ {rc} = 0 ] || {{ echo "pg_basebackup: error: connection refused" >&2; exit {rc}; }}
"""


class Workload:
    """A running workload's servers, as postgres/load.py and cluster/postgres.py give them."""

    def __init__(self, servers: dict[str, DatabaseServer]):
        self._servers = servers

    def servers(self) -> dict[str, DatabaseServer]:
        return self._servers


def host(tmp_path: Path, name: str, size: int = 1000, sleep: float = 0,
         rc: int = 0) -> DatabaseServer:
    bindir = tmp_path / name / "bin"
    bindir.mkdir(parents=True)
    (bindir / "pg_basebackup").write_text(STAND_IN.format(size=size, sleep=sleep, rc=rc))
    (bindir / "pg_basebackup").chmod(0o755)
    (tmp_path / name / "target").mkdir()
    return DatabaseServer(LocalRunner(name, tmp_path / name), str(bindir), "/sock", 5432,
                          str(tmp_path / name / "target"))


def run(servers: dict[str, DatabaseServer], tmp_path: Path, **kw: object) \
        -> tuple[str, dict[str, object]]:
    p = pg_backup.Params.model_validate({"at": 1, **kw})
    ctx = context(local_platform(tmp_path), p, name="backup", timeout=p.timeout)
    ctx.databases = {"pg": Workload(servers)}
    return pg_backup.run(p, ctx), ctx.details


def test_one_host_and_three_are_copied_the_same_way(tmp_path: Path) -> None:
    said, details = run({"local": host(tmp_path, "local", 3000)}, tmp_path)
    dest = tmp_path / "local" / "target" / "pg-backups" / "pg-backup-run-1-backup-1.local"
    assert said.startswith("backed up pg: 0 MB in ")
    assert details["bytes"] == 3000 and details["destination"] == str(dest)
    assert not (tmp_path / "local" / "target" / "pg-backups").exists()
    three = {h: host(tmp_path, h, 1000 * i) for i, h in enumerate(("n1", "n2", "n3"), 1)}
    said, details = run(three, tmp_path, to=str(tmp_path / "backups"))
    assert said.startswith("backed up pg on 3 hosts: ")
    assert details["bytes"] == 6000 and "destination" not in details
    hosts = details["hosts"]
    assert isinstance(hosts, dict) and sorted(hosts) == ["n1", "n2", "n3"]
    assert [hosts[h]["bytes"] for h in ("n1", "n2", "n3")] == [1000, 2000, 3000]
    assert details["backup_s"] == pytest.approx(max(h["seconds"] for h in hosts.values()),
                                                abs=0.01)
    assert (tmp_path / "backups").is_dir()  # the user's `to` stays, emptied of our copies
    assert list((tmp_path / "backups").iterdir()) == []


def test_a_host_that_fails_is_named(tmp_path: Path) -> None:
    servers = {"n1": host(tmp_path, "n1"), "n2": host(tmp_path, "n2", rc=2)}
    with pytest.raises(ActionFailed, match=r"^n2: pg_basebackup failed \(2\): pg_basebackup: "
                                           r"error: connection refused$"):
        run(servers, tmp_path)
    assert not list(tmp_path.glob("n*/target/pg-backups"))


def test_a_step_that_times_out_leaves_no_copy_on_any_host(tmp_path: Path) -> None:
    servers = {h: host(tmp_path, h, sleep=30) for h in ("n1", "n2")}
    with pytest.raises(ActionFailed, match="timeout"):
        run(servers, tmp_path, timeout="1.5s")
    assert not list(tmp_path.glob("n*/target/pg-backups"))  # each agent removed its own


def test_nothing_running_is_a_clear_failure(tmp_path: Path) -> None:
    with pytest.raises(ActionFailed, match=r"no running postgres workload pg to back up "
                                           r"\(running: pg\)"):
        run({}, tmp_path)
