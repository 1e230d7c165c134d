"""Fixtures of the action tests: real loop devices, filesystems and blkio groups."""

from tests.realfs import blkio, machine  # noqa: F401
