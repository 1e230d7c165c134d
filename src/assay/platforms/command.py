"""Any platform with a command line: the scenario gives a shell command per operation.

For platforms assay has no driver for (Nutanix acli/ncli, vSphere govc, Ceph rbd, kubectl
VolumeSnapshot). `target.options` maps an operation to a command template:

  snapshot: "rbd snap create pool/vol@{name}"       snapshot.delete: "rbd snap rm pool/vol@{name}"
  device.fail / device.remove / device.add / device.replace: "... {device} {new_device}"
  scrub / rebuild: "..."           done.rebuild / done.scrub: exits 0 when it has finished

Templates see {path} {mountpoint} {name} {device} {new_device} {run_id} {t} {step} {n}; the
operations a target supports are exactly the templates it gives.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, ClassVar

from assay.hosts.fingerprint import mount_of
from assay.platforms.base import Platform
from assay.platforms.fsbase import ActionFailed, FsPlatform, Runner
from assay.scenario.models import Target

OPERATIONS = ("snapshot", "snapshot.delete", "device.fail", "device.remove", "device.add",
              "device.replace", "scrub", "rebuild", "done.rebuild", "done.balance", "done.scrub",
              "done.replace")


class TemplateError(ActionFailed):
    """A command template that cannot be filled in (not a command that failed)."""


class Driver(FsPlatform):
    name: ClassVar[str] = "command"
    actions: ClassVar[frozenset[str]] = frozenset(OPERATIONS)

    @classmethod
    def supports(cls, target: Target) -> frozenset[str]:
        return frozenset(k for k in target.options if k in OPERATIONS)

    def prepare(self) -> Path:
        directory = Platform.prepare(self)
        self.mount = mount_of(directory)
        return directory

    def _template(self, run: Runner, op: str, **values: Any) -> str:
        template = self.target.options.get(op)
        if not isinstance(template, str):
            raise ActionFailed(f"target.options has no `{op}` command")
        # the step's own variables ({t}, {step}, {n}, {run_id}) ride on its runner
        step_vars = getattr(run, "variables", {})
        quoted = {k: shlex.quote(str(v))
                  for k, v in {**self.variables(), **step_vars, **values}.items()}
        try:
            command = template.format(**quoted)
        except (KeyError, IndexError) as e:
            raise TemplateError(f"target.options.{op}: unknown variable {e}") from None
        except ValueError as e:  # a stray brace
            raise TemplateError(f"target.options.{op}: {template!r}: {e}") from None
        return run(command)

    def snapshot_create(self, run: Runner, name: str) -> str:
        out = self._template(run, "snapshot", name=name)
        self.created_snapshots.append(name)
        return out

    def snapshot_delete(self, run: Runner, name: str) -> str:
        out = self._template(run, "snapshot.delete", name=name)
        if name in self.created_snapshots:
            self.created_snapshots.remove(name)
        return out

    def device_op(self, run: Runner, op: str, device: str, new_device: str | None) -> str:
        return self._template(run, f"device.{op}", device=device, new_device=new_device or "")

    def operation(self, run: Runner, what: str) -> str:
        return self._template(run, what)

    def busy(self, run: Runner, what: str) -> bool:
        """The `done.<what>` command fails while the operation still runs."""
        if not isinstance(self.target.options.get(f"done.{what}"), str):
            raise ActionFailed(f"target.options has no `done.{what}` command")
        try:
            self._template(run, f"done.{what}")
        except TemplateError:
            raise
        except ActionFailed:
            return True
        return False

    def cleanup(self, keep: bool) -> None:
        if "snapshot.delete" in self.target.options:
            super().cleanup(keep)
