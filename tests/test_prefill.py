"""Prefill with real fio on this machine, a cluster of one: every file written once with its
data pattern and reused while unchanged (the manifest); --fresh, a changed pattern or a damaged
file rewrite exactly what is stale; too little free space is refused before a byte is written.
The same code prefills every host of a cluster run (tests/cluster/test_prefill_lab.py)."""

from __future__ import annotations

import json
import os
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.exitcodes import RunAborted, UserError
from assay.fio.jsonstream import JsonStream
from assay.plan import PREFILL_JOB, Plan, plan_text
from assay.platforms.base import supports_direct_io
from assay.platforms.safety import MANIFEST, read_manifest
from assay.prefill import prefill
from assay.prefill.files import claim, data_files, read, refuse_foreign
from assay.results.rundir import RunDir, read_ndjson
from assay.runners import LocalRunner
from assay.runners.local import run_here
from tests.conftest import needs_fio, quiet_console
from tests.realfs import Machine

SCENARIO = """name: pre
workloads:
  db: {{kind: oltp, data_iops: 100, log_iops: 0, log_files: 0, dataset: {dataset}{data}}}
timeline: {{duration: 5s}}
"""
MiB = 1 << 20


def make_plan(dataset: str = "16MiB", compressibility: float | None = None) -> Plan:
    data = f", data: {{compressibility: {compressibility}}}" if compressibility else ""
    return plan_text(SCENARIO.format(dataset=dataset, data=data), "pre.yaml")


def data_hash(plan: Plan, name: str) -> str:
    return data_files(plan, "local", "/any").hashes[name]  # where is no part of it


class Prefiller:
    """Calls prefill the way the engine does: a new run directory and runner each time."""

    def __init__(self, tmp_path: Path, directory: Path):
        self.results = tmp_path / "results"
        self.directory = directory
        self.run_dir: RunDir | None = None

    def __call__(self, plan: Plan, *, fresh: bool = False,
                 target: Path | None = None) -> dict[str, Any]:
        rd = self.run_dir = RunDir.create(self.results, plan.name)
        runner = LocalRunner("local", rd.host_dir("local"))
        runner.write_job(PREFILL_JOB, plan.jobfile(name=PREFILL_JOB))
        direct = supports_direct_io(self.directory)
        env = {"ASSAY_TARGET": str(target or self.directory), "ASSAY_DIRECT": str(int(direct))}
        try:  # as sessions/local.py does: checked and claimed at its opening, then prefilled
            files = data_files(plan, "local", str(self.directory))
            read(run_here, files)
            refuse_foreign(files, False)
            claim(run_here, files, shutil.disk_usage(self.directory).free)
            return prefill({"local": (run_here, files)},
                           lambda s: runner.start(PREFILL_JOB, env, sections=s["local"]), rd,
                           quiet_console(), fresh)
        finally:
            rd.close()

    def events(self) -> list[dict[str, Any]]:
        assert self.run_dir is not None
        path = self.run_dir.path / "events.ndjson"
        return [e for e in read_ndjson(path) if e["kind"] == "prefill"] if path.exists() else []

    def sections_written(self) -> list[str]:
        """The fio jobs of this call's prefill, from fio's own final report."""
        assert self.run_dir is not None
        out = self.run_dir.host_dir("local") / "prefill.out.json"
        if not out.exists():
            return []
        stream = JsonStream()
        docs = stream.feed(out.read_text()) + stream.close()
        return sorted(j["jobname"] for j in docs[-1]["jobs"])


def stamps(directory: Path, plan: Plan) -> dict[str, int]:
    return {n: (directory / n).stat().st_mtime_ns for n, _ in plan.files}


def ratio(path: Path) -> float:
    raw = path.read_bytes()
    return len(raw) / len(zlib.compress(raw, 6))


@pytest.fixture
def target(tmp_path: Path) -> Path:
    d = tmp_path / "target"
    d.mkdir()
    return d


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Path]:
    """A 48 MiB tmpfs: less free than a 16 MiB dataset plus prefill's safety margin."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mounts a tmpfs)")
    machine = Machine(tmp_path)
    try:
        yield machine.tmpfs("48m")
    finally:
        machine.cleanup()


@needs_fio
def test_writes_every_file_once_then_reuses_them(tmp_path: Path, target: Path) -> None:
    plan = make_plan()
    run = Prefiller(tmp_path, target)
    info = run(plan)
    assert {k: info[k] for k in ("files", "bytes", "reused_files", "fresh")} == \
        {"files": 4, "bytes": 16 * MiB, "reused_files": 0, "fresh": False}
    assert info["seconds"] > 0
    assert [e["outcome"] for e in run.events()] == ["started", "done"]
    assert run.sections_written() == sorted(f"prefill.{n}" for n, _ in plan.files)
    manifest = read_manifest(target)
    for name, size in plan.files:
        assert (target / name).stat().st_size == size
        assert manifest[name]["prefilled"] is True and manifest[name]["size"] == size
        assert manifest[name]["data"] == data_hash(plan, name) != ""
    assert (target / MANIFEST).exists()
    before = stamps(target, plan)

    info = run(make_plan())  # the same scenario planned again: nothing to write
    assert (info["files"], info["bytes"], info["reused_files"]) == (0, 0, 4)
    assert [e["outcome"] for e in run.events()] == ["reused"]
    assert run.sections_written() == []  # fio did not even start
    assert stamps(target, plan) == before


@needs_fio
def test_fresh_rewrites_every_file(tmp_path: Path, target: Path) -> None:
    plan = make_plan()
    run = Prefiller(tmp_path, target)
    run(plan)
    before = stamps(target, plan)
    info = run(plan, fresh=True)
    assert (info["files"], info["reused_files"], info["fresh"]) == (4, 0, True)
    after = stamps(target, plan)
    assert all(after[n] > before[n] for n in before)
    assert len(run.sections_written()) == 4


@needs_fio
def test_a_changed_data_pattern_rewrites_with_the_new_pattern(tmp_path: Path,
                                                              target: Path) -> None:
    random_plan = make_plan()
    run = Prefiller(tmp_path, target)
    run(random_plan)
    name = random_plan.files[0][0]
    assert ratio(target / name) < 1.1  # refilled random buffers do not compress
    squeezable = make_plan(compressibility=2.0)
    assert data_hash(squeezable, name) != data_hash(random_plan, name)
    info = run(squeezable)
    assert (info["files"], info["reused_files"]) == (4, 0)
    assert 1.6 < ratio(target / name) < 2.6  # what the scenario asked for
    assert read_manifest(target)[name]["data"] == data_hash(squeezable, name)
    assert run(squeezable)["files"] == 0


@needs_fio
def test_only_stale_files_are_written(tmp_path: Path, target: Path) -> None:
    plan = make_plan()
    run = Prefiller(tmp_path, target)
    run(plan)
    (a, _), (b, _), (c, _), (d, _) = plan.files
    (target / a).unlink()  # gone
    with open(target / b, "r+b") as fh:  # cut short
        fh.truncate(MiB)
    manifest = read_manifest(target)
    manifest[c]["prefilled"] = False  # claimed by a prefill that never finished
    (target / MANIFEST).write_text(json.dumps(manifest))
    untouched = (target / d).stat().st_mtime_ns
    info = run(plan)
    assert (info["files"], info["reused_files"], info["bytes"]) == (3, 1, 12 * MiB)
    assert run.sections_written() == sorted(f"prefill.{n}" for n in (a, b, c))
    assert (target / d).stat().st_mtime_ns == untouched
    assert all((target / n).stat().st_size == s for n, s in plan.files)
    assert all(e["prefilled"] for e in read_manifest(target).values())


@needs_fio
def test_a_failed_prefill_aborts_and_leaves_the_files_stale(tmp_path: Path,
                                                           target: Path) -> None:
    plan = make_plan()
    run = Prefiller(tmp_path, target)
    with pytest.raises(RunAborted, match=r"prefill failed: fio exit \d+"):
        run(plan, target=tmp_path / "missing" / "dir")  # fio cannot create its files there
    manifest = read_manifest(target)
    assert sorted(manifest) == sorted(n for n, _ in plan.files)  # claimed before writing
    assert not any(e.get("prefilled") for e in manifest.values())
    assert [e["outcome"] for e in run.events()] == ["started"]


@needs_fio
def test_not_enough_free_space_is_refused_before_writing(tmp_path: Path, small: Path) -> None:
    run = Prefiller(tmp_path, small)
    with pytest.raises(UserError, match=r"not enough free space at .*: the files need "
                                        r"16(\.0)? ?MiB more.*Lower `dataset`"):
        run(make_plan())
    assert list(small.iterdir()) == []  # not a file, not even the manifest
    assert run.sections_written() == [] and run.events() == []
