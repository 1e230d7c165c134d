"""Fixtures of the fio tests: real blkio groups."""

from tests.realfs import blkio  # noqa: F401
