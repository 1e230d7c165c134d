"""Fixtures of the fio tests: real blkio groups."""

from tests.realfs import blkio_group  # noqa: F401
