"""What runs on a host beside fio, or instead of it, with one lifecycle (base.py)."""
