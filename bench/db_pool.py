"""The serving process's database pool (DB_POOL, assistant/dbpool.py): the same requests against a
real uvicorn with the pool off (a new PostgreSQL connection per HTTP request, the sockets' threads
keeping theirs) and on, in the same run.

    python bench/db_pool.py [--requests 60] [--rounds 4] [--max-size N]

Set-up on the bench database: the bot `bench-pool` with three passages (bench/ws_capacity.py's),
its allowed origin, an owner signed in (a session row) and an API key. Then `--rounds` times, one
`uvicorn assistant.asgi:application` subprocess (production options, DEBUG=0) with DB_POOL=0, then
one with DB_POOL=1 (the order alternates by round, so drift on the shared machine falls on both),
each measured one request after another, `--requests` times per row, after 5 warm-ups:
- `/b/bench-pool/`: the owner dashboard (session, auth, the overview's queries, template);
- `/api/v1/entries/`: the REST list with a key (key lookup, the throttle in Redis, one page);
- `/accounts/login/`: a page that reads no database (the control: the pool cannot change it);
- a widget socket turn: «Здравствуйте!» → the rules' greeting (the turn's transaction in one of the
  socket threads; without the pool that thread keeps its connection, so little should change);
- a new widget socket: open, `hello` with a new visitor → `welcome` (a new conversation).
There is no HTTP endpoint of the widget to add: its settings come in the socket's `welcome`.
Per server, the sessions PostgreSQL opened for the bench database (pg_stat_database.sessions,
read a second after the last request) say what the pool saves. The bench bot and owner are
deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.ws_capacity import (
    GREETING,
    ORIGIN,
    PASSAGES,
    Server,
    ask,
    free_port,
    open_session,
    start_server,
    stop_server,
)

SLUG = "bench-pool"
USERS = "bench-pool-"
WARM_UPS = 5


def sessions_opened() -> int:
    """PostgreSQL's count of sessions opened on the bench database so far (stats flush ~1 s late)."""
    from django.db import connection

    time.sleep(1.2)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        (count,) = cursor.fetchone() or (0,)
    return int(count)


def http_times(base: str, path: str, headers: dict[str, str], cookies: dict[str, str], loads: int,
               expect: str) -> list[float]:
    import httpx

    times: list[float] = []
    with httpx.Client(base_url=base, headers=headers, cookies=cookies, timeout=60) as client:
        for n in range(WARM_UPS + loads):
            started = time.perf_counter()
            response = client.get(path)
            elapsed = time.perf_counter() - started
            if response.status_code != 200 or expect not in response.text:
                raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
            if n >= WARM_UPS:
                times.append(elapsed)
    return times


async def socket_times(ws_base: str, public_key: str, loads: int) -> tuple[list[float], list[float]]:
    """(greeting turns on one socket, new sockets to their welcome), seconds each."""
    url = f"{ws_base}/ws/chat/{public_key}/"
    ws = await open_session(url, f"v_pool_{uuid.uuid4().hex[:12]}")
    turns: list[float] = []
    try:
        for n in range(WARM_UPS + loads):
            started = time.perf_counter()
            reply = await ask(ws, f"m{n}-{uuid.uuid4().hex[:8]}", GREETING)
            elapsed = time.perf_counter() - started
            if not reply.get("text"):
                raise RuntimeError(f"no greeting: {reply}")
            if n >= WARM_UPS:
                turns.append(elapsed)
    finally:
        await ws.close()
    opens: list[float] = []
    for n in range(WARM_UPS + loads):
        started = time.perf_counter()
        ws = await open_session(url, f"v_pool_{uuid.uuid4().hex[:12]}")
        elapsed = time.perf_counter() - started
        await ws.close()
        if n >= WARM_UPS:
            opens.append(elapsed)
    return turns, opens


ROWS = ["dashboard /b/<slug>/", "API entries/ (key)", "/accounts/login/ (no database)",
        "socket turn «Здравствуйте!»", "new socket → welcome"]


def measure(server: Server, setup: dict[str, Any], loads: int) -> tuple[dict[str, list[float]], int, int]:
    port = free_port()
    before = sessions_opened()
    start_server(server, port)
    base, ws_base = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    try:
        cookies = {"sessionid": setup["cookie"]}
        key = {"Authorization": f"Bearer {setup['key']}"}
        runs: list[tuple[str, Callable[[], list[float]]]] = [
            (ROWS[0], lambda: http_times(base, f"/b/{SLUG}/", {}, cookies, loads, SLUG)),
            (ROWS[1], lambda: http_times(base, "/api/v1/entries/", key, {}, loads, '"results"')),
            (ROWS[2], lambda: http_times(base, "/accounts/login/", {}, {}, loads, "csrfmiddlewaretoken")),
        ]
        times = {name: run() for name, run in runs}
        times[ROWS[3]], times[ROWS[4]] = asyncio.run(socket_times(ws_base, setup["public_key"], loads))
        errors = server.new_errors()
    finally:
        stop_server(server)
    return times, sessions_opened() - before, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=60, help="timed requests per row and server")
    parser.add_argument("--rounds", type=int, default=4, help="pool off / pool on pairs (order alternates)")
    parser.add_argument("--max-size", type=int, default=0, help="DB_POOL_MAX_SIZE (default: the settings')")
    args = parser.parse_args()
    load_before = os.getloadavg()
    common.setup_django()
    from assistant.asgi import uvicorn_flags
    from bots.apikeys import api_key_create
    from knowledge.evaluation import percentile

    bot = common.bench_bot(SLUG, fresh=True)
    common.drop_users(USERS)
    try:
        bot.allowed_origins = [ORIGIN]
        bot.save()
        common.load_passages(bot, PASSAGES, source_title="bench-pool")
        common.embed_bot(bot, "e5-small")
        _user, cookie = common.bench_member(bot, f"{USERS}owner@bench.example", "owner", first_name="Ирина")
        _row, key = api_key_create(bot=bot, name="bench")
        setup = {"cookie": cookie, "key": key, "public_key": bot.public_key}
        pool_env = {"DB_POOL": "1"} | ({"DB_POOL_MAX_SIZE": str(args.max_size)} if args.max_size else {})
        servers = {"off": Server("pool off", uvicorn_flags(), [], {"DB_POOL": "0"}),
                   "on": Server("pool on", uvicorn_flags(), [], pool_env)}
        times: dict[str, dict[str, list[float]]] = {which: {name: [] for name in ROWS} for which in ("off", "on")}
        opened = {"off": 0, "on": 0}
        errors = {"off": 0, "on": 0}
        for round_no in range(args.rounds):
            for which in (("off", "on") if round_no % 2 == 0 else ("on", "off")):
                got, sessions, errs = measure(servers[which], setup, args.requests)
                for name, values in got.items():
                    times[which][name] += values
                print(f"  round {round_no + 1}, {servers[which].label}: p50 ms "
                      + ", ".join(f"{1000 * percentile(got[name], 50):.1f}" for name in ROWS), file=sys.stderr)
                opened[which] += sessions
                errors[which] += errs
    finally:
        common.drop_bot(SLUG)
        common.drop_users(USERS)
    load_after = os.getloadavg()

    def ms(values: list[float], q: float) -> float:
        return 1000 * percentile(values, q)

    rows = []
    for name in ROWS:
        off, on = times["off"][name], times["on"][name]
        rows.append([name, len(on), ms(off, 50), ms(on, 50), ms(off, 50) / ms(on, 50),
                     ms(off, 95), ms(on, 95), ms(off, 95) / ms(on, 95)])
    total = args.rounds * (WARM_UPS + args.requests) * len(ROWS)
    print(f"# Database pool — {common.machine()}; one uvicorn process per server, {args.rounds} round(s) "
          f"of pool off / pool on, requests one after another")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}\n")
    print(common.table(["request", "n", "p50 off ms", "p50 on ms", "off / on", "p95 off ms", "p95 on ms",
                        "off / on"], rows))
    print()
    print(common.table(["server", "PostgreSQL sessions opened", f"per request (of {total})", "tracebacks"],
                       [[servers[w].label, opened[w], opened[w] / total, errors[w]] for w in ("off", "on")]))


if __name__ == "__main__":
    main()
