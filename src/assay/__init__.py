"""assay: prove a storage platform against real application workloads."""

__version__ = "0.1.0"
