"""This machine's utilisation each second (the agent's `utilisation` Probe, run here): on a
local run the host's, on a cluster run the controller's."""

from __future__ import annotations

from assay.agent.utilisation import Probe as HostProbe

__all__ = ["HostProbe"]
