"""The block format of integrity mode: the agent's (assay/agent/block.py), so a run here and a
run on a host write and check the same blocks."""

from assay.agent.block import (
                               CRC,
                               HEADER,
                               MAGIC,
                               MIN_BLOCK,
                               PROBLEMS,
                               RESIDUE,
                               State,
                               classify,
                               crc32,
                               fill,
                               generation_of,
)

__all__ = ["CRC", "HEADER", "MAGIC", "MIN_BLOCK", "PROBLEMS", "RESIDUE", "State", "classify",
           "crc32", "fill", "generation_of"]
