"""The integrity writer: the agent's (assay/agent/writer.py)."""

from assay.agent.writer import FIRST_GENERATION, Writer

__all__ = ["FIRST_GENERATION", "Writer"]
