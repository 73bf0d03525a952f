"""The serving process's database pool (assistant/dbpool.py): built from the settings only when
asked, switched on only where uvicorn imports the app as its entry point, and, under a real
uvicorn with many requests at once, a bounded set of PostgreSQL sessions used again and again."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.core.exceptions import ImproperlyConfigured

from assistant.dbpool import pool_options
from tests.chat.test_consumers_uvicorn import _database_url, running_uvicorn
from tests.conftest import REPO

APP_NAME = "spravka-pool-test-app"


def test_pool_options_are_built_only_when_asked():
    assert pool_options(enabled=False, min_size=2, max_size=10, timeout=5.0, conn_max_age=0) is None
    assert pool_options(enabled=True, min_size=2, max_size=10, timeout=5.0, conn_max_age=0) == {
        "name": "spravka", "min_size": 2, "max_size": 10, "timeout": 5.0, "reconnect_timeout": 5.0,
    }


@pytest.mark.parametrize(("sizes", "conn_max_age", "timeout", "says"), [
    ((2, 10), 60, 5.0, "DB_CONN_MAX_AGE=0"),
    ((2, 10), None, 5.0, "DB_CONN_MAX_AGE=0"),
    ((4, 2), 0, 5.0, "DB_POOL_MAX_SIZE (2)"),
    ((0, 0), 0, 5.0, "max ≥ 1"),
    ((-1, 3), 0, 5.0, "DB_POOL_MIN_SIZE (-1)"),
    ((2, 10), 0, 0.0, "DB_POOL_TIMEOUT"),
])
def test_pool_options_refuse_what_the_pool_cannot_do(sizes, conn_max_age, timeout, says):
    with pytest.raises(ImproperlyConfigured, match=r".*" + says.replace("(", r"\(").replace(")", r"\)")):
        pool_options(enabled=True, min_size=sizes[0], max_size=sizes[1], timeout=timeout, conn_max_age=conn_max_age)


def _python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    from django.conf import settings

    full = os.environ | {"DATABASE_URL": _database_url(), "REDIS_URL": settings.REDIS_URL} | env
    for name in ("DB_POOL", "DB_CONN_MAX_AGE", "DB_POOL_MAX_SIZE"):
        if name not in env:
            full.pop(name, None)
    return subprocess.run([sys.executable, *(args or ("-c", code))], cwd=REPO, env=full, capture_output=True,
                          text=True, timeout=120, check=False)


SHOW = ("import assistant.asgi\nfrom django.conf import settings\nfrom django.db import connection\n"
        "print(settings.DB_POOL_OPTIONS, connection.settings_dict['OPTIONS'].get('pool'))")


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "{'name': 'spravka', 'min_size': 2, 'max_size': 3, 'timeout': 5.0, 'reconnect_timeout': 5.0}"),
    ({"DB_POOL": "0"}, "None None"),
    ({"DB_CONN_MAX_AGE": "60"}, "None None"),  # kept connections, as before, unless the pool is asked for
])
def test_the_settings_and_the_served_app_follow_db_pool(env, expected):
    result = _python(SHOW, {"DB_POOL_MAX_SIZE": "3", **env})
    assert result.returncode == 0, result.stderr[-3000:]
    line = result.stdout.strip().splitlines()[-1]
    if expected.startswith("{"):
        assert line == f"{expected} {expected}"  # asgi.py as the entry point: the served app pools
    else:
        assert line == expected


def test_the_pool_with_kept_connections_stops_the_process_with_a_message():
    result = _python(SHOW, {"DB_POOL": "1", "DB_CONN_MAX_AGE": "60"})
    assert result.returncode != 0
    assert "DB_POOL=1 needs DB_CONN_MAX_AGE=0" in result.stderr


def test_management_commands_and_this_test_process_connect_without_the_pool():
    from django.db import connection

    import assistant.asgi  # noqa: F401  (imported after Django was set up: not the entry point)

    assert "pool" not in connection.settings_dict["OPTIONS"]
    result = _python("", {}, "manage.py", "shell", "-c", SHOW)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1].endswith(" None")  # the option is built, not used


def _app_sessions(cursor) -> list[tuple[int, str]]:
    cursor.execute("SELECT pid, backend_start::text FROM pg_stat_activity WHERE datname = current_database() "
                   "AND application_name = %s", [APP_NAME])
    return [(int(pid), str(started)) for pid, started in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_a_pooled_server_answers_many_requests_on_a_bounded_set_of_sessions(tmp_path: Path, bot):
    """200 API requests, 8 at a time, each reading the database (the key, the entries), against a
    pool of at most 3: every request answered, never more than 3 sessions of the app at once, and
    the same sessions all along (each one is PostgreSQL's pid and start time: none opened anew)."""
    import psycopg

    from bots.apikeys import api_key_create

    _row, key = api_key_create(bot=bot, name="pool")
    env = {"DB_POOL_MAX_SIZE": "3", "DB_POOL_MIN_SIZE": "1", "PGAPPNAME": APP_NAME, "API_RATE": "100000/min",
           "DEBUG": "0"}
    seen: set[tuple[int, str]] = set()
    most = 0
    done = threading.Event()

    with running_uvicorn(tmp_path / "uvicorn.log", env=env) as ws_url, \
            psycopg.connect(_database_url(), autocommit=True) as watcher:
        base = ws_url.replace("ws://", "http://")

        def watch() -> None:
            nonlocal most
            with watcher.cursor() as cursor:
                while not done.is_set():
                    sessions = _app_sessions(cursor)
                    seen.update(sessions)
                    most = max(most, len(sessions))
                    time.sleep(0.01)

        def get(_n: int) -> int:
            with httpx.Client(base_url=base, timeout=60) as client:
                return client.get("/api/v1/entries/", headers={"Authorization": f"Bearer {key}"}).status_code

        watcher_thread = threading.Thread(target=watch)
        watcher_thread.start()
        try:
            with ThreadPoolExecutor(max_workers=8) as clients:
                statuses = list(clients.map(get, range(200)))
        finally:
            done.set()
            watcher_thread.join()
        with watcher.cursor() as cursor:
            after = _app_sessions(cursor)

    assert statuses == [200] * 200
    assert 1 <= most <= 3, (most, seen)
    assert 1 <= len(seen) <= 3, seen  # no session opened per request, none leaked
    assert after and set(after) <= seen  # the pool still holds them, ready for the next request


def test_make_run_turns_the_pool_on_in_its_own_process_before_it_serves():
    """`manage.py rundemo` configured Django (and queried) long before uvicorn starts in the same
    process: `pool_serve()` then closes that connection and the next query comes from a pool."""
    code = ("from django.db import connection\nconnection.ensure_connection()\nfrom assistant import dbpool\n"
            "assert dbpool.pool_serve()\nwith connection.cursor() as cursor:\n    cursor.execute('SELECT 1')\n"
            "print(connection.connection._pool is connection.pool, connection.settings_dict['CONN_HEALTH_CHECKS'])")
    result = _python("", {}, "manage.py", "shell", "-c", code)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "True True"
