"""The agent's issue-log reader (agent/issuelog.py) on a log written as fio writes it, driven
as the engine drives it (runners/issuelog.py through LocalRunner.agent), and from the
archive on a bare Python. Real fio runs it in tests/metrics/test_duetime.py (one host) and
tests/cluster/test_lab_duetime.py (every host of a cluster)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from assay.metrics.pacedjobs import PacedJob
from assay.runners import LocalRunner, agent
from assay.runners.issuelog import IssueLogs

IOPS, BS = 1000, 4096
OFFSET_US = 5_000_000  # the log's clock starts before the job's


def issues(stall: tuple[float, float]) -> list[int]:
    """Issue times (µs, log clock) of 3 s at 1,000 IO/s: on time (+10 µs), except the IOs
    due during `stall`, issued back to back at its end."""
    lo, hi = (int(x * 1e6) for x in stall)
    out, last = [], 0
    for k in range(3 * IOPS):
        due = k * 1_000_000 // IOPS
        t = due + 10 if not lo <= due < hi else max(hi, last + 1)
        out.append(t + OFFSET_US)
        last = t
    return out


def line(t: int, k: int) -> str:
    return f"{t} /target/db.dat read {k * BS} {BS}\n"


def test_a_log_read_as_it_is_written_gives_each_seconds_lags(tmp_path: Path) -> None:
    log = tmp_path / "db.read.iolog"
    times = issues((1.0, 1.5))
    with open(log, "w") as fh:  # fio's header and the first second, before the agent starts
        fh.write("fio version 3 iolog\n/target/db.dat add\n/target/db.dat open\n")
        fh.writelines(line(t, k) for k, t in enumerate(times[:1000]))
    job = PacedJob("db.read", IOPS * BS, BS, False, 1, 0, log=log.name, randseed=1)
    rows: list[dict] = []
    reader = IssueLogs(LocalRunner("local", tmp_path), [job.spec()], rows.append).start()
    time.sleep(1.0)
    with open(log, "a") as fh:  # the rest, as fio appends it
        fh.writelines(line(t, k) for k, t in enumerate(times[1000:], 1000))
    reader.finish()
    assert reader.error is None and reader.ended
    assert reader.ios == {log.name: 3000}  # every IO, each once
    by_t = {r["t"]: r for r in rows}
    assert sorted(by_t) == [1.0, 2.0, 3.0] and all(r["c"] == "db.read" for r in rows)
    assert sum(r["ios"] for r in rows) == 3000
    on_time = {int(k) for k in by_t[1.0]["bins"]}
    assert on_time == {0}  # within fio's wake-up jitter: one bin
    # the 500 IOs due in [1.0, 1.5) s waited for 1.5 s: lags spread evenly up to 0.5 s
    late = {int(k): v for k, v in by_t[2.0]["bins"].items() if int(k) > 0}
    assert 495 <= sum(late.values()) <= 500
    assert 0.48e9 <= max(late) <= 0.5e9
    assert sum(v for k, v in late.items() if k >= 0.25e9) in range(240, 256)
    assert not log.exists()  # nothing per IO is left behind


def test_the_archive_reads_issue_logs_on_a_bare_python(tmp_path: Path) -> None:
    (tmp_path / agent.ARCHIVE).write_bytes(agent.archive())
    with open(tmp_path / "j.iolog", "w") as fh:
        fh.writelines(line(t, k) for k, t in enumerate(issues((0.0, 0.0))))
    job = PacedJob("j", IOPS * BS, BS, True, 1, 0, log="j.iolog", randseed=7)  # Poisson
    (tmp_path / "spec.json").write_text(json.dumps({"jobs": [job.spec()]}))
    proc = subprocess.run(["python3", "-I", agent.ARCHIVE, "issuelog", "spec.json"],
                          cwd=tmp_path, input=b"", capture_output=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert rows[-1] == {"end": True, "ios": {"j.iolog": 3000}, "error": None}
    # an even log read against a Poisson schedule: the lags are not fio's jitter
    assert any(int(k) > 1_000_000 for r in rows[:-1] for k in r["bins"])
    bad = subprocess.run(["python3", "-I", agent.ARCHIVE, "issuelog", "missing.json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "cannot read missing.json" in bad.stderr
