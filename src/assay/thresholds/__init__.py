"""Thresholds: a small grammar, presets, and the evaluator that turns results into a verdict."""
