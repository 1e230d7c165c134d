"""Thresholds × component stats → a verdict. Every threshold is checked at plan time too, so a
threshold that names nothing is an error before any IO, never a silent pass."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.metrics.component import TRAINING_METRICS, ComponentInfo, Stats
from assay.metrics.phases import PhaseReport
from assay.thresholds.grammar import Threshold, ThresholdError, parse
from assay.thresholds.presets import PRESETS

BEHIND_LIMIT_S = 1.0  # a fixed-rate component this far behind its schedule fails its rate
# database metrics -> the (stream, direction) of the component they are read from
ROUTES = {"tps": ("tx", "commit"), "tpm": ("tx", "commit"), "failed": ("tx", "failed"),
          "nopm": ("new_order", "commit"), "save_s": ("save", "write"),
          "save_gbps": ("save", "write"), "restore_s": ("restore", "read"),
          "restore_gbps": ("restore", "read")}


@dataclass
class Result:
    threshold: Threshold
    component: str
    observed: float | None
    bound: float
    passed: bool
    note: str = ""
    graded: bool = True  # False: the run's data could not grade it (metrics/coverage.py)

    def to_json(self) -> dict[str, Any]:
        return {"expr": self.threshold.text, "component": self.component,
                "metric": self.threshold.metric, "observed": _round(self.observed),
                "bound": _round(self.bound), "passed": self.passed, "note": self.note,
                "source": self.threshold.source, "graded": self.graded}


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def expand(spec: Mapping[str, str] | Sequence[str | Mapping[str, str]]) -> list[Threshold]:
    """The scenario's `thresholds` value → parsed thresholds (presets expanded)."""
    items: list[tuple[str, str]] = []
    if isinstance(spec, Mapping):
        items = list(spec.items())
    else:
        for entry in spec:
            if isinstance(entry, str):
                items.append(("", entry))
            else:
                items.extend(entry.items())
    out: list[Threshold] = []
    for key, value in items:
        value = str(value).strip()
        if not key and value in PRESETS:  # a bare preset applies to every workload
            out.extend(parse(t, source=f"preset {value}") for t in PRESETS[value])
        elif not key:
            out.append(parse(value))
        elif value in PRESETS:
            out.extend(parse(f"{key}.{t}", source=f"preset {value}") for t in PRESETS[value])
        elif value[:1] in "<>=!":
            out.append(parse(f"{key} {value}"))
        else:
            raise ThresholdError(f"{key}: {value!r} is neither `OP value` (e.g. `< 20ms`) nor a "
                                 f"preset ({', '.join(PRESETS)})")
    return out


def family(stream: str) -> str:
    """`db2` -> `db`: the per-instance streams of one kind (an Exchange server's databases)."""
    base = stream.rstrip("0123456789")
    return base if base and base != stream else stream


def side(info: ComponentInfo) -> bool:
    """A database's schedule lag, failures and per-type transactions: graded only by a
    threshold that names them (`pg.lag.lat_p99`); `pg.lat_p99` means its transactions."""
    return info.direction in ("lag", "failed") or (info.direction == "commit"
                                                   and info.stream != "tx")


def matches(t: Threshold, info: ComponentInfo) -> bool:
    parts = t.selector
    if t.host:
        return False
    w, d = info.workload, info.direction
    streams = {info.stream, family(info.stream)}
    if t.metric in TRAINING_METRICS:  # the accelerators' view: components that feed them
        return info.training is not None and (not parts or parts[0] == w)
    if t.metric in ROUTES:
        stream, direction = ROUTES[t.metric]
        return info.stream == stream and d == direction and (not parts or parts[0] == w)
    if side(info) and not (set(parts[1:]) & {info.stream, d}):
        return False
    if not parts:
        return True
    if len(parts) == 1:  # a workload, a stream or a direction
        return parts[0] in (w, d) or parts[0] in streams
    if len(parts) == 2:  # workload.stream, workload.direction or stream.direction
        return (parts[0] == w and (parts[1] in streams or parts[1] == d)) or \
            (parts[0] in streams and parts[1] == d)
    return parts[0] == w and parts[1] in streams and parts[2] == d


def _pooled(hit: list[ComponentInfo]) -> list[ComponentInfo]:
    """Drop a pooled component (`mail.db.read`) when its instances (`mail.db1.read`, ...) are
    graded too: each instance must pass on its own, as Jetstress grades each database."""
    inst = {(c.workload, family(c.stream), c.direction) for c in hit
            if family(c.stream) != c.stream}
    return [c for c in hit if (c.workload, c.stream, c.direction) not in inst]


def resolve(t: Threshold, components: Sequence[ComponentInfo]) -> list[ComponentInfo]:
    """The components a threshold applies to; an error when it names none. A host threshold
    applies to no component (it grades the hosts' utilisation)."""
    if t.host or t.integrity:
        return []
    hit = [c for c in components if matches(t, c)]
    if t.target_fraction is None:
        hit = _pooled(hit)
    else:
        hit = [c for c in hit if c.target_iops]
        if not hit:
            raise ThresholdError(f"{t.text!r}: no fixed-rate component matches, so there is no "
                                 f"target to compare with")
    if not hit:
        known = ", ".join(c.name for c in components)
        raise ThresholdError(f"{t.text!r}: matches no component (components: {known})")
    return hit


def result_count(t: Threshold, components: Sequence[ComponentInfo]) -> int:
    """How many results `evaluate` gives `t`: one per component it applies to, one for a host
    or integrity threshold (0 when it names none of `components`)."""
    if t.host or t.integrity:
        return 1
    try:
        return len(resolve(t, components))
    except ThresholdError:
        return 0


def evaluate(thresholds: Sequence[Threshold], components: Sequence[ComponentInfo],
             stats: Mapping[str, Stats], phases: PhaseReport | None = None,
             hosts: Mapping[str, Mapping[str, float]] | None = None,
             integrity: Mapping[str, Any] | None = None) -> list[Result]:
    """`phases` grades thresholds that name a phase, and `recovery`; without it they fail.
    `hosts` (host -> utilisation statistics) grades host thresholds and `integrity` (run.json's
    section, {} when none was made) integrity thresholds; without them (a live check) they
    wait for the verdict."""
    results = []
    for t in thresholds:
        if t.integrity:
            if integrity is not None:
                results.append(integrity_result(t, integrity))
            continue
        if t.host:
            if hosts is not None:
                results.extend(_host(t, hosts))
            continue
        for info in resolve(t, components):
            if t.metric == "recovery":
                results.append(_recovery(t, info.name, phases))
                continue
            s = stats[info.name]
            if t.phase:
                s_phase = phases.stats(_phase_key(t), info.name) if phases else None
                if s_phase is None:
                    bound = t.value if t.value is not None else 0.0
                    results.append(Result(t, info.name, None, bound, False,
                                          f"the run had no `{_phase_key(t)}` phase"))
                    continue
                s = s_phase
            results.append(_check(t, s))
    return results


def _phase_key(t: Threshold) -> str:
    # `after NAME` grades the time after the last event, like `after`; the name is for recovery
    return str(t.phase if t.phase_kind == "during" else t.phase_kind)


def _recovery(t: Threshold, component: str, phases: PhaseReport | None) -> Result:
    assert t.value is not None
    if phases is None:
        return Result(t, component, None, t.value, False, "no timeline events were recorded")
    value, events, note = phases.worst_recovery(component, t.phase_step)
    if value is None:
        return Result(t, component, None, t.value, False, note)
    return Result(t, component, value, t.value, t.holds(value, t.value),
                  f"worst of {events} event{'s' if events != 1 else ''}")


def _host(t: Threshold, hosts: Mapping[str, Mapping[str, float]]) -> list[Result]:
    assert t.value is not None
    names = [h for h in hosts if len(t.selector) == 1 or t.selector[1] == h]
    if not names:
        where = f"host {t.selector[1]!r}" if len(t.selector) > 1 else "any host"
        return [Result(t, "host", None, t.value, False,
                       f"no utilisation was recorded for {where}")]
    out = []
    most = max(float(hosts[h].get("seconds") or 0) for h in hosts)
    for h in names:
        observed = hosts[h].get(t.metric)
        seconds = float(hosts[h].get("seconds") or 0)
        note = "not measured on this host" if observed is None else \
            f"over {seconds:g} of {most:g} s: the host was lost or stopped sending" \
            if seconds < 0.9 * most else ""  # graded on what it sent, and said so
        out.append(Result(t, f"host.{h}", observed, t.value,
                          observed is not None and t.holds(observed, t.value), note))
    return out


def integrity_result(t: Threshold, section: Mapping[str, Any]) -> Result:
    """The worst count over the run's verify passes; no complete pass is a failure, never a
    silent pass (an interrupted pass saw part of the data only)."""
    assert t.value is not None
    what = f"integrity.{t.selector[1]}" if len(t.selector) > 1 else "integrity"
    if not any(p.get("status") == "completed" for p in section.get("passes", [])):
        return Result(t, what, None, t.value, False, "no complete verify pass ran")
    source = section.get("workloads", {}).get(t.selector[1], {}) if len(t.selector) > 1 \
        else section
    observed = source.get(t.metric)
    if observed is None:
        return Result(t, what, None, t.value, False, "this workload was not verified")
    offsets = [str(o) for p in section.get("passes", []) for w in p.get("workloads", {}).values()
               for o in w.get("offsets", {}).get(t.metric, [])]
    offsets += [f"{o['file']}@{o['offset']}" for p in section.get("passes", [])
                for w in p.get("data_files", {}).get("workloads", {}).values()
                for o in w.get("offsets", []) if o.get("state") == t.metric]  # data files
    note = f"first at offset {offsets[0]}" if offsets else ""
    return Result(t, what, float(observed), t.value, t.holds(float(observed), t.value), note)


def band(target: float) -> tuple[float, float]:
    """X-Ray's 95 % Poisson prediction band around an expected rate: λ ± 1.96·√λ."""
    half = 1.96 * math.sqrt(target)
    return target - half, target + half


def _check(t: Threshold, s: Stats) -> Result:
    observed = s.metric(t.metric)
    note = ""
    if t.op == "in":
        assert s.target_iops
        lo, hi = band(s.target_iops)
        passed = observed is not None and lo <= observed <= hi
        return Result(t, s.component, observed, s.target_iops, passed,
                      f"band {lo:,.0f}-{hi:,.0f} (target ± 1.96·√target)")
    if t.target_fraction is not None and t.metric == "au":
        bound = float((s.training or {}).get("au_target") or 0.0) * t.target_fraction
        passed = observed is not None and t.holds(observed, bound)
        return Result(t, s.component, observed, bound, passed,
                      "" if observed is not None else "no IO measured")
    if t.target_fraction is not None:
        assert s.target_iops
        target = s.target_iops if t.metric in ("iops", "iops_median", "tps") else None
        if target is None:
            raise ThresholdError(f"{t.text!r}: mbps has no target")
        bound = target * t.target_fraction
        slack = s.rate_tolerance if t.op in (">=", ">") else 0.0
        passed = observed is not None and t.holds(observed + slack, bound)
        if slack and observed is not None and observed < bound <= observed + slack:
            note = f"within pacing tolerance ({slack:.1f} IO/s)"
        if s.behind_max_s > BEHIND_LIMIT_S:
            passed = False  # a run that fell behind its schedule cannot pass a rate threshold
            note = f"fell {s.behind_max_s:.1f}s behind its schedule"
        elif not passed and observed is not None and bound:  # a miss says by how much
            note = f"{observed / bound:.1%} of the bound" + (
                f", short by more than the pacing tolerance ({slack:.1f} IO/s)" if slack else "")
        return Result(t, s.component, observed, bound, passed, note)
    assert t.value is not None
    if observed is None:
        return Result(t, s.component, None, t.value, False, "no IO measured")
    return Result(t, s.component, observed, t.value, t.holds(observed, t.value), note)


def validate(spec: Any, components: Sequence[ComponentInfo]) -> list[str]:
    """Problems with the thresholds of a plan, as messages (empty when all is well)."""
    problems = []
    try:
        thresholds = expand(spec)
    except ThresholdError as e:
        return [str(e)]
    for t in thresholds:
        try:
            resolve(t, components)
        except ThresholdError as e:
            problems.append(str(e))
    return problems
