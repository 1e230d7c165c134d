"""What a crashed run leaves behind, found and removed: its temporary target directory, its
blkio cgroup, its PostgreSQL clusters, the RBD images it made on Ceph, and a killed cluster
run's SSH control directories and masters. A run crashed when run.json still says `running`
but its assay process is gone (results/liveness.py); fio itself is ended by its guard
(fio/process.py) within seconds.

`assay run` does this before it starts; `assay clean` on request.

Only what assay made is removed, proven on disk, never on the word of a record (a crafted
run.json could name any directory): a temporary target only when the directory at its path
(a symbolic link is never followed) is the one its run made, by device and inode, and holds
its run's mark (platforms/base.py); a PostgreSQL copy only with the marker its run wrote
beside it (postgres/leftovers.py); an SSH control directory only with nothing in it but what
assay and ssh put there (hosts/sshleftovers.py). What is left is said, with why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from assay.hosts import cgroup
from assay.hosts.sshleftovers import clean as ssh_leftovers
from assay.plan import LOCAL
from assay.platforms.base import InUse, NotOurs, remove_made
from assay.platforms.cephtarget import clean_crashed
from assay.postgres.leftovers import clean as postgres_leftovers
from assay.results.catalogue import Catalogue
from assay.results.record import RecordError, RunRecord
from assay.results.rundir import RunDir, read_record
from assay.runners.local import run_here


def crashed(results_root: Path) -> list[Path]:
    """The run directories of the crashed runs under `results_root`."""
    return [Path(row["path"]) for row in Catalogue(results_root).rows()
            if row["status"] == "crashed"]


def clean(results_root: Path, unowned_ssh: bool = False,
          runs: Sequence[Path] | None = None) -> list[str]:
    """Remove the leftovers of every crashed run under `results_root` (`runs`: those runs,
    when the caller has found them), and the SSH control directories and masters of assay
    processes that are gone (hosts/sshleftovers.py; with `unowned_ssh`, also an older
    assay's unused ones); returns what was done."""
    done: list[str] = ssh_leftovers(unowned_ssh)
    for run_dir in crashed(results_root) if runs is None else runs:
        done += postgres_leftovers(run_dir)  # its processes first: they hold the target
        try:
            record = read_record(run_dir)
        except RecordError:
            continue
        target = record.target
        driver = (target.model_extra or {}).get("driver") if target else None
        if isinstance(driver, dict) and driver.get("created"):  # the platform's (Ceph: images)
            done += [f"{line} (crashed run {run_dir.name})" for line in clean_crashed(driver)]
            with contextlib.suppress(OSError):
                RunDir(run_dir).write_record(record)  # what is gone is not asked for again
        done += _temporary_target(run_dir, record)
        # its group as this host of the run, or as runs named it before (`assay/<run id>`),
        # removed as `assay clean --hosts` removes a host's (cluster/hostclean.py)
        names = [cgroup.group_name(run_dir.name, LOCAL), f"assay/{run_dir.name}"]
        if cgroup.BLKIO_ROOT.is_dir():
            done += [f"removed the blkio group {g} of crashed run {run_dir.name}"
                     for g in cgroup.remove_empty(run_here, str(cgroup.BLKIO_ROOT), names)]
    return done


def _temporary_target(run_dir: Path, record: RunRecord) -> list[str]:
    """The crashed run's temporary target removed, if it is the one the run made; else why
    it is left."""
    target = record.target
    if not (target.temporary and not target.removed and target.path):
        return []
    path = Path(target.path)
    made = target.made.model_dump() if target.made is not None else None
    try:
        removed = remove_made(path, made)
    except InUse as e:
        return [f"left {path} of crashed run {run_dir.name}: {e}"]
    except NotOurs as e:
        return [f"left {path}: not made by run {run_dir.name} ({e})"]
    except OSError as e:
        return [f"left {path} of crashed run {run_dir.name}: {e.strerror or e}"]
    target.removed = True  # gone, by us or by someone: not asked for again
    with contextlib.suppress(OSError):
        RunDir(run_dir).write_record(record)
    return [f"removed the temporary target {path} of crashed run {run_dir.name}"] \
        if removed else []
