"""Cluster runs: one scenario over many hosts (runner group, merged series, host loss)."""
