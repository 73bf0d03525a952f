"""The operators' inbox on a phone: first paint of `/inbox/` in Chromium at 390×844 with many
waiting conversations, beside the same page with a few waiting, measured in the same run.

    python bench/inbox_phone_paint.py [--waiting 500] [--few 5] [--loads 10] [--code DIR]

Set-up as bench/inbox_page.py (the same `fill`, through the chat services as the widget makes
them): bot `bench-phone` gets `--waiting` conversations waiting for an operator (three messages
each, one unread), bot `bench-phone-few` gets `--few` (the baseline); each has one operator,
signed in (the widget's rate limits raised as in bench/ws_capacity.py: every conversation comes
from one address). One `uvicorn assistant.asgi:application` subprocess (production options, DEBUG=0);
static files are served from the checkout by the browser's request routing, as in
bench/inbox_page.py. Each page is opened `--loads` times in a fresh tab of a phone-sized context
(390×844, touch, device scale 3), after one warm-up load; measured in the page: first contentful
paint (`performance.getEntriesByName('first-contentful-paint')`), DOMContentLoaded, and the waiting
rows on the page once loaded (templates/inbox/inbox.html draws the whole waiting list). The
bench bots and users are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.inbox_page import CHROMIUM, fill, static_route
from bench.ws_capacity import BENCH_LIMITS, Server, free_port, start_server, stop_server

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

SLUG, FEW_SLUG = "bench-phone", "bench-phone-few"
USERS = "bench-phone-"
TARGET_MS = 1000.0
PHONE: ViewportSize = {"width": 390, "height": 844}
MEASURE = """
async () => {
  const paint = () => performance.getEntriesByName('first-contentful-paint')[0];
  for (let i = 0; i < 100 && !paint(); i++) await new Promise((done) => setTimeout(done, 50));
  const nav = performance.getEntriesByType('navigation')[0];
  return {fcp: paint() ? paint().startTime : null, loaded: nav.domContentLoadedEventEnd,
          rows: document.querySelectorAll('#waiting .conv').length, bytes: nav.transferSize};
}
"""


def phone_loads(base: str, cookie: str, loads: int, code: Path) -> dict[str, Any]:
    """`loads` opens of `/inbox/` on a phone-sized Chromium page: FCP and DOMContentLoaded (ms)."""
    from playwright.sync_api import sync_playwright

    serve = static_route(code)

    result: dict[str, Any] = {"fcp": [], "loaded": [], "rows": 0}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox",
                                                                              "--disable-gpu"])
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=3,
                                      locale="ru-RU")
        context.add_cookies([{"name": "sessionid", "value": cookie, "url": base}])
        context.route("**/static/**", serve)
        for n in range(loads + 1):  # the first load warms the browser up, not counted
            page = context.new_page()
            page.goto(f"{base}/inbox/")
            timing = page.evaluate(MEASURE)
            page.close()
            if timing["fcp"] is None:
                raise RuntimeError("no first-contentful-paint entry")
            if n:
                result["fcp"].append(timing["fcp"])
                result["loaded"].append(timing["loaded"])
                result["rows"] = timing["rows"]
        browser.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--waiting", type=int, default=500)
    parser.add_argument("--few", type=int, default=5, help="waiting conversations on the baseline page")
    parser.add_argument("--loads", type=int, default=10, help="page opens in Chromium per row")
    parser.add_argument("--code", type=Path, default=common.REPO, help="run the server from this checkout")
    args = parser.parse_args()
    load_before = os.getloadavg()
    common.setup_django()
    from django.conf import settings

    from assistant.asgi import uvicorn_flags
    from knowledge.evaluation import percentile

    bot, few = common.bench_bot(SLUG, fresh=True), common.bench_bot(FEW_SLUG, fresh=True)
    common.drop_users(USERS)
    for name, value in BENCH_LIMITS.items():  # every conversation comes from this one address
        setattr(settings, name, int(value))
    try:
        with common.timed(f"{args.waiting} + {args.few} waiting conversations"):
            fill(bot, args.waiting, 0)
            fill(few, args.few, 0)
        _user, cookie = common.bench_member(bot, f"{USERS}anna@bench.example", "operator", first_name="Анна")
        _few_user, few_cookie = common.bench_member(few, f"{USERS}olga@bench.example", "operator",
                                                    first_name="Ольга")
        server = Server("production", uvicorn_flags(), [])
        port = free_port()
        start_server(server, port, args.code)
        base = f"http://127.0.0.1:{port}"
        try:
            many = phone_loads(base, cookie, args.loads, args.code)
            baseline = phone_loads(base, few_cookie, args.loads, args.code)
        finally:
            stop_server(server)
        errors = server.new_errors()
    finally:
        common.drop_bot(SLUG)
        common.drop_bot(FEW_SLUG)
        common.drop_users(USERS)
    load_after = os.getloadavg()

    def row(what: str, values: list[float], rows: int, floor: list[float], target: bool) -> list[Any]:
        p95 = percentile(values, 95)
        met = ("yes" if p95 <= TARGET_MS else "no") if target else ""
        return [what, len(values), rows, percentile(values, 50), p95, max(values), p95 / percentile(floor, 95), met]

    print(f"# Inbox on a phone (Chromium 390×844) — {common.machine()}; one uvicorn process")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; tracebacks in the server log: {errors}")
    print(f"# server code: {'this checkout' if args.code == common.REPO else args.code}\n")
    rows = [
        row(f"first contentful paint, {args.waiting} waiting", many["fcp"], many["rows"], baseline["fcp"], True),
        row(f"first contentful paint, {args.few} waiting (baseline)", baseline["fcp"], baseline["rows"],
            baseline["fcp"], False),
        row(f"DOMContentLoaded, {args.waiting} waiting", many["loaded"], many["rows"], baseline["loaded"], False),
        row(f"DOMContentLoaded, {args.few} waiting (baseline)", baseline["loaded"], baseline["rows"],
            baseline["loaded"], False),
    ]
    print(common.table(["page /inbox/", "loads", "rows in the HTML", "p50 ms", "p95 ms", "max ms",
                        "p95 vs baseline", f"p95 ≤ {TARGET_MS:.0f} ms"], rows))


if __name__ == "__main__":
    main()
