"""Watching a run from elsewhere: the live OpenMetrics endpoint of `assay run --metrics`
(live.py holds what the run reported, server.py serves it)."""
