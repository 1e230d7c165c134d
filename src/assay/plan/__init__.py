"""Planning: scenario → an immutable plan (streams, components, thresholds, job files per host).

    from assay.plan import load
    plan = load("oltp-standard")          # validated, checked; no IO
    plan.jobfile("local", "run.fio")      # the exact job file a run stores
"""

from assay.plan.build import TargetEdit, load, plan_text
from assay.plan.model import LOCAL, PREFILL_JOB, RUN_JOB, Plan
from assay.plan.sources import builtin_scenarios, read_scenario
from assay.plan.steps import check_steps
from assay.plan.variants import ScenarioFile

__all__ = ["LOCAL", "PREFILL_JOB", "RUN_JOB", "Plan", "ScenarioFile", "TargetEdit",
           "builtin_scenarios", "check_steps", "load", "plan_text", "read_scenario"]
