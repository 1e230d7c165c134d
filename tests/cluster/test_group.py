"""The engine over several hosts through the RunnerGroup, fast: recorded real fio output
(ReplayRunner) and synthetic hosts whose latencies are known one by one. The same paths run
against real hosts in tests/cluster/test_lab.py."""

from __future__ import annotations

import io
import json
import math
import random
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from rich.console import Console

from assay.engine import Engine
from assay.exitcodes import UserError
from assay.hosts import inventory
from assay.plan.build import load, plan_text
from assay.platforms.safety import MANIFEST
from assay.report.terminal import print_summary
from assay.results.blocklog import read_rows
from assay.results.rundir import read_ndjson, read_record
from assay.run_options import Outcome, RunOptions
from assay.runners import ReplayRunner
from assay.runners.base import CommandResult, Document, FioRunBase

REPLAY = Path(__file__).parents[1] / "fixtures" / "replay"


def hosts_in(tmp_path: Path, names: Sequence[str], shared: bool = False) -> list:
    lines = []
    for n in names:
        target = tmp_path / "targets" / ("shared" if shared else n)
        target.mkdir(parents=True, exist_ok=True)
        lines.append(f"{n} ansible_host=192.0.2.{len(lines) + 1} assay_path={target}")
    return inventory.parse("\n".join(lines) + "\n", "inventory.ini")


def run(plan, tmp_path: Path, factory) -> tuple[Outcome, dict]:
    out = Engine(plan, RunOptions(tmp_path / "results", runner=factory),
                 Console(file=io.StringIO())).execute()
    return out, json.loads((out.run_dir / "run.json").read_text())


class LateRunner(ReplayRunner):
    """A replayed host whose first dump comes late: another host's whole recording, its
    end included, is read before it."""

    def start(self, name, env, *, at=None, sections=()):
        run = super().start(name, env, at=at, sections=sections)
        docs = run.documents

        def late(poll: float = 0.2) -> Iterator[Document | None]:
            time.sleep(0.6)
            yield from docs(poll)
        run.documents = late  # type: ignore[method-assign]
        return run


@pytest.mark.parametrize("survivors_late", [False, True], ids=["as-recorded", "loss-first"])
def test_replayed_hosts_merge_and_a_dying_host_is_lost_and_graded_n_minus_1(
        tmp_path, survivors_late):
    text = (REPLAY / "scenario.yaml").read_text() + \
        '  db.data.read.iops: ">= 60% target after host_lost"\n'
    hosts = hosts_in(tmp_path, ["n1", "n2", "n3"], shared=True)
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts)
    recordings = {"n1": "steady", "n2": "steady", "n3": "died"}
    survivor = LateRunner if survivors_late else ReplayRunner
    out, rec = run(plan, tmp_path, lambda host, work: (
        ReplayRunner if host == "n3" else survivor)(REPLAY / recordings[host], host, work))
    c = rec["cluster"]
    # the loss: an event, a timeline step (phases cut at it), and the hosts still active
    assert list(c["lost"]) == ["n3"] and "status -9" in c["lost"]["n3"]["reason"]
    events = list(read_ndjson(out.run_dir / "events.ndjson"))
    lost = [e for e in events if e["kind"] == "host_lost"]
    assert lost[0]["host"] == "n3" and lost[0]["hosts_active"] == 2
    assert any(e["kind"] == "step" and e["name"] == "host_lost" for e in events)
    active = list(read_ndjson(out.run_dir / "cluster.ndjson"))
    assert active[0]["hosts_active"] == 3 and active[-1]["hosts_active"] == 2
    assert active[-1]["hosts"] == ["n1", "n2"]
    # the merged series is the sum of the hosts' own, IO for IO (n3's up to its loss)
    merged = sum(r["ios"] for r in read_rows(out.run_dir, "samples"))
    per_host = {h: sum(r["ios"] for r in read_rows(out.run_dir / "hosts" / h, "samples"))
                for h in ("n1", "n2", "n3")}
    assert merged == sum(per_host.values()) > 0
    assert per_host["n1"] == per_host["n2"] > per_host["n3"] > 0
    # after the loss the schedule is the survivors': the N-1 threshold holds
    after = [r for r in rec["thresholds"] if "after host_lost" in r["expr"]]
    assert after and after[0]["passed"], after
    # every artifact keyed by host, in one run directory
    for h in ("n1", "n2", "n3"):
        assert (out.run_dir / "hosts" / h / "run.fio").exists()
        assert (out.run_dir / "hosts" / h / "run.out.json").stat().st_size > 0
    assert set(c["graded"]) == {"n1", "n2", "n3"}


def test_a_host_that_ended_before_any_dump_fails_the_run_by_name(tmp_path):
    hosts = hosts_in(tmp_path, ["n1", "n2"])
    plan = load(str(REPLAY / "scenario.yaml"), hosts=hosts)

    class Mute(ReplayRunner):  # n2's fio writes nothing and exits 0: it did no IO
        def start(self, name, env, *, at=None, sections=()):
            return ReplayRunner.start(self, "none.fio", env, at=at, sections=sections)

    out, rec = run(plan, tmp_path, lambda host, work: (
        ReplayRunner if host == "n1" else Mute)(REPLAY / "steady", host, work))
    assert out.status == "failed"
    failed = [t for t in rec["cluster"]["graded"]["n2"]["thresholds"] if not t["passed"]]
    assert failed and "n2 did no IO" in failed[0]["note"]
    assert rec["cluster"]["graded"]["n1"]["passed"]


class Versioned(ReplayRunner):
    versions: Mapping[str, str] = {}

    def run(self, argv: Sequence[str], timeout: float = 60.0) -> CommandResult:
        if list(argv)[-1:] == ["--version"]:
            return CommandResult(0, self.versions[self.host] + "\n", "")
        return CommandResult(0, "", "")


@pytest.mark.parametrize(("versions", "message"), [
    ({"n1": "fio-3.33", "n2": "fio-3.33", "n3": "fio-3.36"}, "n3 (fio-3.36) against fio-3.33"),
    ({"n1": "fio-3.33", "n2": "fio-3.28", "n3": "fio-3.33"}, "n2: fio-3.28 is older"),
])
def test_fio_versions_are_checked_on_every_host_before_any_io(tmp_path, versions, message):
    hosts = hosts_in(tmp_path, ["n1", "n2", "n3"])
    plan = load(str(REPLAY / "scenario.yaml"), hosts=hosts)
    started: list[str] = []

    class Runner(Versioned):
        def start(self, name, env, *, at=None, sections=()):
            started.append(self.host)
            return super().start(name, env, at=at, sections=sections)

    Runner.versions = versions
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(plan, tmp_path, lambda host, work: Runner(REPLAY / "steady", host, work))
    assert started == []  # refused before any fio started
    assert not list((tmp_path / "results").glob("*/run.json"))  # no run to keep


# -- synthetic hosts: merged percentiles against the pooled samples -----------------------

def fio_bucket(ns: int) -> int:
    """The value fio's json+ `bins` give the bucket of a latency (stat.c, 64 per power of 2)."""
    bits, per = 6, 64
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= bits:
        return ns
    error_bits = msb - bits
    idx = ((error_bits + 1) << bits) + ((per - 1) & (ns >> error_bits))
    if idx < per << 1:
        return idx
    error_bits = (idx >> bits) - 1
    return int((1 << (error_bits + bits)) + (idx % per + 0.5) * (1 << error_bits))


class SyntheticRun(FioRunBase):
    """A host's fio reporting, each second, the read latencies given (cumulative json+)."""

    def __init__(self, seconds: list[list[int]], job: str, start: float):
        self._docs: list[Document] = []
        bins: dict[str, int] = {}
        n, total, top = 0, 0, 0
        for k, lats in enumerate(seconds, 1):
            for ns in lats:
                key = str(fio_bucket(ns))
                bins[key] = bins.get(key, 0) + 1
            n, total, top = n + len(lats), total + sum(lats), max([top, *lats])
            self._docs.append({"timestamp_ms": (start + k) * 1000, "jobs": [{
                "jobname": job, "job_runtime": k * 1000, "error": 0,
                "read": {"io_bytes": n * 8192, "lat_ns": {"N": n, "mean": total / n,
                                                          "max": top, "bins": dict(bins)}},
                "write": {"io_bytes": 0, "lat_ns": {"N": 0}}}]})
        self._start = start
        self.last_doc: Document | None = None

    @property
    def started(self) -> float:
        return self._start

    def documents(self, poll: float = 0.2) -> Iterator[Document | None]:
        for doc in self._docs:
            self.last_doc = doc
            yield doc

    def stop(self) -> None:
        pass

    def wait(self) -> int:
        return 0

    def stderr_tail(self, lines: int = 5) -> str:
        return ""


def test_merged_percentiles_equal_the_pooled_samples_within_fio_bin_error(tmp_path):
    rnd = random.Random(7)
    shapes = {  # three hosts with very different latencies, and different IO counts
        "n1": lambda: int(rnd.uniform(80e3, 900e3)),
        "n2": lambda: int(rnd.lognormvariate(math.log(3e6), 0.6)),
        "n3": lambda: int(rnd.expovariate(1 / 15e6)) + 200_000,
    }
    counts = {"n1": 3000, "n2": 900, "n3": 120}
    data = {h: [[shapes[h]() for _ in range(counts[h])] for _ in range(6)] for h in shapes}
    plan = load(str(REPLAY / "scenario.yaml"), warmup=0, hosts=hosts_in(tmp_path, list(data)))
    job = plan.specs[0].jobs[0]
    assert plan.specs[0].component == "db.data.read"

    class Synthetic(ReplayRunner):
        def start(self, name, env, *, at=None, sections=()):
            if name != "run.fio":
                return super().start(name, env, at=at, sections=sections)
            return SyntheticRun(data[self.host], job, 1_000_000.0)

    out, rec = run(plan, tmp_path, lambda host, work: Synthetic(REPLAY / "steady", host, work))
    pooled = sorted(ns for seconds in data.values() for second in seconds for ns in second)
    stats = rec["stats"]["db.data.read"]
    assert stats["ios"] == len(pooled)
    for p, key in ((50, "lat_p50_ms"), (99, "lat_p99_ms"), (99.9, "lat_p999_ms")):
        exact = pooled[math.ceil(len(pooled) * p / 100) - 1] / 1e6
        assert stats[key] == pytest.approx(exact, rel=0.01), (p, stats[key], exact)
    # and not what averaging the hosts' percentiles would give
    avg_p99 = sum(rec["cluster"]["graded"][h]["stats"]["db.data.read"]["lat_p99_ms"]
                  for h in data) / 3
    assert abs(avg_p99 - stats["lat_p99_ms"]) / stats["lat_p99_ms"] > 0.1
    # each host's own p99 is its own samples'
    for h, seconds in data.items():
        own = sorted(ns for second in seconds for ns in second)
        exact = own[math.ceil(len(own) * 0.99) - 1] / 1e6
        got = rec["cluster"]["graded"][h]["stats"]["db.data.read"]["lat_p99_ms"]
        assert got == pytest.approx(exact, rel=0.01)


def test_the_documented_cluster_scenarios_plan_on_the_readme_inventory():
    root = Path(__file__).parents[2]
    ini = re.findall(r"```ini\n(.*?)```", (root / "README.md").read_text(), re.S)[0]
    hosts = inventory.parse(ini, "README.md")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", (root / "docs" / "hosts.md").read_text(),
                                    re.S) if "name:" in b]
    assert blocks
    for text in blocks:
        plan = plan_text(text, "docs/hosts.md", hosts=hosts)
        assert plan.cluster is not None and plan.hosts == ["n1", "n2", "n3"]


def test_files_assay_did_not_create_on_a_host_are_never_written_over(tmp_path):
    from assay.runners import LocalRunner

    class Here(ReplayRunner):  # commands run for real, here, as on a host
        run = LocalRunner.run

    hosts = hosts_in(tmp_path, ["n1", "n2"])
    plan = load(str(REPLAY / "scenario.yaml"), hosts=hosts)
    assert plan.cluster is not None
    name = plan.cluster.hosts["n2"].files[0][0]  # a file n2 would write, already there
    precious = Path(hosts[1].path) / name
    precious.parent.mkdir()
    precious.write_text("not assay's")
    (precious.parent / "notes.txt").write_text("beside it, and not assay's either")
    factory = lambda host, work: Here(REPLAY / "steady", host, work)  # noqa: E731
    with pytest.raises(UserError, match=rf"n2: .* already holds files assay did not create: "
                                        rf"{re.escape(name)}\. .*--force"):
        run(plan, tmp_path, factory)
    assert precious.read_text() == "not assay's"
    assert not (precious.parent / MANIFEST).exists()  # refused before any write there
    out = Engine(plan, RunOptions(tmp_path / "results", runner=factory, force=True),
                 Console(file=io.StringIO())).execute()
    assert out.status == "passed"
    listed = json.loads((precious.parent / MANIFEST).read_text())
    assert set(listed) == {n.split("/", 1)[1] for n, _ in plan.cluster.hosts["n2"].files}
    out = Engine(plan, RunOptions(tmp_path / "results", runner=factory),  # assay's now
                 Console(file=io.StringIO())).execute()
    assert out.status == "passed"
    assert (precious.parent / "notes.txt").exists()  # a file no workload names is left alone


# -- stagger: each instance's schedule starts at its own start ---------------------------

class StaggeredRun(SyntheticRun):
    """A host's fio running `count_per_host` instances of the plan's jobs, each at exactly
    its rate from its own start delay (fio's startdelay) for `seconds`."""

    def __init__(self, rates: dict[str, tuple[float, float]], delays: list[float],
                 seconds: float, start: float):
        self._docs = []
        for s in range(1, int(seconds + max(delays)) + 1):
            jobs = []
            for d in delays:
                ran = min(max(s - d, 0.0), seconds)
                for job, (r, w) in rates.items():
                    jobs.append({"jobname": job, "job_runtime": ran * 1000, "error": 0, **{
                        k: {"io_bytes": int(v * ran) * 8192,
                            "lat_ns": {"N": int(v * ran), "mean": 1e6, "max": 1_000_000,
                                       "bins": {"1000000": int(v * ran)}}}
                        for k, v in (("read", r), ("write", w))}})
            self._docs.append({"timestamp_ms": (start + s) * 1000, "jobs": jobs})
        self._start = start
        self.last_doc = None


def test_staggered_instances_are_scheduled_and_graded_from_their_own_start(tmp_path):
    text = (REPLAY / "scenario.yaml").read_text().replace(
        "load: {pacing: even}}", 'load: {pacing: even},\n       hosts: "1:", '
        "count_per_host: 2, stagger: 3s}") + "  each_host.db: rate\n"
    hosts = hosts_in(tmp_path, ["n1", "n2", "n3"])
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts)
    assert plan.cluster is not None and list(plan.cluster.hosts) == ["n2", "n3"]
    delays = {"n2": [0.0, 3.0], "n3": [6.0, 9.0]}  # the instances' places: 0, 1 | 2, 3
    one = plan.cluster.hosts["n2"]
    rates: dict[str, list[float]] = {}
    for c in one.specs:  # a host's target, both its instances running, is twice one's
        peak = max([c.target_iops or 0.0, *(v or 0.0 for _, v in c.target_steps)])
        for job in c.jobs:
            per = peak / one.instances["db"] / len(c.jobs)
            rates.setdefault(job, [0.0, 0.0])[c.direction == "write"] += per

    class Staggered(ReplayRunner):
        def start(self, name, env, *, at=None, sections=()):
            if name != "run.fio":
                return super().start(name, env, at=at, sections=sections)
            return StaggeredRun({j: (r, w) for j, (r, w) in rates.items()},
                                delays[self.host], plan.warmup + plan.duration, 1_000_000.0)

    out, rec = run(plan, tmp_path, lambda host, work: Staggered(REPLAY / "steady", host, work))
    rates_graded = [t for t in rec["thresholds"] if ".iops" in t["expr"]]
    assert rates_graded and all(t["passed"] for t in rates_graded), rates_graded
    assert out.status == "passed", rec["thresholds"]
    assert not rec["cluster"]["lost"]
    # the stagger is no lag: nothing fell behind its schedule
    behind = max(r["behind_s"] for r in read_ndjson(out.run_dir / "samples.ndjson"))
    assert behind < 1.0, behind
    assert not [w for w in rec.get("warnings", []) if "behind" in str(w)]
    # the measured window covers the staggered load: warm-up 2 s to 8 s + 9 s of stagger
    assert rec["measured_window_s"][1] == pytest.approx(17.0, abs=1.0)
    # every host graded from its own instances' start, against its own instances' target
    for h, g in rec["cluster"]["graded"].items():
        assert g["thresholds"] and all(t["passed"] for t in g["thresholds"]), (h, g)
    # the summary names each instance's window (its load on the run's axis)
    text = io.StringIO()
    print_summary(Console(file=text, width=200), read_record(out.run_dir), out.run_dir)
    said = text.getvalue()
    assert "n2 db 0-8s, 3-11s; n3 db 6-14s, 9-17s" in said, said
    assert "measured 15s (graded 15.0s) after 2s warm-up" in said, said


def test_a_lost_hosts_staggered_share_leaves_the_schedule_from_its_loss(tmp_path):
    import copy
    from types import SimpleNamespace

    from assay.cluster.group import RunnerGroup

    text = (REPLAY / "scenario.yaml").read_text().replace(
        "load: {pacing: even}}", "load: {pacing: even}, count_per_host: 2, stagger: 3s}")
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts_in(tmp_path, ["n1", "n2"]))
    group = SimpleNamespace(plan=plan, specs=copy.deepcopy(plan.specs))
    RunnerGroup.reschedule(group, "n2", 7.0)  # n2's instances: 6-14 s and 9-17 s
    read = next(s for s in group.specs if s.component == "db.data.read")
    n1 = next(s for s in plan.cluster.hosts["n1"].specs if s.component == "db.data.read")
    for t in (0.0, 4.0, 6.5):  # before the loss: every instance running then
        assert read.rate_at(t) == next(s for s in plan.specs
                                       if s.component == "db.data.read").rate_at(t)
    for t in (7.0, 8.5, 10.0, 12.0, 16.0):  # after it: n1's instances only (0-8, 5-11 s)
        assert (read.rate_at(t) or 0) == pytest.approx(n1.rate_at(t) or 0), t
    assert read.rate_at(7.0) == pytest.approx(560) and read.rate_at(12.0) is None
    # the IOs due up to the loss stay due (each later instance's from the end of its own
    # 2 s warm-up: n1's second from 5 s, n2's first from 8 s); after it, n1's
    assert read.due(7.0) == pytest.approx(280 * 7 + 280 * 2)
    assert read.due(11.0) == pytest.approx(read.due(7.0) + 560 * 1 + 280 * 3)
