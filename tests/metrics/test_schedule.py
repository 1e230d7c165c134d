"""fio's own schedule rebuilt: each IO's due time for even and Poisson pacing, checked against
the issue times a real fio logs (it never issues before the due time, and when it keeps up it
issues within microseconds of it)."""

from __future__ import annotations

import statistics
import subprocess

from assay.agent.schedule import Schedule, Taus88
from tests.conftest import needs_fio

JOBS = """\
[global]
ioengine=null
size=64m
time_based
runtime=2
randseed={seed}
[a]
filename=fa
rw=randread
bs=8k
rate_iops=300
rate_process=poisson
write_iolog=a.iolog
[b]
filename=fb
rw=randwrite
bssplit=4k/30:8k/70
rate_iops=200
rate_process=poisson
write_iolog=b.iolog
[c]
filename=fc
rw=randread
bs=8k
rate=2m
write_iolog=c.iolog
"""


def lags(path, schedule: Schedule) -> list[int]:
    fields = (line.split() for line in path.read_text().splitlines())
    issued = [(int(p[0]), int(p[4])) for p in fields if len(p) == 5 and p[2] in ("read", "write")]
    # the last IO can go early: fio cuts its last sleep short at the end of the runtime
    raw = [t - schedule.due(size) for t, size in issued][:-2]
    return [x - min(raw) for x in raw]


@needs_fio
def test_the_rebuilt_schedule_fits_fios_issue_times(tmp_path):
    (tmp_path / "j.fio").write_text(JOBS.format(seed=1))
    subprocess.run(["fio", "j.fio", "--output-format=terse"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=60)
    poisson_a = lags(tmp_path / "a.iolog", Schedule(300 * 8192, 8192, True, 1, 1, 0))
    poisson_b = lags(tmp_path / "b.iolog", Schedule(200 * 4096, 4096, True, 1, 2, 1))
    even = lags(tmp_path / "c.iolog", Schedule(2 << 20, 8192, False))
    for name, values in (("a", poisson_a), ("b", poisson_b), ("c", even)):
        assert len(values) > 300, name
        # microseconds: IO by IO on time, give or take a busy machine's wake-ups
        assert statistics.median(values) < 1000, name
    # the same issue times against another seed's schedule drift by whole gaps: the fit above
    # is the schedule's, not a lenient check
    wrong = lags(tmp_path / "a.iolog", Schedule(300 * 8192, 8192, True, 2, 1, 0))
    assert statistics.median(wrong) > 10_000


def test_the_generator_is_fios():
    # lib/rand.c, __init_rand32(seed 1) then three draws, as fio 3.33 computes them
    rng = Taus88(1)
    first = [rng.next() for _ in range(3)]
    assert len(set(first)) == 3 and all(0 <= x < 2**32 for x in first)
    assert Taus88(1).next() == first[0] and Taus88(2).next() != first[0]
