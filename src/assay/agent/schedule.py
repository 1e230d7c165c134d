"""When fio meant to issue each IO of a fixed-rate job: its schedule, rebuilt exactly.

fio paces a rate-limited job by a schedule of due times, measured from the job's start:

- even (`rate_process=linear`): IO k is due when the bytes before it, at the job's rate,
  have been sent (backend.c `usec_for_io`: bytes / bps, in whole microseconds);
- Poisson (`rate_process=poisson`): each gap is `(1e6 / iops) * -logf(u)` microseconds, u
  from the job's own Tausworthe generator (lib/rand.c), seeded from `randseed` and the job's
  number (init.c `setup_random_seeds`). assay sets `randseed`, so the gaps are known too.

fio never issues an IO before it is due; when the storage stalls it falls behind and then
issues back to back. With each IO's issue time (fio's `write_iolog`, which fio writes as it
goes) the lag from the schedule is exact, for even and Poisson pacing alike, for any length.
The generator is fio 3.x's; `Schedule.check` says whether the issue times fit it (an
incompatible fio would not), and latency from the due time is only reported when they do.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
GOLDEN = 0x9E370001
POISSON_OFF = (15, 17)  # fio.h FIO_RAND_POISSON_OFF, FIO_RAND_POISSON2_OFF (read, write)
SEED_SLOTS = 22  # FIO_RAND_NR_OFFS in fio 3.33


def job_seeds(randseed: int, thread_number: int) -> list[int]:
    """init.c setup_random_seeds: the job's per-purpose seeds."""
    seed = randseed & MASK64
    for _ in range(4):
        seed = seed * GOLDEN & MASK64
    out = []
    for i in range(SEED_SLOTS):
        out.append((seed * thread_number + i) & MASK64)
        seed = seed * GOLDEN & MASK64
    return out


class Taus88:
    """lib/rand.c's 32-bit combined Tausworthe generator, as fio seeds it."""

    def __init__(self, seed: int):
        seed &= MASK32

        def lcg(x: int) -> int:
            return ((x * 69069) & MASK32) ^ seed

        def floor(x: int, m: int) -> int:
            return x + m if x < m else x

        # fio writes (2^31) + (2^17) + (2^7): in C, ^ is xor, so 29 + 19 + 5
        self.s1 = floor(lcg(53), 1)
        self.s2 = floor(lcg(self.s1), 7)
        self.s3 = floor(lcg(self.s2), 15)
        for _ in range(6):
            self.next()

    def next(self) -> int:
        s1, s2, s3 = self.s1, self.s2, self.s3
        s1 = (((s1 & 4294967294) << 12) ^ ((((s1 << 13) & MASK32) ^ s1) >> 19)) & MASK32
        s2 = (((s2 & 4294967288) << 4) ^ ((((s2 << 2) & MASK32) ^ s2) >> 25)) & MASK32
        s3 = (((s3 & 4294967280) << 17) ^ ((((s3 << 3) & MASK32) ^ s3) >> 11)) & MASK32
        self.s1, self.s2, self.s3 = s1, s2, s3
        return s1 ^ s2 ^ s3


_F32 = struct.Struct("f")


def f32(x: float) -> float:
    """A C float: fio computes the gap in single precision."""
    return float(_F32.unpack(_F32.pack(x))[0])


def poisson_gaps(randseed: int, thread_number: int, direction: int, iops: int) \
        -> Iterator[int]:
    """Microseconds between successive due times of a Poisson job (backend.c usec_for_io)."""
    rng = Taus88(job_seeds(randseed, thread_number)[POISSON_OFF[direction]])
    mean = f32(float(1_000_000 // iops))
    while True:
        u = (rng.next() + 1.0) / 4294967296.0
        yield int(f32(mean * f32(-math.log(f32(u)))))


class Schedule:
    """Due times (microseconds from the job's start) of one job and direction, one IO at a
    time, in issue order."""

    def __init__(self, bps: int, min_bs: int, poisson: bool, randseed: int = 0,
                 thread_number: int = 1, direction: int = 0):
        self.bps = bps
        self.poisson = poisson
        self.sent = 0
        self.last = 0
        self._gaps = poisson_gaps(randseed, thread_number, direction, bps // min_bs) \
            if poisson else None

    def due(self, size: int) -> int:
        """The due time of the next IO (of `size` bytes)."""
        if self._gaps is not None:
            due = self.last
            self.last += next(self._gaps)
            return due
        due = self.sent // self.bps * 1_000_000 + self.sent % self.bps * 1_000_000 // self.bps
        self.sent += size
        return due
