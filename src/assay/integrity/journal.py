"""The journal of acknowledged writes: the agent's (assay/agent/journal.py)."""

from assay.agent.journal import LOG_LIMIT, RECORD, UNKNOWN, Journal

__all__ = ["LOG_LIMIT", "RECORD", "UNKNOWN", "Journal"]
