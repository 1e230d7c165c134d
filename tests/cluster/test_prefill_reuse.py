"""What a cluster prefill reuses on a host (cluster/prefill.py), without hosts: the manifest
line must match the file's size and its section of the host's prefill job file, and the file
must be there whole."""

from __future__ import annotations

from pathlib import Path

from assay.cluster.prefill import host_files, section_hash
from assay.plan.build import plan_text
from tests.cluster.test_group import hosts_in

SCENARIO = """\
name: reuse
workloads:
  db: {{kind: oltp, data_iops: 100, data_files: 1, log_files: 1, dataset: 16MiB{data}}}
timeline: {{duration: 5s}}
"""


def files(tmp_path: Path, data: str = ""):  # noqa: ANN201
    plan = plan_text(SCENARIO.format(data=data), "s.yaml", hosts=hosts_in(tmp_path, ["n1", "n2"]))
    return host_files(plan, "n1"), host_files(plan, "n2")


def test_a_file_is_reused_only_when_listed_alike_and_whole(tmp_path: Path) -> None:
    n1, _ = files(tmp_path)
    assert len(n1.files) == 2 and all(n.startswith("n1.0/") for n, _ in n1.files)
    assert n1.stale(False) == n1.files  # nothing listed yet
    for name, size in n1.files:  # as the manifest and the sizes read from the host say
        n1.kept[name] = (size, n1.hashes[name])
        n1.sizes[name] = size
    assert n1.stale(False) == [] and n1.stale(True) == n1.files  # --fresh writes all
    data, size = n1.files[0]
    n1.sizes[data] = size - 1  # cut short on the host
    assert n1.stale(False) == [(data, size)]
    n1.sizes[data] = size
    n1.kept[data] = (size, "0" * 16)  # written with another pattern
    assert n1.stale(False) == [(data, size)]


def test_the_hash_follows_the_data_pattern_and_differs_per_host(tmp_path: Path) -> None:
    n1, n2 = files(tmp_path)
    again, _ = files(tmp_path)
    other, _ = files(tmp_path, ", data: {compressibility: 2.0}")
    first = n1.files[0][0]
    assert n1.hashes[first] == again.hashes[first]  # the same scenario: the same hash
    assert n1.hashes[first] != other.hashes[first]  # another pattern: another
    assert set(n1.hashes) != set(n2.hashes)  # each host's own files


def test_the_manifest_lists_only_the_files_named_per_instance_directory(tmp_path: Path) -> None:
    n1, _ = files(tmp_path)
    data, log = (n for n, _ in n1.files)
    pairs = n1.manifests([data])
    assert pairs[0] == "n1.0" and data in pairs[1] and log not in pairs[1]
    assert n1.manifests([]) == ["n1.0", ""]  # emptied before the prefill writes


def test_section_hash_reads_one_section() -> None:
    text = "[global]\nrw=write\n\n[prefill.a]\nsize=1\n\n[prefill.b]\nsize=2\n"
    assert section_hash(text, "prefill.a") != section_hash(text, "prefill.b")
    assert section_hash(text, "prefill.a") == section_hash(text + "[prefill.c]\n", "prefill.a")
