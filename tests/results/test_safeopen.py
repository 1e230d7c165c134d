"""results/safeopen.py: a regular file inside a directory, never through a link out of it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from assay.results import safeopen
from assay.results.safeopen import Inside, Refused

SECRET = "SECRET-OUTSIDE-THE-RUN"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """run/ with a file, a subdirectory, and a secret beside it (outside)."""
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "run.fio").write_text(SECRET)
    run = tmp_path / "run"
    (run / "hosts" / "local").mkdir(parents=True)
    (run / "scenario.yaml").write_text("name: x\n")
    (run / "hosts" / "local" / "run.fio").write_text("[global]\n")
    return run


def test_reads_regular_files_inside(tree: Path) -> None:
    with Inside(tree) as d:
        assert d.read_text("scenario.yaml") == "name: x\n"
        assert d.read_bytes("hosts", "local", "run.fio") == b"[global]\n"
        assert d.is_file("scenario.yaml") and not d.is_file("hosts")
        assert d.names("hosts") == ["local"]
        assert dict(d.files("hosts", "run.fio")) == {"local": "[global]\n"}
    assert safeopen.read_text(tree / "scenario.yaml") == "name: x\n"


def test_a_link_anywhere_on_the_way_is_refused(tree: Path) -> None:
    outside = tree.parent
    (tree / "leak").symlink_to(outside / "secret.txt")
    (tree / "rel").symlink_to("../secret.txt")
    (tree / "etc").symlink_to("/etc")
    (tree / "hosts" / "evil").symlink_to(outside / "outside")  # a linked host directory
    (tree / "inner").symlink_to("scenario.yaml")  # even a link that stays inside
    with Inside(tree) as d:
        for parts in (("leak",), ("rel",), ("etc", "passwd"), ("hosts", "evil", "run.fio"),
                      ("inner",)):
            with pytest.raises(Refused):
                d.read_bytes(*parts)
            assert not d.is_file(*parts)
        assert d.names("hosts", "evil") == []
        assert dict(d.files("hosts", "run.fio")) == {"local": "[global]\n"}
    assert safeopen.read_text(tree / "leak") == ""


def test_names_that_are_no_names_are_refused(tree: Path) -> None:
    with Inside(tree / "hosts") as d:
        for parts in ((), ("..", "scenario.yaml"), (".", "local", "run.fio"), ("",),
                      ("local/run.fio",), ("/etc/passwd",), ("local", "run.fio\x00"),
                      ("..",)):
            with pytest.raises(Refused):
                d.read_bytes(*parts)
    for name in ("", ".", "..", "a/b", "/", "a\x00"):
        assert not safeopen.valid_name(name)
    assert safeopen.valid_name("20261101-100000_mail_aaaaa1") and safeopen.valid_name("..x")


def test_a_hard_link_to_a_file_outside_is_refused(tree: Path) -> None:
    os.link(tree.parent / "secret.txt", tree / "platform.ndjson")
    os.link(tree.parent / "outside" / "run.fio", tree / "hosts" / "local" / "hard.fio")
    with Inside(tree) as d:
        with pytest.raises(Refused, match="hard links"):
            d.read_bytes("platform.ndjson")
        with pytest.raises(Refused):
            d.read_bytes("hosts", "local", "hard.fio")
    assert safeopen.read_text(tree / "platform.ndjson") == ""
    # data that is parsed, not shown, may be hard-linked (a `cp -al` backup renders)
    with safeopen.open_file(tree / "platform.ndjson", hard_links_ok=True) as fh:
        assert fh.read() == SECRET.encode()
    (tree / "soft").symlink_to(tree.parent / "secret.txt")
    with pytest.raises(Refused):
        safeopen.open_file(tree / "soft", hard_links_ok=True)


def test_a_fifo_or_a_directory_is_no_file_and_does_not_hang(tree: Path) -> None:
    os.mkfifo(tree / "fifo")
    done: list[bool] = []

    def attempt() -> None:
        with Inside(tree) as d:
            done.append(not d.is_file("fifo") and not d.is_file("hosts"))

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(10)
    assert done == [True]


def test_the_directory_itself_may_be_refused_as_a_link(tree: Path) -> None:
    link = tree.parent / "linked-run"
    link.symlink_to(tree)
    with Inside(link) as d:  # the caller's own choice (assay report PATH): followed
        assert d.read_text("scenario.yaml") == "name: x\n"
    with pytest.raises(Refused):
        Inside(link, follow=False)
    with Inside(tree.parent) as parent, pytest.raises(Refused):
        parent.sub("linked-run")  # how assay serve opens a run directory


def test_a_directory_replaced_by_a_link_while_held_is_not_followed(tree: Path) -> None:
    outside = tree.parent / "outside"
    (outside / "scenario.yaml").write_text(SECRET)
    with Inside(tree.parent) as results, results.sub("run") as held:
        assert held.same_as(tree)
        moved = tree.parent / "moved"
        tree.rename(moved)
        tree.symlink_to(outside)  # swapped in while held
        assert not held.same_as(tree)  # the server drops a page built meanwhile
        assert held.read_text("scenario.yaml") == "name: x\n"  # still the held directory
        with pytest.raises(Refused):
            results.sub("run")
