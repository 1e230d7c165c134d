"""`command`: run any shell command — for platforms without a driver, or anything else.

    - {action: command, at: 30s, run: "rbd snap create pool/vol@assay-{run_id}-{n}"}

Variables: {path} (the data directory), {mountpoint}, {device}, {run_id}, {t} (load seconds),
{step} (the step's name), {n} (the occurrence, 1-based), each quoted for the shell. A non-zero
exit fails the step, which aborts the run.
"""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import Field

from assay.actions.context import ActionContext
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["command"] = "command"
    run: str = Field(..., min_length=1, description="shell command template")


def requires(p: Params) -> set[str]:
    return set()


def render(template: str, variables: dict[str, object]) -> str:
    try:
        return template.format(**{k: shlex.quote(str(v)) for k, v in variables.items()})
    except (KeyError, IndexError) as e:
        raise ActionFailed(f"unknown variable {e} in {template!r} "
                           f"(known: {', '.join(sorted(variables))})") from None
    except ValueError as e:  # a stray brace: `{{` and `}}` write literal ones
        raise ActionFailed(f"{template!r}: {e} (write a literal brace as {{{{ or }}}})") \
            from None


def run(p: Params, ctx: ActionContext) -> str:
    cmd = render(p.run, ctx.variables)
    ctx.details["command"] = cmd
    return ctx(cmd)
