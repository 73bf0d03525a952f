"""Retries with backoff, only for failures that a second try can fix.

Retried: connection errors, 429 (honouring Retry-After), 5xx and 529 overloaded. Never retried:
other 4xx (a bad key or a bad request fails the same way again) and anything after draft text has
been shown. Timeouts are retried only when nobody is waiting on the screen: on the fast route the
person has already waited a whole timeout, and retrieval-only is the better answer by then.
SDK retries are switched off so this is the only retry loop (one budget, one journal line).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings

T = TypeVar("T")

RETRYABLE = frozenset({"connection", "timeout", "rate_limited", "overloaded", "server_error"})


@dataclass(frozen=True)
class Failure:
    code: str  # connection | timeout | rate_limited | overloaded | server_error | client_error | bad_response
    status: int | None = None
    retry_after: float | None = None
    final: bool = False  # never retry, whatever the code (e.g. draft text was already shown)


class StreamBroken(Exception):
    """A stream failed after draft text was shown. Never retried: the draft would start over."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def failure_for_status(status: int, retry_after: float | None = None) -> Failure:
    if status == 429:
        return Failure("rate_limited", status, retry_after)
    if status == 529:
        return Failure("overloaded", status, retry_after)
    if status >= 500:
        return Failure("server_error", status, retry_after)
    return Failure("client_error", status)


def parse_retry_after(headers: object) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds only; HTTP dates are not worth it)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = get(name)
        if raw:
            try:
                return max(0.0, float(raw) * scale)
            except ValueError:
                continue
    return None


def retry_delay(failure: Failure, attempt: int, *, person_waits: bool) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None when it must not be retried."""
    if failure.final or failure.code not in RETRYABLE or attempt > settings.LLM_MAX_RETRIES:
        return None
    if failure.code == "timeout" and person_waits:
        return None
    ceiling = float(settings.LLM_RETRY_MAX_WAIT)
    if failure.retry_after is not None:
        # A server asking for a longer pause than we would ever wait: give up now, not later.
        return failure.retry_after if failure.retry_after <= ceiling else None
    base = float(settings.LLM_RETRY_BACKOFF) * 2 ** (attempt - 1)
    return min(ceiling, base * random.uniform(0.5, 1.5))


def call_with_retries(
    attempt: Callable[[], T], classify: Callable[[Exception], Failure | None], *, person_waits: bool,
    deadline: float | None = None,
) -> tuple[T | Failure, int]:
    """Run `attempt` until it returns or fails for good; returns the outcome and attempts made.
    An exception `classify` does not recognise is a bug and propagates. A pause that would end
    past `deadline` (time.monotonic()) is not taken: the failure is final then."""
    number = 1
    while True:
        try:
            return attempt(), number
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            delay = retry_delay(failure, number, person_waits=person_waits)
            if delay is None or (deadline is not None and time.monotonic() + delay >= deadline):
                return failure, number
        time.sleep(delay)
        number += 1
