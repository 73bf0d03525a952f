"""A model call that ends at its deadline, whatever the server does.

An HTTP client's timeout is per read: a server that keeps sending (a ping event now and then, a
reply one byte at a time, tokens just under the read timeout apart) never trips it, and a person
waiting on the widget would wait as long as that server likes. So a call gets a deadline (its
`LLMRequest.timeout`, never past `LLMRequest.deadline`, the turn's budget), the client's timeouts
are set to what is left of it, and once the response has begun, a watchdog shuts the connection's
socket down at the deadline: the blocked read returns at once and the call fails as a timeout.

What must stay true:
- The watchdog never touches a socket after its call is over (it may be back in the pool, serving
  another call): `Watchdog.__exit__` and the firing take one lock, and a finished call disarms it.
- A call whose deadline has already passed is not sent at all (`remaining` raises).
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

from django.conf import settings

MIN_SECONDS = 0.05  # below this a call cannot even connect: it counts as timed out


class DeadlinePassed(Exception):
    """The call's deadline came before its reply was complete."""


def call_deadline(timeout: float | None, deadline: float | None) -> float:
    """When a call must be over (time.monotonic()): its timeout from now, never past `deadline`."""
    ends = time.monotonic() + (timeout or settings.LLM_TIMEOUT)
    return min(ends, deadline) if deadline is not None else ends


def remaining(ends: float) -> float:
    """Seconds left until `ends`; DeadlinePassed when there is not enough left to try."""
    left = ends - time.monotonic()
    if left < MIN_SECONDS:
        raise DeadlinePassed()
    return left


def response_socket(response: Any) -> socket.socket | None:
    """The socket under an httpx / httpx2 response, when its transport exposes one."""
    extensions = getattr(response, "extensions", None) or {}
    stream = extensions.get("network_stream")
    info = getattr(stream, "get_extra_info", None)
    sock = info("socket") if info is not None else None
    return sock if isinstance(sock, socket.socket) else None


class Watchdog:
    """`with Watchdog(response, ends):` around reading a response. At `ends` the socket is shut down
    (both ways), so a read blocked on it returns; `fired` then says why the read failed."""

    def __init__(self, response: Any, ends: float) -> None:
        self.sock = response_socket(response)
        self.ends = ends
        self.fired = False
        self._over = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Watchdog:
        if self.sock is not None:
            self._timer = threading.Timer(max(0.0, self.ends - time.monotonic()), self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _fire(self) -> None:
        with self._lock:
            if self._over or self.sock is None:
                return
            self.fired = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by the other side
                pass

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self._lock:
            self._over = True
        if self._timer is not None:
            self._timer.cancel()
        if exc is not None and not isinstance(exc, DeadlinePassed) and (self.fired or time.monotonic() >= self.ends):
            raise DeadlinePassed() from exc

    def check(self) -> None:
        """Between events: a stream that is still coming at its deadline is over."""
        if time.monotonic() >= self.ends:
            raise DeadlinePassed()
