"""`assay clean --hosts`: what crashed runs left on each host. Only what carries assay's mark
or name, and only when its run is gone:

- a run directory in the host's $TMPDIR (a host lost mid-run, or restarted): its mark's
  shell is gone (runners/sshsessions.py);
- a PostgreSQL copy in the host's target: its marker's agent is gone (agent/pgclean.py);
- a blkio group of a run this machine's results say crashed, `assay/<run id>.<host>`: an
  empty group only (its fio has ended). An empty group alone is no proof its run is gone: a
  run that is starting has one.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from assay.hosts import cgroup
from assay.hosts.inventory import Host
from assay.runners import agent
from assay.runners.ssh import SshRunner
from assay.runners.sshsessions import remove_leftovers


def clean_hosts(hosts: Sequence[Host], crashed: Sequence[str] = (),
                accept_new: bool = False) -> list[str]:
    """Each host cleaned, at once; `crashed`: the ids of the crashed runs in the results.
    What was done, one line each."""
    def one(host: Host) -> list[str]:
        done: list[str] = []
        with tempfile.TemporaryDirectory(prefix="assay-clean-") as d:
            runner = SshRunner(host, Path(d), run_id="clean", accept_new=accept_new)
            try:
                done += [f"{host.name}: removed the run directory {where} a run left there"
                         for where in remove_leftovers(runner.ssh)]
                if host.path:
                    done += _databases(runner, host.path)
                done += _groups(runner, host, crashed)
            except Exception as e:  # noqa: BLE001 - said per host; the others are cleaned
                done.append(f"{host.name}: could not be cleaned: {e}")
            finally:
                runner.close()
        return done

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(hosts)))) as pool:
        return [line for lines in pool.map(one, hosts) for line in lines]


def _databases(runner: SshRunner, path: str) -> list[str]:
    proc = runner.agent("pgclean", [path])
    out = proc.stdout.read() if proc.stdout else b""
    proc.wait()
    return [f"{runner.host}: removed the PostgreSQL copy {row['removed']} of a crashed run" +
            (f" ({row['processes']} processes ended)" if row.get("processes") else "")
            for row in agent.rows(io.BytesIO(out)) if "removed" in row]


def _groups(runner: SshRunner, host: Host, crashed: Sequence[str]) -> list[str]:
    if not crashed:
        return []
    names = {cgroup.group_name(run, host.name): run for run in crashed}
    root = str(host.vars.get("assay_blkio_root") or cgroup.ROOT)
    return [f"{host.name}: removed the blkio group {g} of crashed run {names[g]}"
            for g in cgroup.remove_empty(runner.run, root, list(names))]
