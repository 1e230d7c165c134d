"""Timeline steps that could never start are refused at plan time (exit 2, file:line): a run
would otherwise pass without doing them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.plan import plan_text
from assay.scenario.yamlsource import ScenarioInvalid
from tests.conftest import assay_in_process

HEAD = """\
name: steps
workloads:
  db: {kind: oltp, data_iops: 100, log_iops: 10, dataset: 64MiB}
timeline:
  duration: 10s
  steps:
"""


def problems(steps: str) -> str:
    with pytest.raises(ScenarioInvalid) as e:
        plan_text(HEAD + steps, "s.yaml")
    return str(e.value)


def test_steps_that_wait_for_each_other_are_refused_with_their_lines():
    text = problems("    - {name: a, action: annotate, text: x, after: b}\n"
                    "    - {name: b, action: annotate, text: y, after: a}\n")
    assert "s.yaml:7: timeline.steps[0].after" in text and "s.yaml:8:" in text
    assert "circle (a -> b -> a)" in text


def test_a_longer_circle_and_a_step_waiting_on_it():
    text = problems("    - {name: a, action: annotate, text: x, after: c}\n"
                    "    - {name: b, action: annotate, text: y, after: a}\n"
                    "    - {name: c, action: annotate, text: z, after: b}\n"
                    "    - {name: d, action: annotate, text: w, after: c}\n")
    assert "circle (a -> c -> b -> a)" in text and "s.yaml:10:" in text


def test_a_step_past_the_end_and_one_after_it_are_refused():
    text = problems("    - {name: late, action: annotate, text: x, at: 10s}\n"
                    "    - {name: then, action: annotate, text: y, after: late}\n")
    assert "s.yaml:7: timeline.steps[0].at: step 'late' is at 10s" in text
    assert "never start" in text and "s.yaml:8: timeline.steps[1].after: waits for 'late'" \
        in text


def test_a_chain_that_starts_in_time_is_planned():
    plan = plan_text(HEAD + "    - {name: a, action: annotate, text: x, at: 9s}\n"
                            "    - {name: b, action: annotate, text: y, after: a}\n", "s.yaml")
    assert [s.name for s in plan.resolved.steps] == ["a", "b"]


def test_assay_plan_exits_2_without_a_traceback(tmp_path):
    path = tmp_path / "cycle.yaml"
    path.write_text(HEAD + "    - {name: a, action: annotate, text: x, after: b}\n"
                           "    - {name: b, action: annotate, text: y, after: a}\n")
    r = assay_in_process("plan", str(path))  # in-process: no start-up
    assert r.returncode == 2 and "Traceback" not in r.stderr and "circle" in r.stderr


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 5)),
                          st.one_of(st.none(), st.integers(0, 20))), min_size=1, max_size=6))
def test_any_web_of_after_links_is_planned_or_refused_never_a_traceback(links):
    """Random `after` links and times (fuzz): planned only when every step can start."""
    lines = []
    for i, (after, at) in enumerate(links):
        when = f", after: s{after}" if after is not None else (f", at: {at}s" if at is not None
                                                               else "")
        lines.append(f"    - {{name: s{i}, action: annotate, text: x{when}}}\n")
    try:
        plan = plan_text(HEAD + "".join(lines), "f.yaml")
    except ScenarioInvalid as e:
        assert "f.yaml:" in str(e)
        return
    steps = {s.name: s for s in plan.resolved.steps}
    for s in steps.values():  # each can start: its chain ends at a step in time
        seen, cur = set(), s
        while cur.after is not None:
            assert cur.name not in seen
            seen.add(cur.name)
            cur = steps[cur.after]
        assert (cur.at or 0) < 10
