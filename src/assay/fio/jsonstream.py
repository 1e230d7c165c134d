"""Split fio's stdout into JSON documents.

With `--status-interval` fio prints one pretty-printed JSON document per interval, back to
back, each opening with a line `{` and closing with a line `}`. Noise lines ("fio: ...",
"<host> ..." banners, warnings) can come between them, and now and then inside them. We cut on
those lines, so a stray line costs at most itself, never a document.
"""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from typing import Any


class JsonStream:
    """Incremental splitter: feed text chunks, get complete documents back."""

    def __init__(self) -> None:
        self._partial = ""  # text after the last newline
        self._doc: list[str] | None = None  # lines of the document being read
        self.noise: list[str] = []

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        text = self._partial + chunk
        lines = text.split("\n")
        self._partial = lines.pop()
        docs: list[dict[str, Any]] = []
        for line in lines:
            doc = self._line(line)
            if doc is not None:
                docs.append(doc)
        return docs

    def close(self) -> list[dict[str, Any]]:
        """End of output: flush a last line that had no newline."""
        rest, self._partial = self._partial, ""
        doc = self._line(rest) if rest else None
        return [doc] if doc is not None else []

    def _line(self, line: str) -> dict[str, Any] | None:
        if self._doc is None:
            if line.rstrip() == "{":
                self._doc = [line]
            elif line.strip():
                self.noise.append(line.strip())
            return None
        self._doc.append(line)
        if line.rstrip() != "}":
            return None
        lines, self._doc = self._doc, None
        return self._decode(lines)

    def _decode(self, lines: list[str]) -> dict[str, Any] | None:
        try:
            obj = json.loads("\n".join(lines))
        except json.JSONDecodeError:
            # drop lines that cannot be JSON (noise printed mid-document) and try once more
            kept = [ln for ln in lines if ln.strip()[:1] in '{}[]"' or ln.strip()[:1].isdigit()
                    or ln.strip() in ("", "],", "},", "]", "}")]
            self.noise.extend(ln.strip() for ln in lines if ln not in kept)
            try:
                obj = json.loads("\n".join(kept))
            except json.JSONDecodeError:
                self.noise.append(f"<undecodable document of {len(lines)} lines>")
                return None
        return obj if isinstance(obj, dict) else None


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
