"""The operators' inbox with many waiting conversations: the page `/inbox/` and the socket's
`hello` → `queue`, through a real server, each beside baselines measured in the same run.

    python bench/inbox_page.py [--waiting 500] [--others 100] [--loads 100] [--quick] [--code DIR]

Set-up, on the bench database through the chat services (as the widget makes them): the bot
`bench-inbox` gets `--waiting` conversations, each a visitor question, «Позвать оператора» (the
handoff note) and a second visitor message while waiting (three messages, one unread), and
`--others` conversations still with the bot (one visitor message each: the «Недавние» list
shows 50 of them). A second bot, `bench-inbox-empty`, has no conversations. Each bot has one
operator, signed in (a session row; the cookie goes with every request).

One `uvicorn assistant.asgi:application` subprocess (production options, DEBUG=0, as
bench/ws_capacity.py starts it). Measured one after another on one keep-alive connection,
`--loads` times each, the whole response read:
- `/inbox/` for the operator of the bot with the waiting conversations (the target: p95 ≤ 300 ms);
- `/inbox/` for the operator of the empty bot: the same view, session, template and page,
  no rows (the baseline: what the page costs before its list);
- `/admin/login/`, anonymous: a small Django page on the same server (the framework's floor).
Then on `/ws/inbox/` (session cookie, this server's own Origin): `hello` → `queue` for both
operators and `ping` → `pong` (the socket's baseline), `--loads` times each on one socket.
Queries per page are counted in this process (Django's test client on the same database, the
same view), beside the page's size. The bench bots, their conversations and users are deleted
at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.ws_capacity import Server, free_port, start_server, stop_server

if TYPE_CHECKING:
    from playwright.sync_api import Route

SLUG, EMPTY_SLUG = "bench-inbox", "bench-inbox-empty"
USERS = "bench-inbox-"
TARGET_MS = 300.0
CHROMIUM = "/usr/bin/chromium"
QUESTIONS = [
    "Можно ли оплатить заказ по счёту для юрлица?",
    "Почему мой заказ до сих пор не доставлен?",
    "Есть ли у вас самовывоз в Казани?",
    "Как вернуть товар, если коробка вскрыта?",
]


def fill(bot: Any, waiting: int, others: int) -> None:
    """The conversations, through the services the widget socket calls."""
    from chat import services

    for n in range(waiting):
        conversation = services.conversation_open(bot=bot, visitor_id=f"v_wait_{n}", ip="127.0.0.1",
                                                  page_url=f"https://bench.example/catalog/{n}")
        services.message_accept(conversation=conversation, text=QUESTIONS[n % len(QUESTIONS)], client_msg_id=f"q{n}")
        services.conversation_handoff(conversation=conversation, reason="button")
        services.message_accept(conversation=conversation, text="Подскажите, пожалуйста, это срочно.",
                                client_msg_id=f"w{n}")
    for n in range(others):
        conversation = services.conversation_open(bot=bot, visitor_id=f"v_bot_{n}", ip="127.0.0.1")
        services.message_accept(conversation=conversation, text="Здравствуйте!", client_msg_id=f"h{n}")


def queries_per_page(user: Any) -> tuple[int, int]:
    """(queries, bytes) of one `/inbox/` for `user`, through Django's test client in this process."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(user)
    client.get("/inbox/")  # the first call pays for imports and template loading
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/inbox/")
    if response.status_code != 200:
        raise RuntimeError(f"/inbox/ answered {response.status_code}")
    return len(queries), len(response.content)


def http_loads(base: str, path: str, cookie: str | None, loads: int, expect: str) -> tuple[list[float], int]:
    """`loads` GETs of `path` one after another on one keep-alive connection: latencies (ms), bytes."""
    import httpx

    cookies = {"sessionid": cookie} if cookie else {}
    latencies: list[float] = []
    size = 0
    with httpx.Client(base_url=base, cookies=cookies, timeout=60) as client:
        for n in range(loads + 3):  # three warm-up loads, not counted
            started = time.perf_counter()
            response = client.get(path)
            body = response.content
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200 or expect not in response.text:
                raise RuntimeError(f"{path} answered {response.status_code} without {expect!r}")
            size = len(body)
            if n >= 3:
                latencies.append(elapsed)
    return latencies, size


async def socket_trips(base: str, origin: str, cookie: str, loads: int) -> dict[str, Any]:
    """hello → queue and ping → pong on one operator socket, `loads` times each."""
    from websockets.asyncio.client import connect

    async with connect(f"{base}/ws/inbox/", origin=origin, max_size=2**26,  # type: ignore[arg-type]
                       additional_headers={"Cookie": f"sessionid={cookie}"}, open_timeout=60) as ws:
        result: dict[str, Any] = {"hello": [], "ping": []}
        for n in range(loads + 3):
            started = time.perf_counter()
            await ws.send('{"type":"hello"}')
            raw = await asyncio.wait_for(ws.recv(), 60)
            elapsed = (time.perf_counter() - started) * 1000
            frame = json.loads(raw)
            if frame["type"] != "queue":
                raise RuntimeError(f"expected queue, got {frame['type']}")
            result["waiting"] = sum(1 for c in frame["conversations"] if c["state"] == "waiting_operator")
            result["listed"] = len(frame["conversations"])
            result["bytes"] = len(raw if isinstance(raw, bytes) else raw.encode())
            if n >= 3:
                result["hello"].append(elapsed)
        for _ in range(loads):
            started = time.perf_counter()
            await ws.send('{"type":"ping"}')
            if json.loads(await asyncio.wait_for(ws.recv(), 60))["type"] != "pong":
                raise RuntimeError("expected pong")
            result["ping"].append((time.perf_counter() - started) * 1000)
    return result


# Wraps the page's WebSocket so that the queue frame's handling by inbox.js is timed in the page.
_TIME_QUEUE = """
(() => {
  const Native = window.WebSocket;
  function Timed(url, protocols) {
    const ws = new Native(url, protocols);
    let handler = null;
    Object.defineProperty(ws, "onmessage", {
      get() { return handler; },
      set(fn) {
        handler = fn;
        ws.addEventListener("message", (e) => {
          const started = performance.now();
          fn.call(ws, e);
          if (/^\\{"type": ?"queue"/.test(e.data)) {
            window.__queue = {arrived: started, drawn: performance.now()};
          }
        });
      },
    });
    return ws;
  }
  Timed.prototype = Native.prototype;
  for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Timed[name] = Native[name];
  window.WebSocket = Timed;
})();
"""



def static_route(code: Path) -> Callable[[Route], None]:
    """A Playwright route handler serving /static/ from the checkout at `code` (a reverse proxy's job
    in production; the bench server runs with DEBUG=0, which does not serve them)."""
    static = code / "static"

    def serve(route: Route) -> None:
        name = route.request.url.split("/static/", 1)[1].split("?", 1)[0]
        path = (static / name).resolve()
        if static.resolve() not in path.parents or not path.is_file():
            route.fulfill(status=404, body="")
            return
        kind = {".js": "application/javascript", ".css": "text/css"}.get(path.suffix, "application/octet-stream")
        route.fulfill(status=200, body=path.read_bytes(), content_type=kind)

    return serve

def browser_loads(base: str, cookie: str, loads: int, code: Path) -> dict[str, list[float]]:
    """Open `/inbox/` in Chromium `loads` times: navigation → DOMContentLoaded, → the queue frame
    arrived, → drawn (inbox.js done with it), and the drawing alone. Static files are served from
    the checkout by the browser's request routing (a reverse proxy's job in production, and the
    server runs with DEBUG=0, which does not serve them)."""
    from playwright.sync_api import sync_playwright

    serve = static_route(code)

    result: dict[str, list[float]] = {"loaded": [], "arrived": [], "drawn": [], "drawing": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox",
                                                                              "--disable-gpu"])
        context = browser.new_context()
        context.add_cookies([{"name": "sessionid", "value": cookie, "url": base}])
        context.add_init_script(_TIME_QUEUE)
        context.route("**/static/**", serve)
        for n in range(loads + 1):  # the first load warms the browser up, not counted
            page = context.new_page()
            page.goto(f"{base}/inbox/")
            page.wait_for_function("window.__queue !== undefined", timeout=60_000)
            timing = page.evaluate("({queue: window.__queue, loaded: "
                                   "performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd})")
            page.close()
            if n:
                queue = timing["queue"]
                result["loaded"].append(timing["loaded"])
                result["arrived"].append(queue["arrived"])
                result["drawn"].append(queue["drawn"])
                result["drawing"].append(queue["drawn"] - queue["arrived"])
        browser.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--waiting", type=int, default=500)
    parser.add_argument("--others", type=int, default=100, help="conversations still with the bot")
    parser.add_argument("--loads", type=int, default=100, help="page loads and socket round trips per row")
    parser.add_argument("--browser-loads", type=int, default=20, help="page loads in Chromium (0: none)")
    parser.add_argument("--quick", action="store_true", help="50 loads, 10 in the browser")
    parser.add_argument("--code", type=Path, default=common.REPO,
                        help="run the server from this checkout (compare a change under the same conditions)")
    args = parser.parse_args()
    if args.quick:
        args.loads, args.browser_loads = 50, min(args.browser_loads, 10)
    load_before = os.getloadavg()
    common.setup_django()
    from assistant.asgi import uvicorn_flags
    from knowledge.evaluation import percentile

    bot, empty = common.bench_bot(SLUG, fresh=True), common.bench_bot(EMPTY_SLUG, fresh=True)
    common.drop_users(USERS)
    try:
        with common.timed(f"{args.waiting} waiting + {args.others} other conversations"):
            fill(bot, args.waiting, args.others)
        user, cookie = common.bench_member(bot, f"{USERS}anna@bench.example", "operator", first_name="Анна")
        empty_user, empty_cookie = common.bench_member(empty, f"{USERS}olga@bench.example", "operator",
                                                       first_name="Ольга")
        queries, _size = queries_per_page(user)
        empty_queries, _ = queries_per_page(empty_user)
        server = Server("production", uvicorn_flags(), [])
        port = free_port()
        start_server(server, port, args.code)
        base, ws_base = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
        try:
            full, full_size = http_loads(base, "/inbox/", cookie, args.loads, "Посетитель")
            bare, bare_size = http_loads(base, "/inbox/", empty_cookie, args.loads, "Сейчас никто не ждёт")
            login, login_size = http_loads(base, "/admin/login/", None, args.loads, "csrfmiddlewaretoken")
            trips = asyncio.run(socket_trips(ws_base, base, cookie, args.loads))
            empty_trips = asyncio.run(socket_trips(ws_base, base, empty_cookie, args.loads))
            seen = seen_empty = None
            if args.browser_loads:
                seen = browser_loads(base, cookie, args.browser_loads, args.code)
                seen_empty = browser_loads(base, empty_cookie, args.browser_loads, args.code)
        finally:
            stop_server(server)
        errors = server.new_errors()
    finally:
        common.drop_bot(SLUG)
        common.drop_bot(EMPTY_SLUG)
        common.drop_users(USERS)
    load_after = os.getloadavg()

    def row(what: str, values: list[float], size: int, extra: Any, baseline: list[float], target: bool) -> list[Any]:
        p95 = percentile(values, 95)
        met = ("yes" if p95 <= TARGET_MS else "no") if target else ""
        return [what, len(values), percentile(values, 50), p95, max(values), p95 / percentile(baseline, 95),
                f"{size / 1024:.0f}", extra, met]

    print(f"# Inbox page — {common.machine()}; one uvicorn process, {args.waiting} waiting conversations "
          f"(3 messages each) + {args.others} with the bot")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; tracebacks in the server log: {errors}")
    print(f"# server code: {'this checkout' if args.code == common.REPO else args.code}\n")
    rows = [
        row(f"/inbox/, {args.waiting} waiting (listed: {trips['listed']})", full, full_size, queries, bare, True),
        row("/inbox/, empty queue (baseline)", bare, bare_size, empty_queries, bare, False),
        row("/admin/login/, anonymous (Django's floor)", login, login_size, "", bare, False),
        row(f"socket hello → queue, {trips['waiting']} waiting", trips["hello"], trips["bytes"], "", trips["ping"],
            True),
        row("socket hello → queue, empty queue", empty_trips["hello"], empty_trips["bytes"], "", trips["ping"], False),
        row("socket ping → pong (baseline)", trips["ping"], 0, "", trips["ping"], False),
    ]
    if seen and seen_empty:
        floor = seen_empty["drawn"]
        rows += [
            row("Chromium: navigation → page loaded (DOMContentLoaded)", seen["loaded"], full_size, "", floor, False),
            row("Chromium: navigation → queue frame arrived", seen["arrived"], trips["bytes"], "", floor, False),
            row("Chromium: navigation → queue drawn by inbox.js", seen["drawn"], trips["bytes"], "", floor, False),
            row("Chromium: inbox.js drawing the queue frame", seen["drawing"], trips["bytes"], "", floor, False),
            row("Chromium, empty queue: navigation → queue drawn (baseline)", floor, bare_size, "", floor, False),
        ]
    print(common.table(["request", "loads", "p50 ms", "p95 ms", "max ms", "p95 vs baseline", "KB", "queries",
                        f"p95 ≤ {TARGET_MS:.0f} ms"], rows))
    print("\n(baseline: page rows — the empty queue's page; socket rows — ping; Chromium rows — the empty queue drawn)")


if __name__ == "__main__":
    main()
