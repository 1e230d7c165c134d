"""An inventory's host pattern, as Ansible reads it: an optional `:port` and `[x:y(:step)]`
ranges.

    h[1:4]          h1 h2 h3 h4
    10.77.0.[11:14] 10.77.0.11 ... 10.77.0.14
    db[01:10:2]     db01 db03 db05 db07 db09   (a leading zero pads to the start's width)
    r[a:f]-x        ra-x rb-x ... rf-x          (letters, a-z then A-Z)
    n[1:2]-[a:b]    n1-a n1-b n2-a n2-b         (several ranges: the first varies slowest)
    h1:2222         h1, with ansible_port 2222  ([v6::addr]:2222 for an IPv6 address)

A port is split off only when what is left is a host name or address; otherwise the whole
pattern is the name, as in Ansible. A malformed range is an error (RangeError says why), and
so is one that stands for more than MAX_HOSTS hosts: the number is the product of the ranges'
sizes, counted before anything is expanded (`n[1:9]` eight times is 43 million names).
"""

from __future__ import annotations

import ipaddress
import re
import string
from collections.abc import Iterator

RANGE = r"\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]"
LABEL = rf"(?:\w|{RANGE})(?:[\w-]|{RANGE})*(?<![_-])"
HOSTNAME = re.compile(rf"^{LABEL}(?:\.{LABEL})*$", re.I)
BRACKETED_PORT = re.compile(r"^\[(.+)\]:([0-9]+)$")
HOST_PORT = re.compile(r"^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$")
LETTERS = string.ascii_letters  # Ansible's alphabet: a-z, then A-Z
MAX_HOSTS = 100_000  # hosts in one inventory, and in one pattern (docs/hosts.md)


class RangeError(ValueError):
    """A host range that cannot be expanded."""


class TooManyHosts(RangeError):
    """A pattern that stands for more hosts than assay reads (Ansible would expand it)."""


def expand(pattern: str, limit: int = MAX_HOSTS) -> tuple[list[str], int | None]:
    """The host names a pattern stands for, and the port it gives them (None: none); a
    pattern of more than `limit` hosts is a RangeError, raised before any is made."""
    name, port = split_port(pattern)
    if "[" not in name:
        return [name], port
    n = count(name)
    if n > limit:
        raise TooManyHosts(f"it stands for {n:,} hosts; assay reads at most {limit:,} hosts "
                           "in an inventory")
    return expand_ranges(name), port


def size(pattern: str) -> int:
    """How many hosts `pattern` stands for, counted without expanding it."""
    name, _ = split_port(pattern)
    return count(name)


def count(name: str) -> int:
    """How many names `name`'s ranges stand for (the product of their sizes), without
    making them; RangeError if a range is malformed."""
    n = 1
    rest = name
    while "[" in rest:
        _, _, rest = rest.partition("[")
        body, close, rest = rest.partition("]")
        if not close:
            raise RangeError(f"{name!r}: a '[' without its ']'")
        n *= _items(body).size
    return n


def split_port(pattern: str) -> tuple[str, int | None]:
    name, port = pattern, None
    for form in (BRACKETED_PORT, HOST_PORT):
        m = form.match(name)
        if m:
            name, port = m.group(1), int(m.group(2))
    if port is not None and not _is_host(name):
        return pattern, None
    return name, port


def _is_host(name: str) -> bool:
    if HOSTNAME.match(name):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def expand_ranges(name: str) -> list[str]:
    """Expand the first `[begin:end(:step)]` of `name`, then the rest of each result."""
    head, sep, rest = name.partition("[")
    body, close, tail = rest.partition("]")
    if not sep or not close:
        raise RangeError(f"{name!r}: a '[' without its ']'")
    out: list[str] = []
    for item in _items(body):
        host = f"{head}{item}{tail}"
        out += expand_ranges(host) if "[" in host else [host]
    return out


def _items(body: str) -> _Letters | _Padded:
    """What one range `[body]` stands for, as a sequence (its len() is cheap)."""
    bounds = body.split(":")
    if len(bounds) not in (2, 3):
        raise RangeError(f"[{body}]: a range is [begin:end] or [begin:end:step]")
    begin, end = bounds[0] or "0", bounds[1]
    if not end:
        raise RangeError(f"[{body}]: the range has no end")
    try:
        step = int(bounds[2]) if len(bounds) == 3 else 1
    except ValueError:
        raise RangeError(f"[{body}]: the step {bounds[2]!r} is not a number") from None
    if step <= 0:
        raise RangeError(f"[{body}]: the step must be 1 or more")
    width = len(begin) if begin[0] == "0" and len(begin) > 1 else 0
    if width and len(end) != width:
        raise RangeError(f"[{body}]: with a leading zero, begin and end have the same width")
    if begin in LETTERS and end in LETTERS and len(begin) == len(end) == 1:
        b, e = LETTERS.index(begin), LETTERS.index(end)
        if b > e:
            raise RangeError(f"[{body}]: the range must have begin <= end")
        items: _Letters | _Padded = _Letters(LETTERS[b:e + 1:step])
    else:
        try:
            items = _Padded(range(int(begin), int(end) + 1, step), width)
        except ValueError:
            raise RangeError(f"[{body}]: begin and end are both numbers or both single "
                             f"letters") from None
    if not items.size:
        raise RangeError(f"[{body}]: the range gives no hosts (begin > end)")
    return items


class _Letters(list[str]):
    @property
    def size(self) -> int:
        return len(self)


class _Padded:
    """The numbers of a range as text, zero-padded to `width`, made one at a time; `size`
    is counted, not made (len() of a range has a bound, the arithmetic none)."""

    def __init__(self, numbers: range, width: int):
        self.numbers, self.width = numbers, width
        r = numbers
        self.size = max(0, (r.stop - r.start + r.step - 1) // r.step)

    def __iter__(self) -> Iterator[str]:
        return (str(i).zfill(self.width) for i in self.numbers)
