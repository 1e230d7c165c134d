"""`annotate`: a marker on the results' time axis, e.g. "cache warm" or "tenant B starts".

    - {action: annotate, at: 2m, text: "backup window opens"}
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["annotate"] = "annotate"
    text: str = Field(..., min_length=1)


def requires(p: Params) -> set[str]:
    return set()


def run(p: Params, ctx: ActionContext) -> str:
    return p.text
