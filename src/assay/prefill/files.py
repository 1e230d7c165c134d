"""A run's data files on each of its hosts, and the manifests that say which are assay's.

A local run is a cluster of one: its one instance's directory is the target itself; a host's
are `<host>.<k>/` under its target. Each instance directory keeps a manifest of the files assay
made there, `.assay-files.json`: per file its size, the hash of what it holds (its prefill
section: size, pattern, data options) and whether its prefill ended. Both shapes read and
write it with the same shell commands, through the host's runner. Two rules follow, the same
on every host:
- a file assay would write that exists and is not in its manifest is not assay's: refused,
  unless --force;
- a prefilled file is reused while its entry matches this run's and it is there, whole.
A local raw device keeps its manifest in this machine's state directory (platforms/safety.py);
a host's raw device keeps none and is written every run.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.agent.area import block_file
from assay.exitcodes import UserError
from assay.integrity.check import writing
from assay.integrity.session import settings
from assay.plan import PREFILL_JOB, Plan
from assay.plan.model import PREFILL_PREFIX
from assay.platforms.rbdjobs import on_rbd
from assay.platforms.safety import MANIFEST
from assay.runners.base import CommandResult
from assay.scenario.units import format_size

Run = Callable[[Sequence[str]], CommandResult]  # a command on the files' host
OLD_MARK = ".assay-owned"  # an instance directory an older assay made: all its files are assay's
SPACE_MARGIN = 64 << 20  # kept free: a full filesystem misbehaves before it is full
# $1 the target, $2 how many instance directories follow ("." the target itself), then the
# paths to size: prints "m <directory> <its manifest on one line>", "o <directory>" for an
# older assay's mark, and "s <size> <path>" for each path that exists
STATE = ('d=$1; n=$2; shift 2; while [ "$n" -gt 0 ]; do m="$d/$1/' + MANIFEST + '"; '
         'if [ -f "$m" ]; then printf "m %s " "$1"; tr -d "\\n" < "$m"; echo; fi; '
         '[ -e "$d/$1/' + OLD_MARK + '" ] && echo "o $1"; n=$((n - 1)); shift; done; '
         'for f; do [ -e "$d/$f" ] && echo "s $(stat -c %s -- "$d/$f") $f"; done; :')
# $1 the target, then pairs: an instance directory and its manifest's text
WRITE = ('d=$1; shift; while [ $# -ge 2 ]; do printf "%s\\n" "$2" > "$d/$1/' + MANIFEST +
         '.tmp" && mv -f -- "$d/$1/' + MANIFEST + '.tmp" "$d/$1/' + MANIFEST + '" || exit 3; '
         'shift 2; done')


@dataclass
class DataFiles:
    """One host's files: what its prefill job file writes, and what its manifests say."""

    host: str
    target: str  # the names are relative to it
    files: list[tuple[str, int]]
    hashes: dict[str, str]
    ends: dict[str, list[tuple[str, int]]]  # each file's paths to look at, with their size
    nested: bool  # the names start with their instance's directory (a host's `<host>.<k>/`)
    device: bool  # on a raw device: no sizes to look at
    books: dict[str, dict[str, Any]] = field(default_factory=dict)  # manifest per directory
    old: set[str] = field(default_factory=set)  # directories an older assay marked
    sizes: dict[str, int] = field(default_factory=dict)  # what exists there now
    # integrity mode's block files (integrity_areas): written whole every run, room counted
    areas: list[tuple[str, int]] = field(default_factory=list)

    @property
    def kept(self) -> bool:
        """Whether manifests are kept (not on a host's raw device: no directory for them)."""
        return not self.target.startswith("/dev/")

    def where(self, name: str) -> tuple[str, str]:
        """A file's instance directory ("." the target itself) and its name in the manifest."""
        if not self.nested:
            return ".", name
        directory, _, rest = name.partition("/")
        return directory, rest

    def entry(self, name: str) -> dict[str, Any]:
        directory, key = self.where(name)
        return self.books.get(directory, {}).get(key) or {}

    def foreign(self) -> list[str]:
        """The paths assay would write that exist and are not assay's."""
        out = []
        for name, _ in self.files:
            directory, key = self.where(name)
            if directory not in self.old and key not in self.books.get(directory, {}):
                out += [p for p, _ in self.ends[name] if p in self.sizes]
        return out

    def others(self) -> list[tuple[str, int]]:
        """The files the manifests list that this run does not write (another scenario's,
        kept for reuse), with the size each was listed at."""
        mine = {self.where(n) for n, _ in self.files}
        return [(key if d == "." else f"{d}/{key}", int(e.get("size") or 0))
                for d, book in sorted(self.books.items()) for key, e in sorted(book.items())
                if (d, key) not in mine]

    def whole(self, name: str) -> bool:
        return self.device or all(self.sizes.get(p, -1) >= want for p, want in self.ends[name])

    def stale(self, fresh: bool) -> list[tuple[str, int]]:
        """The files to (re)write: all with `fresh` or where no manifest is kept."""
        return [(n, s) for n, s in self.files
                if fresh or not self.kept or not self.reusable(n, s)]

    def reusable(self, name: str, size: int) -> bool:
        e = self.entry(name)
        return e.get("prefilled") is True and e.get("size") == size \
            and e.get("data") == self.hashes[name] and self.whole(name)

    def missing_bytes(self) -> int:
        """What the files and integrity blocks still need on the target (a whole file needs
        nothing more)."""
        return sum(0 if self.whole(n) else s - min(s, self.sizes.get(n, 0))
                   for n, s in self.files) + \
            sum(s - min(s, self.sizes.get(p, 0)) for p, s in self.areas)

    def note(self, names: Sequence[str], prefilled: bool) -> None:
        """`names` as written whole (or, not `prefilled`, about to be: not to be reused)."""
        for name, size in self.files:
            if name in names:
                directory, key = self.where(name)
                self.books.setdefault(directory, {})[key] = {
                    "size": size, "data": self.hashes[name], "prefilled": prefilled,
                    "created": round(time.time(), 3)}

    def claim(self) -> bool:
        """This run's files that no manifest lists yet, listed as assay's; whether any was."""
        new = [n for n, _ in self.files if not self.entry(n)]
        self.note(new, prefilled=False)
        return bool(new)

    def directories(self) -> list[str]:
        return sorted({self.where(n)[0] for n, _ in self.files})


def data_files(plan: Plan, host: str, target: str, device: bool = False) -> DataFiles:
    """`host`'s files as its prefill job file writes them, under `target`."""
    files = list(plan.cluster.hosts[host].files) if plan.cluster else list(plan.files)
    df = DataFiles(host, target, files, {}, {}, plan.cluster is not None,
                   device or target.startswith("/dev/"), areas=integrity_areas(plan, host))
    text, sets = plan.jobfiles[host][PREFILL_JOB], plan.file_sets
    for name, size in files:
        directory, key = df.where(name)
        df.hashes[name] = content_hash(text, name, "" if directory == "." else directory)
        count = sets.get(key, 1)  # a set of small files: its two ends
        df.ends[name] = [(name, size)] if count == 1 else \
            [(name.replace("$filenum", str(i)), size // count) for i in (0, count - 1)]
    return df


def integrity_areas(plan: Plan, host: str) -> list[tuple[str, int]]:
    """Integrity mode's block files on `host`, relative to its target, as the writers name
    them (agent/area.py block_file); none in RBD images."""
    if on_rbd(plan.scenario.target):
        return []
    spec, chosen = settings(plan.resolved, writing(plan.streams))
    size = spec.size // spec.block * spec.block
    if plan.cluster is None:
        return [(block_file(w), size) for w in chosen]
    placed = plan.cluster.hosts[host].instances
    return [(block_file(w, host), size) for w in chosen if placed.get(w)]


def content_hash(jobfile: str, name: str, instance: str = "") -> str:
    """A hash of what a file holds: its prefill section (size, pattern, data options),
    without its instance's directory, so that it says what a file holds and not where."""
    body = jobfile.split(f"\n[{PREFILL_PREFIX}{name}]\n", 1)[-1].split("\n[", 1)[0]
    if instance:
        name = name[len(instance) + 1:]
        body = "\n".join(ln.replace(f"={instance}/", "=", 1)
                         if ln.startswith(("filename=", "filename_format=")) else ln
                         for ln in body.split("\n"))
    return hashlib.sha256(f"{name}]\n{body}".encode()).hexdigest()[:16]


def read(run: Run, df: DataFiles) -> None:
    """The manifests and the files' sizes, from the host, in one command."""
    df.books, df.old, df.sizes = {}, set(), {}
    if not df.kept or not df.files:
        return
    dirs = df.directories()
    paths = [] if df.device else [p for n, _ in df.files for p, _ in df.ends[n]] + \
        [p for p, _ in df.areas]
    r = run(["sh", "-c", STATE, "assay-files", df.target, str(len(dirs)), *dirs, *paths])
    if r.returncode != 0:
        raise UserError(f"{df.host}: cannot read what the target {df.target} holds: "
                        f"{r.stderr.strip() or r.returncode}")
    for line in r.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "m":
            directory, _, text = rest.partition(" ")
            df.books[directory] = _entries(text)
        elif kind == "o":
            df.old.add(rest)
        elif kind == "s" and rest.split(" ", 1)[0].isdigit():
            size, _, path = rest.partition(" ")
            df.sizes[path] = int(size)


def _entries(text: str) -> dict[str, Any]:
    """A manifest's entries; a damaged one lists nothing (its files then read as not assay's)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} \
        if isinstance(data, dict) else {}


def write(run: Run, df: DataFiles) -> str | None:
    """The manifests written back, each whole or not at all; why not, or None."""
    if not df.kept:
        return None
    pairs = [x for d in df.directories()
             for x in (d, json.dumps(df.books.get(d, {}), indent=1, sort_keys=True))]
    r = run(["sh", "-c", WRITE, "assay-files", df.target, *pairs])
    return None if r.returncode == 0 else (r.stderr.strip() or f"exit {r.returncode}")


def refuse_foreign(df: DataFiles, force: bool) -> None:
    """Never write over files assay did not make, unless the user says so."""
    foreign = df.foreign()
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
        where = f"{df.host}: " if df.nested else ""
        raise UserError(f"{where}{df.target} already holds files assay did not create: "
                        f"{shown}. assay would overwrite them. Use an empty directory, or "
                        f"pass --force to overwrite them.")


def refuse_short(df: DataFiles, free: int | None) -> None:
    """Refuse, before any IO, a target that cannot hold the files (a prefill would hit ENOSPC,
    on every host at once)."""
    more = df.missing_bytes()
    if free is not None and not df.device and more > 0 and more > free - SPACE_MARGIN:
        where = f"{df.host}: " if df.nested else ""
        what = "the files and integrity blocks" if df.areas else "the files"
        others = df.others()
        kept = (f" assay's files of other runs are kept there for reuse: "
                f"{format_size(sum(s for _, s in others))} in {len(others)} files "
                f"({', '.join(n for n, _ in others[:3])}{', ...' if len(others) > 3 else ''})."
                f" Delete them," if others else "")
        lower = "lower" if others else "Lower"
        raise UserError(f"{where}not enough free space at {df.target}: {what} need "
                        f"{format_size(more)} more, {format_size(free)} is free (assay keeps "
                        f"{format_size(SPACE_MARGIN)}).{kept} {lower} `dataset`"
                        + (" or `integrity.size`" if df.areas else "")
                        + " or choose a larger target.")


def claim(run: Run, df: DataFiles, free: int | None) -> None:
    """Before any IO, once the target is known to be assay's to write in: room for the files,
    and this run's files listed as assay's (the first write there)."""
    refuse_short(df, free)
    if df.claim():
        why = write(run, df)
        if why:
            raise UserError(f"{df.host + ': ' if df.nested else ''}cannot write to the "
                            f"target {df.target}: {why}")
