"""The data files' manifests on one host and many (prefill/files.py), with the real shell
commands on real directories: what is assay's, what is reused, what is refused. A local run's
one instance is its target; a host's are `<host>.<k>/` under its target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.plan import Plan
from assay.plan.build import plan_text
from assay.platforms.safety import MANIFEST, read_manifest
from assay.prefill.files import (
    OLD_MARK,
    DataFiles,
    claim,
    content_hash,
    data_files,
    read,
    refuse_foreign,
    refuse_short,
    write,
)
from assay.runners.local import run_here
from tests.cluster.test_group import hosts_in

SCENARIO = """\
name: files
workloads:
  db: {{kind: oltp, data_iops: 100, data_files: 1, log_files: 1, dataset: 16MiB{data}}}
  b: {{kind: swbuild, builds: 1}}
timeline: {{duration: 5s}}
"""


def plans(tmp_path: Path, data: str = "") -> tuple[Plan, Plan]:
    """The same scenario on this machine and on two hosts."""
    text = SCENARIO.format(data=data)
    return (plan_text(text, "s.yaml"),
            plan_text(text, "s.yaml", hosts=hosts_in(tmp_path, ["n1", "n2"])))


def shapes(tmp_path: Path) -> list[DataFiles]:
    """This machine's files and host n1's, each under a target of its own."""
    local, hosts = plans(tmp_path)
    (tmp_path / "local").mkdir()
    n1 = data_files(hosts, "n1", str(tmp_path / "targets" / "n1"))
    (tmp_path / "targets" / "n1" / "n1.0").mkdir()
    return [data_files(local, "local", str(tmp_path / "local")), n1]


def lay_out(df: DataFiles) -> None:
    """Every file there, whole, as a prefill leaves it."""
    for name, _ in df.files:
        for path, size in df.ends[name]:
            p = Path(df.target) / path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"\0" * min(size, 4096))
            p.touch()
            with open(p, "r+b") as fh:
                fh.truncate(size)


@pytest.mark.parametrize("shape", [0, 1], ids=["local", "host"])
def test_a_file_is_reused_only_when_listed_alike_and_whole(tmp_path: Path, shape: int) -> None:
    df = shapes(tmp_path)[shape]
    read(run_here, df)
    assert df.stale(False) == df.files and df.foreign() == []  # nothing there yet
    claim(run_here, df, None)
    read(run_here, df)
    assert df.stale(False) == df.files  # claimed is not prefilled
    lay_out(df)
    df.note([n for n, _ in df.files], prefilled=True)
    assert write(run_here, df) is None
    read(run_here, df)
    assert df.stale(False) == [] and df.stale(True) == df.files  # --fresh writes all
    assert df.foreign() == [] and df.missing_bytes() == 0
    data, size = df.files[0]
    with open(Path(df.target) / data, "r+b") as fh:  # cut short
        fh.truncate(size - 1)
    read(run_here, df)
    assert df.stale(False) == [(data, size)] and df.missing_bytes() == 1
    df.hashes[data] = "0" * 16  # this run writes another pattern
    (Path(df.target) / data).write_bytes(b"\0" * size)
    read(run_here, df)
    assert df.stale(False) == [(data, size)]
    assert not list(Path(df.target).rglob("*.tmp"))  # each manifest written whole


def test_one_manifest_per_instance_directory_keyed_as_a_local_run_keys_it(
        tmp_path: Path) -> None:
    local, n1 = shapes(tmp_path)
    for df in (local, n1):
        read(run_here, df)
        claim(run_here, df, None)
    here = read_manifest(Path(local.target))  # as `assay verify` reads it
    there = json.loads((Path(n1.target) / "n1.0" / MANIFEST).read_text())
    assert set(here) == set(there) == {n for n, _ in local.files}
    assert not (Path(n1.target) / MANIFEST).exists()  # the target itself is not assay's
    for name, _ in local.files:  # what a file holds, not where: one hash in both shapes
        assert here[name]["data"] == there[name]["data"] == local.hashes[name]
        assert here[name]["prefilled"] is False


def test_the_hash_follows_the_data_pattern(tmp_path: Path) -> None:
    local, hosts = plans(tmp_path)
    other, _ = plans(tmp_path, ", data: {compressibility: 2.0}")
    a, b = (data_files(p, "local", "/t") for p in (local, other))
    n1, n2 = (data_files(hosts, h, "/t") for h in ("n1", "n2"))
    name = local.files[0][0]
    assert a.hashes[name] != b.hashes[name]
    assert a.hashes[name] == n1.hashes[f"n1.0/{name}"] == n2.hashes[f"n2.0/{name}"]
    assert a.hashes == data_files(local, "local", "/elsewhere").hashes


def test_content_hash_reads_one_section() -> None:
    text = ("[global]\nrw=write\n\n[prefill.a]\nsize=1\n\n[prefill.h.0/b]\nfilename=h.0/b\n"
            "size=2\n")
    assert content_hash(text, "a") != content_hash(text, "h.0/b", "h.0")
    assert content_hash(text, "a") == content_hash(text + "\n[prefill.c]\nsize=3\n", "a")
    assert content_hash(text, "h.0/b", "h.0") == content_hash(  # the same file elsewhere
        "[global]\n\n[prefill.b]\nfilename=b\nsize=2\n", "b")


@pytest.mark.parametrize("shape", [0, 1], ids=["local", "host"])
def test_files_assay_did_not_create_are_refused_until_forced(tmp_path: Path,
                                                             shape: int) -> None:
    df = shapes(tmp_path)[shape]
    name = df.files[0][0]
    precious = Path(df.target) / name
    precious.write_text("customer data")
    (precious.parent / "notes.txt").write_text("named by no workload")
    read(run_here, df)
    where = "n1: " if df.nested else ""
    with pytest.raises(UserError, match=rf"^{where}.* already holds files assay did not "
                                        rf"create: {name}\. .*--force"):
        refuse_foreign(df, force=False)
    refuse_foreign(df, force=True)  # the user said so: claimed, then written over
    claim(run_here, df, None)
    read(run_here, df)
    refuse_foreign(df, force=False)  # assay's from now on
    assert precious.read_text() == "customer data" and (precious.parent / "notes.txt").exists()


def test_a_damaged_manifest_lists_nothing_so_its_files_are_refused(tmp_path: Path) -> None:
    _, n1 = shapes(tmp_path)
    lay_out(n1)
    (Path(n1.target) / "n1.0" / MANIFEST).write_text('{"db.data.1.dat": ')
    read(run_here, n1)
    assert n1.books == {"n1.0": {}} and len(n1.foreign()) >= 2
    with pytest.raises(UserError, match="already holds files assay did not create"):
        refuse_foreign(n1, force=False)


def test_an_older_assays_instance_directory_is_assays(tmp_path: Path) -> None:
    _, n1 = shapes(tmp_path)
    lay_out(n1)
    (Path(n1.target) / "n1.0" / OLD_MARK).touch()  # marked, with a line manifest: not read
    (Path(n1.target) / "n1.0" / ".assay-prefill").write_text("n1.0/db.data.1.dat 1 x\n")
    read(run_here, n1)
    assert n1.old == {"n1.0"} and n1.foreign() == []
    assert n1.stale(False) == n1.files  # prefilled once more, then listed
    claim(run_here, n1, None)
    assert set(json.loads((Path(n1.target) / "n1.0" / MANIFEST).read_text())) == \
        {n.split("/", 1)[1] for n, _ in n1.files}


def test_many_foreign_files_are_shortened(tmp_path: Path) -> None:
    names = [f"f{i}" for i in range(8)]
    df = DataFiles("local", str(tmp_path), [(n, 1) for n in names], {n: "h" for n in names},
                   {n: [(n, 1)] for n in names}, nested=False, device=False)
    for n in names:
        (tmp_path / n).touch()
    read(run_here, df)
    with pytest.raises(UserError) as e:
        refuse_foreign(df, force=False)
    assert "f0, f1, f2, f3, f4 ..." in str(e.value) and "f5" not in str(e.value)


@pytest.mark.parametrize("shape", [0, 1], ids=["local", "host"])
def test_a_target_short_of_space_is_refused_with_its_figures(tmp_path: Path,
                                                             shape: int) -> None:
    df = shapes(tmp_path)[shape]
    read(run_here, df)
    need = sum(s for _, s in df.files)
    with pytest.raises(UserError) as e:
        refuse_short(df, 10 << 20)
    assert "not enough free space at" in str(e.value) and str(e.value).startswith(
        "n1: " if df.nested else "not enough")
    assert "kept there for reuse" not in str(e.value)
    refuse_short(df, need + (64 << 20))  # room, with assay's margin
    refuse_short(df, None)  # unknown: nothing to say
    assert not any(Path(df.target).rglob("*.dat"))
    # another scenario's files, kept for reuse, hold the room: the refusal names them
    claim(run_here, df, None)
    manifest = Path(df.target) / df.directories()[0] / MANIFEST
    book = json.loads(manifest.read_text())
    book.update({f"old.{i}.dat": {"size": 1 << 30, "data": "x", "prefilled": True}
                 for i in range(4)})
    manifest.write_text(json.dumps(book))
    read(run_here, df)
    with pytest.raises(UserError) as e:
        refuse_short(df, 10 << 20)
    inside = "n1.0/" if df.nested else ""
    assert f"kept there for reuse: 4GiB in 4 files ({inside}old.0.dat, " \
           f"{inside}old.1.dat, {inside}old.2.dat, ...). Delete them, lower `dataset` or " \
           "choose a larger target." in str(e.value), e.value


def test_a_hosts_raw_device_keeps_no_manifest_and_is_written_every_run(tmp_path: Path) -> None:
    _, hosts = plans(tmp_path)
    df = data_files(hosts, "n1", "/dev/assay-no-such-disk")
    read(run_here, df)  # nothing to read: no command is run
    assert df.device and not df.kept and df.stale(False) == df.files
    claim(run_here, df, None)
    assert write(run_here, df) is None and df.foreign() == []


def test_integrity_blocks_count_in_the_room_a_run_needs(tmp_path: Path) -> None:
    """Integrity mode's block files are written whole every run, before the data files: a
    target without room for both is refused before any IO, on one host and on each host;
    a block file an earlier run left is rewritten in place and needs no more room."""
    text = SCENARIO.format(data="") + "integrity: {size: 64MiB}\n"
    local = plan_text(text, "s.yaml")
    hosts = plan_text(text, "s.yaml", hosts=hosts_in(tmp_path, ["n1", "n2"]))
    (tmp_path / "local").mkdir()
    for df, prefix in ((data_files(local, "local", str(tmp_path / "local")), ""),
                       (data_files(hosts, "n1", str(tmp_path / "targets" / "n1")), "n1.")):
        # both workloads write: a block file each, named as their writers name them
        assert df.areas == [(f"assay-integrity/{prefix}{w}.blk", 64 << 20) for w in ("db", "b")]
        read(run_here, df)
        files = sum(s for _, s in df.files)
        assert df.missing_bytes() == files + (128 << 20)
        with pytest.raises(UserError, match=r"the files and integrity blocks need"):
            refuse_short(df, files + (128 << 20))  # their room, without assay's margin
        lay_out(df)
        area = Path(df.target) / df.areas[0][0]
        area.parent.mkdir(parents=True, exist_ok=True)
        with open(area, "wb") as fh:
            fh.truncate(48 << 20)  # an earlier run's, smaller
        read(run_here, df)
        assert df.missing_bytes() == (16 + 64) << 20
        for blk, size in df.areas:  # every block file there, whole
            with open(Path(df.target) / blk, "wb") as fh:
                fh.truncate(size)
        read(run_here, df)
        assert df.missing_bytes() == 0
        refuse_short(df, 1 << 20)  # nothing more to write: a full target is no reason
