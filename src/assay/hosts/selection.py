"""Which hosts of the inventory a pattern picks: a workload's `hosts:`, a step's `host:`.

`all`; an index `"0"` or `"-1"`; a slice `"1:"`, `":n/2"`, `"n/2:"` (`n` is the number of
hosts, `/` divides rounding down); a list of host names; or an inventory group.
"""

from __future__ import annotations

import re

from assay.hosts.inventory import Host

SLICE = re.compile(r"^\s*(?P<a>[-0-9n/+ ]*)\s*(?::\s*(?P<b>[-0-9n/+ ]*))?\s*$")
TERM = re.compile(r"^(?:(?P<int>-?\d+)|n(?:\s*/\s*(?P<div>\d+))?(?:\s*(?P<sign>[-+])\s*"
                  r"(?P<add>\d+))?)$")


class PlacementError(ValueError):
    def __init__(self, message: str, workload: str = ""):
        super().__init__(message)
        self.workload = workload


def _term(text: str, n: int) -> int:
    m = TERM.match(text.strip())
    if not m:
        raise PlacementError(f"{text!r} is not an index (0, -1, n, n/2, n-1)")
    if m.group("int") is not None:
        return int(m.group("int"))
    value = n // int(m.group("div")) if m.group("div") else n
    if m.group("add"):
        value += int(m.group("add")) * (1 if m.group("sign") == "+" else -1)
    return value


def select(spec: str | list[str] | None, hosts: list[Host]) -> list[Host]:
    """The hosts a workload's `hosts:` picks, in inventory order (PlacementError if none)."""
    names = [h.name for h in hosts]
    if spec is None or spec == "all":
        return list(hosts)
    if isinstance(spec, list):
        unknown = [s for s in spec if s not in names]
        if unknown:
            raise PlacementError(f"not in the inventory: {', '.join(map(str, unknown))} "
                                 f"(hosts: {', '.join(names)})")
        return [h for h in hosts if h.name in spec]
    if spec in names:
        return [h for h in hosts if h.name == spec]
    groups = {g for h in hosts for g in h.groups}
    if spec in groups:
        return [h for h in hosts if spec in h.groups]
    m = SLICE.match(spec)
    if not m or not spec.strip():
        raise PlacementError(f"{spec!r} is neither all, an index, a slice, a host nor a group")
    n = len(hosts)
    if m.group("b") is None:  # one index
        i = _term(m.group("a"), n)
        if not -n <= i < n:
            raise PlacementError(f"index {spec!r} is outside the {n} hosts")
        return [hosts[i]]
    a = _term(m.group("a"), n) if m.group("a").strip() else 0
    b = _term(m.group("b"), n) if m.group("b").strip() else n
    picked = hosts[a:b]
    if not picked:
        raise PlacementError(f"slice {spec!r} picks none of the {n} hosts")
    return picked


def one_host(spec: str, hosts: list[Host]) -> str | None:
    """The one host a step names (`n3`, or an index such as `-1`: the last), or None."""
    try:
        picked = select(spec, hosts)
    except PlacementError:
        return None
    return picked[0].name if len(picked) == 1 else None
