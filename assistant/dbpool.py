"""PostgreSQL connections from a pool in the serving process (the ASGI app), nowhere else.

Without it every HTTP request opens a new PostgreSQL connection and closes it at the end (about
12 ms of a small page here): Django runs each request's sync code in a thread of its own (asgiref's
ThreadSensitiveContext), so persistent connections (CONN_MAX_AGE > 0) would stay behind in threads
that are gone. Django 5.2's pool (psycopg_pool, `DATABASES[...]["OPTIONS"]["pool"]`) is one per
process, shared by every thread, opened on the first query.

Who gets it:
- uvicorn importing `assistant.asgi` as the process's entry point (production, the tests' live
  servers, tests/faults): `assistant.asgi` calls `pool_serve()` when nothing configured Django
  before it; `make run` (`manage.py rundemo`) calls it right before `uvicorn.run`.
- Not Celery workers: a pool made in the prefork parent would reach every child without its worker
  threads, and Celery 5.7's Django fix-up closes a pool after every task in prefork children
  (`celery/fixups/django.py`, `_close_database`), so a worker's pool would be rebuilt per task:
  nothing gained over a connection per task. Not management commands (short
  lived, one thread) and not the tests' own in-process database (pytest configures Django before
  anything imports `assistant.asgi`, so the check below leaves it alone).

What a request sees: it waits at most DB_POOL_TIMEOUT s for a connection; then psycopg_pool's
PoolTimeout, an OperationalError, takes the same road as a database that is away (the widget's
`unavailable` frame, the HTTP error page). Every connection is checked with an empty query as it
leaves the pool (CONN_HEALTH_CHECKS), so one broken by a PostgreSQL restart is thrown away, never
handed out; one that failed during a request goes back broken and the pool discards it. The
widget's and the inbox's socket threads keep the pooled connection they took between calls, as
they kept their own before (chat/consumers.py, KEEP_POOLED).
"""

from __future__ import annotations

import atexit
from typing import Any

from django.core.exceptions import ImproperlyConfigured


def pool_options(
    *, enabled: bool, min_size: int, max_size: int, timeout: float, conn_max_age: int | None
) -> dict[str, Any] | None:
    """psycopg_pool's options for `DATABASES["default"]["OPTIONS"]["pool"]`, or None with the pool
    off. A connection lost to an outage is retried for `timeout` s as well (psycopg_pool's
    `reconnect_timeout`, 5 min by default, doubles its pause each try): after that the next
    request asks for a new one at once, so the app is back as soon as PostgreSQL is."""
    if not enabled:
        return None
    if conn_max_age != 0:
        raise ImproperlyConfigured("DB_POOL=1 needs DB_CONN_MAX_AGE=0: pooled connections are not kept per thread")
    if min_size < 0 or max_size < 1 or max_size < min_size:
        raise ImproperlyConfigured(
            f"DB_POOL_MIN_SIZE ({min_size}) and DB_POOL_MAX_SIZE ({max_size}) need 0 ≤ min ≤ max and max ≥ 1"
        )
    if timeout <= 0:
        raise ImproperlyConfigured(f"DB_POOL_TIMEOUT must be a positive number of seconds; got {timeout}")
    return {
        "name": "spravka",
        "min_size": min_size,
        "max_size": max_size,
        "timeout": timeout,
        "reconnect_timeout": timeout,
    }


def pool_serve(alias: str = "default") -> bool:
    """Let this process take `alias`'s connections from a pool (settings.DB_POOL_OPTIONS; False and
    nothing changed when they are None). Call it before the process serves, with no connection of
    `alias` open in it; the pool itself is made on the first query and closed at exit."""
    from django.conf import settings
    from django.db import connections

    options = settings.DB_POOL_OPTIONS
    if not options:
        return False
    db = connections.settings[alias]  # the very dict every thread's DatabaseWrapper reads
    connections[alias].close()
    db["OPTIONS"]["pool"] = dict(options)
    db["CONN_HEALTH_CHECKS"] = True  # the pool checks each connection it hands out
    atexit.register(pool_close, alias)
    return True


def pool_close(alias: str = "default") -> None:
    """Close `alias`'s pool if this process made one (its connections end at PostgreSQL at once)."""
    from django.db import connections

    wrapper = connections[alias]
    pools: dict[str, Any] = getattr(type(wrapper), "_connection_pools", {})
    pool = pools.pop(alias, None)
    if pool is not None:
        pool.close(timeout=2.0)
