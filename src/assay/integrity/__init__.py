"""Integrity mode: blocks that say what they are, a journal of acknowledged writes, and a verify
pass that classifies every block as ok, corrupt, stale, lost or unreadable (docs/integrity.md).

    block.py    the block format (header + payload + checksum) and its classification
    journal.py  the acknowledged generation of every block, off the target, bounded
    writer.py   the writer stream beside fio's load: writes, acknowledges, journals
    verify.py   the verify pass (end of run, `verify` action, `assay verify RUN`)
    session.py  one run's writers, passes and its run.json section
"""
