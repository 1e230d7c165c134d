"""Split fio's stdout into JSON documents.

With `--status-interval` fio prints one pretty-printed JSON document per interval, back to
back, each opening with a line `{` and closing with a line `}`. Noise lines ("fio: ...",
"<host> ..." banners, warnings) can come between them, and now and then inside them. We cut on
those lines, so a stray line costs at most itself, never a document.
"""

from __future__ import annotations

import codecs
import json
import os
import queue
from collections.abc import Iterator
from typing import IO, Any

from assay.fio.rawout import RawOutput


class JsonStream:
    """Incremental splitter: feed text chunks, get complete documents back.

    A json+ dump is thousands of lines a second per fio: the boundaries are found with
    `str.find` over whole chunks, not with a Python step per line, and an open document is
    kept as pieces of whole lines, joined once when it closes."""

    def __init__(self) -> None:
        self._partial = ""  # text after the last newline
        self._doc: list[str] | None = None  # the open document's text so far, whole lines
        self.noise: list[str] = []

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        text = self._partial + chunk
        cut = text.rfind("\n") + 1
        self._partial = text[cut:]
        return self._lines(text, cut) if cut else []

    def close(self) -> list[dict[str, Any]]:
        """End of output: take a last line that had no newline; an unclosed document is
        dropped."""
        rest, self._partial = self._partial, ""
        docs = self._lines(rest + "\n", len(rest) + 1) if rest else []
        self._doc = None
        return docs

    def _lines(self, text: str, end: int) -> list[dict[str, Any]]:
        """The documents closed in `text[:end]` (whole lines); noise outside them kept."""
        docs: list[dict[str, Any]] = []
        pos = 0
        while pos < end:
            found = _line_of(text, "{" if self._doc is None else "}", pos, end)
            stop, after = found or (end, end)
            if self._doc is None:
                self._keep_noise(text[pos:stop])
                if found:
                    self._doc = [text[stop:after]]
            else:
                self._doc.append(text[pos:after])
                if found:
                    doc = self._decode("".join(self._doc))
                    self._doc = None
                    if doc is not None:
                        docs.append(doc)
            pos = after
        return docs

    def _keep_noise(self, text: str) -> None:
        self.noise.extend(ln.strip() for ln in text.split("\n") if ln.strip())

    def _decode(self, text: str) -> dict[str, Any] | None:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            # drop lines that cannot be JSON (noise printed mid-document) and try once more
            lines = text.split("\n")
            kept: list[str] = []
            for ln in lines:  # one pass: a dump is tens of thousands of lines
                if _json_line(ln.strip()):
                    kept.append(ln)
                else:
                    self.noise.append(ln.strip())
            try:
                obj = json.loads("\n".join(kept))
            except json.JSONDecodeError:
                self.noise.append(f"<undecodable document of {len(lines) - 1} lines>")
                return None
        return obj if isinstance(obj, dict) else None


def _json_line(line: str) -> bool:
    """Whether a stripped line can be part of fio's pretty-printed JSON."""
    return line[:1] in '{}[]"' or line[:1].isdigit() or line in ("", "],", "},", "]", "}")


def _line_of(buf: str, mark: str, pos: int, end: int) -> tuple[int, int] | None:
    """(start, end past its newline) of the first line in `buf[pos:end]` that is `mark` and
    trailing blanks (a document's top level: fio indents everything inside); `pos` is a
    line's start and `end` follows a newline."""
    at = pos if buf.startswith(mark, pos, end) else _next_line(buf, mark, pos, end)
    while at >= 0:
        nl = buf.find("\n", at, end)
        if not buf[at + len(mark):nl].strip():
            return at, nl + 1
        at = _next_line(buf, mark, nl, end)
    return None


def _next_line(buf: str, mark: str, pos: int, end: int) -> int:
    """The start of the first line after `pos` that begins with `mark`, or -1."""
    i = buf.find("\n" + mark, pos, end)
    return i + 1 if i >= 0 else -1


def split_documents(text: str) -> Iterator[dict[str, Any]]:
    """All JSON documents in a complete fio output (e.g. a stored raw file)."""
    stream = JsonStream()
    yield from stream.feed(text)
    yield from stream.close()


class DocumentQueue:
    """Status dumps handed from the thread that reads fio's output to the engine's loop."""

    def __init__(self) -> None:
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.last: dict[str, Any] | None = None  # the newest dump delivered

    def put(self, doc: dict[str, Any]) -> None:
        self._queue.put(doc)

    def end(self) -> None:
        """fio's output has ended: `documents` returns once the dumps before are delivered."""
        self._queue.put(None)

    def documents(self, poll: float = 0.2) -> Iterator[dict[str, Any] | None]:
        """Yields each dump as it arrives, and None every `poll` s while waiting (so the
        caller can run its timeline); ends when fio's output ends."""
        while True:
            try:
                doc = self._queue.get(timeout=poll)
            except queue.Empty:
                yield None
                continue
            if doc is None:
                return
            self.last = doc
            yield doc


def pump(out: IO[bytes], raw: RawOutput, stream: JsonStream, docs: DocumentQueue) -> None:
    """fio's stdout (a local or a remote one) until it ends: kept in `raw`, and each dump put
    on `docs` as it completes. Whatever has arrived is taken at once: a json+ dump is
    thousands of lines, and a step per line would cost the CPU the hosts of a lab share.
    `out` is a pipe, read straight from its descriptor (nothing else reads it)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fd = out.fileno()
    last = None
    while chunk := os.read(fd, 1 << 16):
        raw.write(chunk)
        for doc in stream.feed(decoder.decode(chunk)):
            last = doc
            docs.put(doc)
    for doc in stream.close():
        last = doc
        docs.put(doc)
    raw.close(last)
    docs.end()
