"""The journal of acknowledged writes, in the run directory (never on the target).

It holds, for every block of an integrity file, the generation of its last acknowledged write:
a checkpoint (`NAME.gen`, one u32 per block) plus an append-only log (`NAME.log`, one
(block, generation) pair of u32 per acknowledged write since the checkpoint). The log is
flushed several times a second and folded into a new checkpoint when it reaches LOG_LIMIT
bytes, so the journal is bounded by the file's block count whatever the run's length: 64 MiB
of 4 KiB blocks take a 64 KiB checkpoint and at most 1 MiB of log.

A process that dies leaves the checkpoint and a log that may lag the last acknowledgements by
a fraction of a second; such a block then reads back newer than recorded, which is ok.
"""

from __future__ import annotations

import os
import struct
import zlib
from array import array
from pathlib import Path

RECORD = struct.Struct("<II")
LOG_LIMIT = 1 << 20  # bytes of log before a checkpoint
UNKNOWN = 0  # no expectation: never acknowledged, or a failed write that may have left anything


class Journal:
    def __init__(self, directory: Path, name: str, blocks: int):
        self.gen_path = directory / f"{name}.gen"
        self.log_path = directory / f"{name}.log"
        self.gens = array("I", bytes(4 * blocks))
        self._pending = bytearray()
        self._log_bytes = 0

    @classmethod
    def create(cls, directory: Path, name: str, blocks: int) -> Journal:
        directory.mkdir(parents=True, exist_ok=True)
        j = cls(directory, name, blocks)
        j.checkpoint()
        return j

    @classmethod
    def load(cls, directory: Path, name: str, blocks: int,
             digest: dict[str, int] | None = None) -> Journal:
        """The journal as a run left it: the checkpoint, then the log replayed. Without its
        log a journal says nothing of the writes since the checkpoint, and stale blocks pass
        for current: a missing part, or one that differs from the `digest` the run recorded
        when it ended, is a ValueError. Without a digest (a crashed run), a torn last record
        is the kill's and is ignored."""
        j = cls(directory, name, blocks)
        data = j.gen_path.read_bytes()
        if len(data) != 4 * blocks:
            raise ValueError(f"{j.gen_path}: {len(data)} bytes, expected {4 * blocks}")
        if not j.log_path.exists():
            raise ValueError(f"{j.log_path} is missing (every journal has one)")
        log = j.log_path.read_bytes()
        if digest is not None and digest != digest_of(data, log):
            raise ValueError(f"{j.gen_path.name} and {j.log_path.name} are not what the run "
                             f"left ({len(data)} and {len(log)} bytes, the run left "
                             f"{digest.get('gen_bytes')} and {digest.get('log_bytes')}; "
                             f"or their contents changed)")
        j.gens = array("I", data)
        for block, gen in RECORD.iter_unpack(log[:len(log) - len(log) % RECORD.size]):
            if block >= blocks:
                raise ValueError(f"{j.log_path} names block {block} of {blocks}: damaged")
            j.gens[block] = gen
        return j

    def digest(self) -> dict[str, int]:
        """Sizes and CRC-32 of the checkpoint and the log as they are on disk (run.json
        records it when the writers stop, `load` checks it)."""
        return digest_of(self.gen_path.read_bytes(), self.log_path.read_bytes())

    def ack(self, block: int, generation: int) -> None:
        self.gens[block] = generation
        self._pending += RECORD.pack(block, generation)

    def forget(self, block: int) -> None:
        """A write failed: the block may now hold anything."""
        self.ack(block, UNKNOWN)

    def flush(self) -> None:
        if not self._pending:
            return
        if self._log_bytes + len(self._pending) > LOG_LIMIT:
            self.checkpoint()
            return
        with open(self.log_path, "ab") as f:
            f.write(self._pending)
        self._log_bytes += len(self._pending)
        self._pending.clear()

    def checkpoint(self) -> None:
        """All generations to a new checkpoint (atomically), then an empty log."""
        tmp = self.gen_path.with_suffix(".gen.tmp")
        tmp.write_bytes(self.gens.tobytes())
        os.replace(tmp, self.gen_path)
        self.log_path.write_bytes(b"")
        self._pending.clear()
        self._log_bytes = 0


def digest_of(gen: bytes, log: bytes) -> dict[str, int]:
    """Sizes and CRC-32 of a checkpoint and its log."""
    return {"gen_bytes": len(gen), "log_bytes": len(log),
            "crc": zlib.crc32(log, zlib.crc32(gen))}
