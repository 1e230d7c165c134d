"""Fixtures of the platform tests: real loop devices and filesystems."""

from tests.realfs import machine  # noqa: F401
