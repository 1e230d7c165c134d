"""The Ceph driver's base (platforms/ceph.py): the target's options (conf, keyring, pool,
client), what the run made and did on the cluster, and the cluster's own commands (ceph, rbd,
rados), which the driver's image and operation parts share.
"""

from __future__ import annotations

import json
from typing import Any

from assay.platforms.fsbase import FsPlatform, Runner, run_command
from assay.scenario.models import Target


class CephClient(FsPlatform):
    """The options and state every part of the Ceph driver uses, and its commands."""

    def __init__(self, target: Target):
        super().__init__(target)
        o = target.options
        self.conf = str(o.get("conf") or "/etc/ceph/ceph.conf")
        self.keyring = str(o.get("keyring") or "")
        self.pool = str(o.get("pool") or "rbd")
        self.client = str(o.get("client") or "admin")
        self.images: dict[str, int] = {}  # this run's images -> size
        self.created: list[str] = []  # ... of which assay made these (removed at the end)
        self._rebuild: dict[str, Any] = {}
        self._scrub: dict[str, str] = {}
        self.blocklisted: list[str] = []  # this run's own stale clients (see CephImages._remove)
        self.injected: set[int] = set()  # OSDs with a planted read error (platforms/cephscrub)

    # -- commands ---------------------------------------------------------------------------
    def _auth(self) -> list[str]:
        return ["-c", self.conf, "--id", self.client] + (
            ["--keyring", self.keyring] if self.keyring else [])

    def ceph(self, *args: str, run: Runner = run_command) -> str:
        return run(["ceph", *self._auth(), "--connect-timeout", "20", *args])

    def rbd(self, *args: str, run: Runner = run_command) -> str:
        return run(["rbd", *self._auth(), *args])

    def rados(self, *args: str, run: Runner = run_command) -> str:
        return run(["rados", *self._auth(), "-p", self.pool, *args])

    def status(self, run: Runner = run_command) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.ceph("status", "-f", "json", run=run))
        return data

    def fio_env(self) -> dict[str, str]:
        """What fio's rbd engine (librados) reads on each host: the cluster's ceph.conf."""
        return {"CEPH_CONF": self.conf}
