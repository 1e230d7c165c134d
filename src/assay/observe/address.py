"""`[ADDRESS:]PORT` as the listening verbs take it, whether an address stays on this machine,
and whether a request's Host header names this machine (shared by `assay run --metrics` and
`assay serve`; no other imports)."""

from __future__ import annotations

import ipaddress

LOOPBACK = "127.0.0.1"
LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


def parse_address(value: str, option: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[V6]:PORT` -> (host, port); the host defaults to loopback."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = LOOPBACK, value
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{option} {value!r}: expected [ADDRESS:]PORT with a port 1-65535, "
                         f"e.g. {option} 9464 or {option} 127.0.0.1:9464")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_host_header(value: str | None) -> bool:
    """Whether a Host header names this machine (localhost, 127.0.0.1 or [::1], any port).

    A server on the loopback answers only such requests: a page elsewhere that points its
    own DNS name at 127.0.0.1 (DNS rebinding) sends its own name, and is refused (403)."""
    host = (value or "").strip().lower()
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in LOCAL_NAMES or host in LOCAL_NAMES
