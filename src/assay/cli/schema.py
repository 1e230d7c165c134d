"""`assay schema [scenario|run]`: the JSON Schema of scenario files or of run.json (for
editors, CI linters and tools that read results)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Union

import click
from pydantic import Field, TypeAdapter, create_model

from assay import actions, workloads
from assay.results.record import record_schema
from assay.scenario.models import Scenario


def scenario_schema() -> dict[str, Any]:
    kinds = tuple(workloads.kinds().values())
    workload = Annotated[Union[kinds], Field(discriminator="kind")]  # type: ignore[valid-type]  # noqa: UP007
    steps = tuple(actions.actions().values())
    fields: dict[str, Any] = {"workloads": (dict[str, workload], ...)}
    model = create_model("ScenarioFile", __base__=Scenario, **fields)
    schema = model.model_json_schema()
    if steps:
        step = Annotated[Union[steps], Field(discriminator="action")]  # type: ignore[valid-type]  # noqa: UP007
        step_schema = TypeAdapter(list[step]).json_schema()
        schema.setdefault("$defs", {}).update(step_schema.pop("$defs", {}))
        schema["$defs"]["Timeline"]["properties"]["steps"] = step_schema
    schema["title"] = "assay scenario"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


@click.command("schema")
@click.argument("what", type=click.Choice(["scenario", "run"]), default="scenario")
def command(what: str) -> None:
    """Print the JSON Schema of scenario files (default) or of a run's run.json (`run`)."""
    schema = record_schema() if what == "run" else scenario_schema()
    click.echo(json.dumps(schema, indent=2))
