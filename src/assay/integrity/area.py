"""Where a workload's integrity blocks live: the agent's (assay/agent/area.py)."""

from assay.agent.area import (
                              AHEAD,
                              CHUNK,
                              OFFSETS_KEPT,
                              RBD,
                              SUBDIR,
                              Area,
                              Device,
                              FileDevice,
                              aligned,
                              block_file,
                              open_file,
                              read_blocks,
                              writer_id,
)

__all__ = ["AHEAD", "CHUNK", "OFFSETS_KEPT", "RBD", "SUBDIR", "Area", "Device", "FileDevice",
           "aligned", "block_file", "open_file", "read_blocks", "writer_id"]
