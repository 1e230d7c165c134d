"""A cluster's hosts checked before any IO: each host's clock, fio, target and job files, and
one fio version on all of them. Every problem is a UserError naming its host."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from assay.cluster import devices
from assay.exitcodes import UserError
from assay.hosts.check import FIO_MIN, fio_version
from assay.participants.lags import HostLags
from assay.plan import RUN_JOB, Plan
from assay.plan.model import DIRECT_VAR, variables
from assay.platforms import lock, rbdjobs
from assay.prefill.files import DataFiles, claim, data_files, read, refuse_foreign
from assay.runners.base import CommandResult, Powers, Runner
from assay.runners.ssh import SshRunner

# the host's facts, one line each ("-" when unknown): kernel, CPUs, memory (an integer: awk
# prints large products in exponent form), the target's filesystem type and its free bytes
FACTS = ('p=$1; while [ ! -e "$p" ]; do p=$(dirname -- "$p"); done; '
         'uname -sr; nproc; awk \'/MemTotal/ {printf "%.0f\\n", $2 * 1024}\' /proc/meminfo; '
         'df -PT -- "$p" 2>/dev/null | awk \'NR == 2 {t = $2} END {print (t == "" ? "-" : t)}\'; '
         'df -Pk -- "$p" 2>/dev/null | awk \'NR == 2 {f = $4} END '
         '{if (f == "") print "-"; else printf "%.0f\\n", f * 1024}\'')


def check_host(plan: Plan, name: str, runner: Runner, env: dict[str, str], force: bool,
               duetime: HostLags) -> tuple[dict[str, Any], float, DataFiles]:
    """One host, before any IO: clock, fio, target, job files. Its facts for run.json, what
    one remote command took there (a loaded machine starts ssh slowly), and its data files
    as its target holds them (what the prefill writes, or reuses)."""
    assert plan.cluster is not None
    hp = plan.cluster.hosts[name]
    facts: dict[str, Any] = {"address": hp.host.address, "target": hp.host.target,
                             "instances": hp.instances}
    if Powers.CLOCK in runner.powers:
        offset, rtt = runner.measure_clock()
        facts.update(clock_offset_ms=round(offset * 1000, 3), rtt_ms=round(rtt * 1000, 3))
    began = time.monotonic()
    fio = runner.run([str(hp.host.vars.get("assay_fio") or "fio"), "--version"])
    spawn_s = time.monotonic() - began
    if fio.returncode != 0:
        raise UserError(f"{name}: fio is not installed there (or does not run): "
                        f"{_last(fio.stderr)}")
    version = fio_version(fio.stdout)
    facts["fio"] = fio.stdout.strip() or "unknown"
    if version is not None and version < FIO_MIN:
        raise UserError(f"{name}: {fio.stdout.strip()} is older than fio "
                        f"{'.'.join(map(str, FIO_MIN))}, the oldest assay drives")
    if hp.host.device:  # a raw device there: checked as a local one is
        hold_target(plan.name, name, runner, _device_dir(name, runner, hp.host.device))
        facts.update({k: v for k, v in _facts(runner.run(["sh", "-c", FACTS, "assay-probe",
                                                          "/"])).items()
                      if k in ("kernel", "cpus", "mem_bytes")})
        facts.update(devices.check(name, runner, hp.host.device,
                                   sum(size for _, size in hp.files), force))
        files = data_files(plan, name, str(hp.host.target))  # no manifest: written each run
    else:
        files = _check_directory(plan, name, runner, facts, env, force)
    for job, text in plan.jobfiles[name].items():
        runner.write_job(job, text)
    # its session opened now, not when it is needed
    if Powers.SESSION in runner.powers and not runner.ping(30.0):
        raise UserError(f"{name}: does not answer over SSH (a shell echoing a line)")
    complaint = runner.check_job(RUN_JOB, env)
    if complaint:
        raise UserError(f"{name}: fio rejected the job file: {complaint}")
    duetime.check(name, runner)  # python3 for the agent, when it is needed
    return facts, spawn_s, files


def _check_directory(plan: Plan, name: str, runner: Runner, facts: dict[str, Any],
                     env: dict[str, str], force: bool) -> DataFiles:
    """A target directory: assay's to write in, writable, with room for the files (the same
    rules as on one host: prefill/files.py). A symbolic link is followed, as a local --path
    is (fio refuses a link as its `directory`): the directory it names is the one used, and
    `env` (fio's variables there) says so. Held for the run (`hold_target`) before its
    manifests are read."""
    assert plan.cluster is not None
    hp = plan.cluster.hosts[name]
    target = resolve(name, runner, hp.host.path or "/")
    if target != os.path.normpath(hp.host.path or "/"):  # a link (not a trailing /)
        facts["path_resolved"] = target  # run.json; the session prints it
        env.update(variables(Path(target), env.get(DIRECT_VAR) == "1"))
    hold_target(plan.name, name, runner, target)
    facts.update(_facts(runner.run(["sh", "-c", FACTS, "assay-probe", target])))
    files = data_files(plan, name, target)
    read(runner.run, files)
    refuse_foreign(files, force)
    runner.prepare(Path(target), hp.subdirs)  # unwritable: said before its space
    free = facts.get("free_bytes")  # RBD images hold no host files
    claim(runner.run, files, free if isinstance(free, int) and
          not rbdjobs.on_rbd(plan.scenario.target) else None)
    return files


# $1 a path: printed with every symbolic link resolved (its last part may not exist yet)
REALPATH = 'realpath -- "$1" 2>/dev/null || readlink -f -- "$1"'


def resolve(name: str, runner: Runner, path: str) -> str:
    """`path` on the host with its symbolic links resolved (as Path.resolve does here). A
    host reached otherwise than through a session (a stand-in in tests) is left as it is."""
    if Powers.SESSION not in runner.powers:
        return path
    r = runner.run(["sh", "-c", REALPATH, "assay-realpath", path])
    out = r.stdout.strip() if r.returncode == 0 else ""
    if out.startswith("/") and "\n" not in out:
        return out
    raise UserError(f"{name}: cannot resolve the target {path} there: {_last(r.stderr)}")


def hold_target(scenario: str, name: str, runner: Runner, directory: str) -> None:
    """One run at a time on the host's target, as on this machine (platforms/lock.py): its
    lock file in `directory`, held by a shell in an SSH session for the run (until the
    runner is closed, or this process dies), before any IO. UserError naming the run that
    holds it. A host reached otherwise (a stand-in in tests) is not locked."""
    if not isinstance(runner, SshRunner):
        return
    words = f"{lock.words(scenario, runner.run_id)} {lock.controller()}"
    for _ in range(2):
        line, err, rc = runner.hold(["sh", "-c", lock.HOLD, "assay-lock", directory, words,
                                     runner.run_id, name], lock.HELD)
        if line in (lock.HELD, lock.SHARED):
            return
        stale = lock.stale_holder(line)
        if stale is None:
            break
        # its run's controller, this machine's, is gone: what holds it is the session of a
        # host that run lost (cut off, its sshd not yet aware); end it, as its session would
        runner.run(["kill", "-TERM", str(stale)])
        time.sleep(0.5)
    if line.startswith(lock.BUSY + " "):
        holder = lock.HOLDER_BOOT.sub("", line[len(lock.BUSY) + 1:])  # for stale_holder
        raise UserError(f"{name}: {lock.refusal(directory, holder)}")
    user = runner.spec.user or "default"
    if rc == 3:  # its directory cannot be made, or its lock file written (as prepare says)
        raise UserError(f"{name}: cannot write to the target {directory} there (user {user}): "
                        f"{err or 'no message'}")
    raise UserError(f"{name}: cannot lock the target {directory} there (user {user}): "
                    f"{err or line or 'no answer'}")


def _device_dir(name: str, runner: Runner, device: str) -> str:
    """Where the host keeps what assay knows of its raw device (its lock), as this machine
    does for a local one."""
    r = runner.run(["sh", "-c", lock.DEVICE_DIR, "assay-device-dir", device])
    out = r.stdout.strip()
    if r.returncode != 0 or not out.startswith("/"):
        raise UserError(f"{name}: cannot name the state directory of {device} there: "
                        f"{_last(r.stderr)}")
    return out


def same_fio(facts: dict[str, dict[str, Any]]) -> None:
    """One fio version on every host, or results would not compare."""
    versions: dict[str, list[str]] = {}
    for name, f in facts.items():
        versions.setdefault(str(f.get("fio")), []).append(name)
    if len(versions) > 1:
        most = max(versions.values(), key=len)
        odd = [f"{', '.join(hosts)} ({v})" for v, hosts in versions.items()
               if hosts is not most]
        raise UserError(f"fio differs between hosts: {'; '.join(odd)} against "
                        f"{[v for v, h in versions.items() if h is most][0]} on "
                        f"{', '.join(most)}: results would not compare; install one "
                        f"version everywhere")


def _facts(r: CommandResult) -> dict[str, Any]:
    lines = r.stdout.splitlines() if r.returncode == 0 else []
    keys = ("kernel", "cpus", "mem_bytes", "fs", "free_bytes")
    out: dict[str, Any] = {}
    for key, value in zip(keys, lines, strict=False):
        if value.strip() not in ("", "-"):
            out[key] = int(value) if value.isdigit() else value
    return out


def _last(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"
