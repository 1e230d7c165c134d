"""A silent host is asked whether it is still there: a connection to its SSH port."""

from __future__ import annotations

import socket
import time

from assay.cluster.reach import Reach


def settle(reach: Reach, host: str, since: float) -> bool:
    """Ask until the probe started by the first question has answered."""
    reach.answers(host, since)
    end = time.monotonic() + 10
    while host in reach.busy and time.monotonic() < end:
        time.sleep(0.05)
    return reach.answers(host, since)


def test_a_host_that_accepts_a_connection_answers() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        reach = Reach({"up": server.getsockname()})
        assert settle(reach, "up", time.monotonic() - 1) is True


def test_a_host_that_refuses_is_gone_once_probed() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    reach = Reach({"down": ("127.0.0.1", port)})
    since = time.monotonic() - 1
    assert reach.answers("down", since) is True  # undecided while the probe runs
    assert settle(reach, "down", since) is False
    assert Reach({}).answers("unknown", since) is False
