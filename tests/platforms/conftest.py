"""Fixtures of the platform tests: real loop devices, filesystems and blkio groups."""

from tests.realfs import blkio_group, machine  # noqa: F401
