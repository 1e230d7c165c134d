"""Sizing: application profile -> requirements -> resilient cluster -> validating scenario.

Pure computation (no click, no rich in the calculators): every number is an `explain.Figure`.
"""
