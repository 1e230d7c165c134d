"""Scenario files: YAML with line numbers, units, typed models. Imports nothing else of assay."""
