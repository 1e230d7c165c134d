"""docs/search.md: its scenario plans, and every documented command parses with the options it
shows and names parameters its scenario has (the integration tests run them)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from assay.cli import search, sweep
from assay.plan import ScenarioFile, read_scenario
from assay.search.sweep import parse_sets

DOC = Path(__file__).parents[2] / "docs" / "search.md"


def doc_scenarios() -> dict[str, str]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    return {b.splitlines()[0].lstrip("# ").strip(): b for b in blocks}


def doc_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
    return [line for b in blocks for line in b.splitlines() if line.startswith("assay ")]


COMMANDS = doc_commands()


def test_documented_scenario_plans():
    text = doc_scenarios()["search-demo.yaml"]
    plan = ScenarioFile(text, "search-demo.yaml", None).plan([])
    assert [c.name for c in plan.components] == ["db.data.read"]


@pytest.mark.parametrize("line", COMMANDS)
def test_documented_commands_are_valid(line, tmp_path):
    argv = shlex.split(line)[1:]
    verb, args = argv[0], argv[1:]
    command = {"search": search.command, "sweep": sweep.command}[verb]
    ctx = command.make_context(verb, list(args))  # unknown options fail here
    ref = ctx.params["scenario"]
    scenarios = doc_scenarios()
    scn = ScenarioFile(scenarios[ref], ref, None) if ref in scenarios else \
        ScenarioFile(*read_scenario(ref))
    if verb == "search":
        param = scn.param(ctx.params["vary"])
        for v in (ctx.params["low"], ctx.params["high"]):
            scn.plan([(param, int(v) if param.integer else v)])
    else:
        for p, values in parse_sets(scn, list(ctx.params["sets"])):
            for v in values:
                scn.plan([(p, v)])


def test_every_verb_and_option_family_is_documented():
    joined = "\n".join(COMMANDS)
    for needle in ("assay search", "assay sweep", "--curve", "--repeat", "--chart", "--set",
                   "--metric"):
        assert needle in joined


def test_repeats_format_example_is_json():
    block = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)[0]
    doc = json.loads(block)
    entry = doc["groups"][0]["metrics"]["db.data.read.lat_p99"]
    assert set(entry) == {"n", "mean", "stdev", "ci95", "half_width", "values"}
