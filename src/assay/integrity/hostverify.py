"""`assay verify RUN` for a cluster run: each host checks its own blocks again, where they
live, with the agent's `verify` command (agent/verify.py), against the journal its writers left.
The run directory keeps each host's journal (integrity/<host>/), and sends it along; only small
rows come back. The passes merge as a run's own do (hosts.py merge): a problem's offset names
its host, and a host that cannot be reached or checked leaves the pass incomplete: no verdict,
never a pass on the hosts that were checked alone.
"""

from __future__ import annotations

import json
import tempfile
import threading
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.agent.area import RBD
from assay.agent.integrity import pack
from assay.exitcodes import UserError
from assay.hosts.inventory import Host
from assay.integrity.hosts import merge
from assay.integrity.journal import Journal
from assay.runners import agent
from assay.runners.base import Runner
from assay.runners.ssh import SshRunner

LABEL = "assay verify"
SPEC_FILE = "verify-spec.json"  # in the host's run directory
RunnerFor = Callable[[Host, Path], Runner]


def journal_gens(run_dir: Path, f: dict[str, Any]) -> array[int]:
    """The generations a file's journal says were acknowledged; a UserError when it is gone or
    damaged (verify could not tell a stale block from a current one)."""
    journal = run_dir / str(f["journal"])
    try:
        return Journal.load(journal.parent, journal.name, int(f["blocks"]),
                            f.get("journal_digest")).gens
    except (OSError, ValueError) as e:
        why = f"{e.strerror}: {e.filename}" if isinstance(e, OSError) else str(e)
        raise UserError(f"the journal of workload {f['workload']!r} is missing or damaged, so "
                        f"verify cannot tell a stale block from a current one: {why}") from None


def specs(run_dir: Path, section: dict[str, Any], inventory: Sequence[Host] | None
          ) -> dict[str, tuple[Host, dict[str, Any]]]:
    """Each host's `verify` spec, by host name, in the run's order; a UserError, before any
    host is reached, when they cannot all be checked."""
    files = section["files"]
    ran = list(dict.fromkeys(str(f["host"]) for f in files))
    run = run_dir.name
    if inventory is None:
        raise UserError(f"run {run} kept its integrity blocks on its hosts ({', '.join(ran)}): "
                        f"give --hosts INVENTORY to check them there again")
    by_name = {h.name: h for h in inventory}
    missing = [h for h in ran if h not in by_name]
    if missing:
        raise UserError(f"the inventory has no host {', '.join(missing)}: run {run} ran on "
                        f"{', '.join(ran)}")
    if any(str(f["path"]).startswith(RBD) for f in files):
        raise UserError(f"run {run} kept its integrity blocks in RBD images: `assay verify` "
                        f"checks files on the hosts' targets; its passes are in run.json "
                        f"(`assay show {run}`)")
    out: dict[str, tuple[Host, dict[str, Any]]] = {}
    for f in files:
        _, spec = out.setdefault(str(f["host"]), (by_name[str(f["host"])], {
            "areas": [], "direct": bool(section.get("direct", True)), "gens": {}}))
        spec["areas"].append({"workload": f["workload"], "path": f["path"],
                              "block": f["block_size"], "blocks": f["blocks"],
                              "writer": f["writer"]})
        spec["gens"][f["workload"]] = pack(journal_gens(run_dir, f).tobytes())
    return out


def ssh(host: Host, workdir: Path) -> Runner:
    return SshRunner(host, workdir, run_id="verify")


def on_hosts(specs: dict[str, tuple[Host, dict[str, Any]]], stop: threading.Event,
             runner_for: RunnerFor = ssh,
             progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """One pass on every host at once, merged; `progress(n)`: n more bytes read on a host."""
    with tempfile.TemporaryDirectory(prefix="assay-verify-") as tmp:
        def one(name: str) -> dict[str, Any]:
            host, spec = specs[name]
            workdir = Path(tmp) / name
            workdir.mkdir()
            try:
                runner = runner_for(host, workdir)
            except Exception as e:  # noqa: BLE001 - the host's problem, said per host
                return {"status": "not verified", "reason": str(e)}
            return _one(runner, spec, stop, progress)

        with ThreadPoolExecutor(max_workers=max(1, min(16, len(specs)))) as pool:
            per_host = dict(zip(specs, pool.map(one, specs), strict=True))
    return merge(LABEL, None, per_host)


def _one(runner: Runner, spec: dict[str, Any], stop: threading.Event,
         progress: Callable[[int], None] | None) -> dict[str, Any]:
    """One host's pass: its record, or why it was not verified."""
    ended = threading.Event()
    read = 0  # what the host said it has read (it says the total so far)
    try:
        runner.write_job(SPEC_FILE, json.dumps(spec))
        proc = runner.agent("verify", [SPEC_FILE])
        assert proc.stdout is not None and proc.stderr is not None
        result: dict[str, Any] = {}
        for row in agent.rows(proc.stdout):
            if "pid" in row:  # Ctrl-C here stops the pass there (its stdin is not ours)
                threading.Thread(target=_stopper, args=(runner, str(row["pid"]), stop, ended),
                                 daemon=True).start()
            elif "progress" in row and progress is not None:
                progress(int(row["progress"]) - read)
                read = int(row["progress"])
            elif "error" in row:
                result = {"status": "not verified", "reason": str(row["error"])}
            elif "pass" in row:
                result = row["pass"]
        err = proc.stderr.read().decode(errors="replace").strip()
        rc = proc.wait()
        return result or {"status": "not verified",
                          "reason": f"its verify command ended ({rc}): "
                                    f"{err.splitlines()[-1] if err else 'no message'}"}
    except Exception as e:  # noqa: BLE001 - OSError, the runner's own (SSH): said per host
        return {"status": "not verified", "reason": str(e)}
    finally:
        ended.set()
        runner.close()


def _stopper(runner: Runner, pid: str, stop: threading.Event, ended: threading.Event) -> None:
    """The host's pass stopped (SIGTERM: it says what it counted) when the user stops ours."""
    while not ended.wait(0.2):
        if stop.is_set():
            runner.run(["kill", "-s", "TERM", pid])
            return
