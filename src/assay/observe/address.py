"""`[ADDRESS:]PORT` as the listening verbs take it, and whether an address stays on this
machine (shared by `assay run --metrics` and `assay serve`; no other imports)."""

from __future__ import annotations

import ipaddress

LOOPBACK = "127.0.0.1"


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
