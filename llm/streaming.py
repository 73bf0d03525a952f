"""Draft text from a structured reply that is still arriving.

Tool input (or a JSON-schema reply) streams as JSON fragments. This turns them into the growing
text of one string field (`answer`) and hands only the new part to a sink. It is a draft: the
finished reply is still validated and the answer chain still decides what the visitor keeps.

A release rule sees only fields whose values are complete (a key is complete once the next key
has started, so `"source": 1` is not mistaken for the first digit of 12) and holds the draft back
until it says yes; text held back so far is then released at once. A gate, when given, then says
how much of the text may show: it sees the same complete fields, the field's text so far and
whether that text is complete, and returns a length (what it has let through stays shown: a
smaller length later holds the rest back, it never takes text away).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jiter

TextSink = Callable[[str], None]
# Decides, from the fields whose values are complete so far, whether draft text may be shown yet.
ReleaseRule = Callable[[Mapping[str, Any]], bool]
# (complete fields, the field's text so far, whether that text is complete) -> characters to show.
StreamGate = Callable[[Mapping[str, Any], str, bool], int]


class DraftStream:
    def __init__(
        self, sink: TextSink, *, field: str = "answer", release: ReleaseRule | None = None,
        gate: StreamGate | None = None,
    ) -> None:
        self._sink = sink
        self._field = field
        self._release = release
        self._gate = gate
        self._buffer = b""
        self._sent = ""
        self._seen: tuple[int, bool, bool] = (-1, False, False)  # (length, complete, released) last looked at
        self._broken = False
        self.emitted = False

    def feed(self, fragment: str) -> None:
        if self._broken or not fragment:
            return
        self._buffer += fragment.encode("utf-8")
        snapshot = self._snapshot()
        if snapshot is None:
            return
        text = snapshot.get(self._field)
        if not isinstance(text, str) or not text.startswith(self._sent):
            return
        settled = _settled(snapshot)
        complete = self._field in settled
        released = self._release is None or self._release(settled)
        if (len(text), complete, released) == self._seen:  # nothing new for this field (another one grew)
            return
        self._seen = (len(text), complete, released)
        if not released:
            return
        if self._gate is not None:
            text = text[:self._gate(settled, text, complete)]
        if len(text) <= len(self._sent):
            return
        delta, self._sent = text[len(self._sent):], text
        self.emitted = True
        self._sink(delta)

    def _snapshot(self) -> dict[str, Any] | None:
        try:
            value = jiter.from_json(self._buffer, partial_mode="trailing-strings")
        except ValueError:
            # Malformed: show nothing more. (The partial parser forgives junk right after a
            # complete value, so a draft can still come from a reply that fails later; it stays a
            # draft, and the validated result decides.)
            self._broken = True
            return None
        return value if isinstance(value, dict) else None


def _settled(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Every field but the last one parsed: the last may still be growing."""
    keys = list(snapshot)
    return {key: snapshot[key] for key in keys[:-1]}
