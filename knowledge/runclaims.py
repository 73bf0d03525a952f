"""Which worker crawls a run right now, so that a worker killed mid-crawl (kill -9, OOM, a lost
machine) has its run finished by the next one instead of leaving it «идёт» for ever.

A crawl task holds a key in the cache (Redis) for its run, `crawl:alive:<run id>`, with a
heartbeat thread renewing it every CRAWL_ALIVE_SECONDS / 4 while it crawls. Celery's acks_late
redelivers the task of a worker that died (after CELERY_VISIBILITY_TIMEOUT); the redelivered
task finds the run still running and the key gone, takes the key and crawls the run again from
its start: pages stored before the kill come back unchanged (their ETag / Last-Modified, or the
same text) and write nothing, pages not reached yet are stored now.

What must stay true:
- Taking the key is one atomic add (SET NX): of two tasks for one run, exactly one crawls it; a
  duplicate delivered while the first is alive returns at once.
- The heartbeat is written before the run is touched and removed only by its holder.
- A worker stalled longer than CRAWL_ALIVE_SECONDS (it should not: the beat is a daemon thread)
  may see its run taken over; the page-level transactions and unique keys still keep every page's
  entries whole and single.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Iterator

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger("spravka.crawler")


def _key(run_id: int) -> str:
    return f"crawl:alive:{run_id}"


def run_take(*, run_id: int) -> str | None:
    """The run's key for this worker (a token), or None while a live worker holds it."""
    token = uuid.uuid4().hex
    return token if cache.add(_key(run_id), token, settings.CRAWL_ALIVE_SECONDS) else None


def run_release(*, run_id: int, token: str) -> None:
    if cache.get(_key(run_id)) == token:
        cache.delete(_key(run_id))


@contextlib.contextmanager
def run_heartbeat(*, run_id: int, token: str) -> Iterator[None]:
    """Keep the run's key alive while the block runs (a daemon thread), then release it."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(max(settings.CRAWL_ALIVE_SECONDS / 4, 0.2)):
            try:
                cache.set(_key(run_id), token, settings.CRAWL_ALIVE_SECONDS)
            except Exception:  # the cache away for a moment: the next beat tries again
                log.warning("crawl run %s: heartbeat not written", run_id, exc_info=True)

    thread = threading.Thread(target=beat, name=f"crawl-run-{run_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
        run_release(run_id=run_id, token=token)
