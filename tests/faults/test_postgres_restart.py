"""PostgreSQL stopped (fast: every session ended at once, as a restart or failover does) while 20
widget visitors talk to one uvicorn process, then started again. Visitors who write meanwhile get
a clear `unavailable` error frame in the bot's language, with `retry_after` (never
`server_error`, no traceback per frame in the log), the widget sends again, and once the database
is back the same process answers every question exactly once: no half-saved turn (a question
without its answer, an apology stored for the outage), no restart of the app."""

from __future__ import annotations

import asyncio

import pytest

from answers import replies
from tests.faults.harness import Fleet, PostgresServer, database_url
from tests.faults.scenarios import chat_around, postgres_restart

pytestmark = pytest.mark.django_db(transaction=True)

VISITORS = 20
CROWD_ENV = {"CHAT_RATE_IP": "10000", "CHAT_RATE_CONVERSATIONS_IP": "10000", "CHAT_MAX_SOCKETS_IP": "10000"}


def own_postgres(fleet: Fleet) -> tuple[PostgresServer, str]:
    """The fleet's PostgreSQL with a copy of this test's database (the shop and its knowledge)."""
    from django.db import connection

    server = fleet.postgresql()
    return server, server.copy_database(database_url(connection.settings_dict), "spravka")


async def test_visitors_get_a_retry_error_while_postgres_is_away_and_answers_once_it_is_back(
    fleet: Fleet, knowledge, shop
):
    server, url = await asyncio.to_thread(own_postgres, fleet)
    app = fleet.uvicorn("asgi", {"DATABASE_URL": url, **CROWD_ENV})
    await asyncio.to_thread(app.start)

    outcome, visitors = await chat_around(
        postgres_restart(server), url=app.url, public_key=shop.public_key, database_url=url, visitors=VISITORS,
    )

    assert outcome.sent == 4 * VISITORS
    assert (outcome.answered, outcome.lost, outcome.doubled) == (outcome.sent, 0, 0), outcome
    assert set(outcome.errors) == {"unavailable"}, outcome.errors  # only the retry error, and it was shown
    shown = [error for visitor in visitors for error in visitor.errors()]
    assert all(error["message"] == replies.TEXTS["ru"]["error_unavailable"].format(seconds=error["retry_after"])
               for error in shown)
    assert app.alive() and app.starts == 1  # the same process, never restarted
    log = app.tail(500_000)
    assert "server_error" not in log and log.count("Traceback") == 0, log[-3000:]


def test_a_pooled_server_throws_away_the_connections_a_restart_broke_and_serves_at_once(fleet: Fleet, shop):
    """The served app keeps its PostgreSQL sessions in a pool (assistant/dbpool.py). A restart
    ends every one of them while they wait idle there; the first request once the database is
    back must not be handed one of those dead sessions (the pool checks each as it hands it out):
    it is answered, on sessions opened anew, by the same process."""
    import httpx
    import psycopg

    from bots.apikeys import api_key_create
    from tests.faults.conftest import APP_NAME

    _row, key = api_key_create(bot=shop, name="pool")
    server, url = own_postgres(fleet)
    app = fleet.uvicorn("asgi", {"DATABASE_URL": url, "DB_POOL_MIN_SIZE": "2", "DB_POOL_MAX_SIZE": "4"})
    app.start()

    def sessions() -> set[tuple[int, str]]:
        with psycopg.connect(url, autocommit=True) as watcher:
            rows = watcher.execute("SELECT pid, backend_start::text FROM pg_stat_activity WHERE application_name = %s",
                                   [APP_NAME]).fetchall()
        return {(int(pid), str(started)) for pid, started in rows}

    with httpx.Client(base_url=app.url.replace("ws://", "http://"), timeout=60,
                      headers={"Authorization": f"Bearer {key}"}) as client:
        assert [client.get("/api/v1/entries/").status_code for _ in range(10)] == [200] * 10
        before = sessions()
        assert before  # idle in the pool between requests
        server.stop("fast")
        server.start()
        assert client.get("/api/v1/entries/").status_code == 200  # the first request after the restart
        assert [client.get("/api/v1/entries/").status_code for _ in range(10)] == [200] * 10
    after = sessions()
    assert after and not (after & before)  # every session broken by the restart was thrown away
    assert app.alive() and app.starts == 1
    log = app.tail(200_000)
    assert log.count("Traceback") == 0, log[-3000:]
