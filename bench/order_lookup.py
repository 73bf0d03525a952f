"""Order lookup overhead: what the answer chain adds to the shop endpoint's own latency.

    python bench/order_lookup.py [--lookups 200] [--latencies 0 20 100]

The endpoint is tests/commerce/shop_api.py (a threaded http.server answering like a shop's order
API) in a process of its own, so its work does not count as ours, answering after a fixed delay
(`--latencies`, ms). For each delay, two kinds of call alternate one by one (machine noise hits
both alike):

- baseline: the endpoint called directly with the same client the lookups share
  (commerce.endpoint.make_client(): the SSRF-safe client, its address check, the pinned,
  kept-alive connection), the body read;
- chain: `pipeline.answer(bot, "где мой заказ 48213?")` for a visitor: the rules, the bot's
  endpoint row, the order rate limits in Redis, the same HTTP call, JSON pointers, the reply
  template, the lookup row written to PostgreSQL;
- services (two more columns): `message_receive` as the widget's consumer calls it, storing the
  question and the answer too (what a visitor waits for, minus the socket), and the same for
  «Спасибо!», a turn the rules answer alone: what every message costs there, lookup or not.

overhead = p50 (p95) of the chain minus p50 (p95) of the baseline in the same run. Target: ≤ 20 ms.
The bench bot (`bench-orders`) is deleted at the end.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-orders"
QUESTION = "где мой заказ 48213?"
TARGET_MS = 20.0


def _serve(delay_ms: float, ports: Any) -> None:
    from tests.knowledge.catalog.shop_api import ShopAPI

    api = ShopAPI(delay=delay_ms / 1000).start()
    ports.put(api.port)
    while True:
        time.sleep(3600)


def start_endpoint(delay_ms: float) -> tuple[multiprocessing.Process, str]:
    ports: Any = multiprocessing.Queue()
    process = multiprocessing.Process(target=_serve, args=(delay_ms, ports), daemon=True)
    process.start()
    port = ports.get(timeout=30)
    return process, f"http://127.0.0.1:{port}/api/orders/{{number}}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(bot: Any, template: str, lookups: int) -> dict[str, list[float]]:
    from answers.orders import Caller
    from answers.pipeline import answer
    from chat import services
    from knowledge.catalog import endpoint as order_http
    from knowledge.catalog import secrets
    from knowledge.catalog.services import order_endpoint_configure

    endpoint = order_endpoint_configure(
        bot=bot, url_template=template, headers={"Authorization": "Bearer bench-token"}, status_pointer="/status",
        date_pointer="/delivery/date", tracking_pointer="/tracking_url",
    )
    url = order_http.order_url(endpoint, "48213")
    headers = {"Accept": "application/json", **secrets.unseal(endpoint.headers_token)}
    times: dict[str, list[float]] = {"baseline": [], "chain": [], "services": [], "thanks": []}

    client = order_http.make_client()  # the very client lookups share

    def baseline() -> None:
        response = client.get(url, headers=headers)
        assert response.status == 200 and b"status" in response.body

    def chain(i: int) -> None:
        reply = answer(bot=bot, text=QUESTION, history=[], caller=Caller(visitor_id=f"bench-{i}", ip="203.0.113.9"))
        assert reply.llm_meta.get("order_result") == "found", reply.text

    # A visitor asks once: the same question again and again in one conversation would be a
    # rephrase (friction), flag the answer and put it into the review queue, which is not a lookup's cost.
    conversations = iter(services.conversation_open(bot=bot, visitor_id=f"bench-services-{i}", ip="203.0.113.10")
                         for i in range(10**9))
    conversation = next(conversations)

    def via_services() -> None:
        _q, reply, _c = services.message_receive(conversation=conversation, text=QUESTION,
                                                 client_msg_id=uuid.uuid4().hex)
        assert reply is not None and (reply.llm_meta or {}).get("order_result") == "found", reply

    def thanks() -> None:  # the same services for a turn the rules answer alone: what any message costs
        _q, reply, _c = services.message_receive(conversation=conversation, text="Спасибо!",
                                                 client_msg_id=uuid.uuid4().hex)
        assert reply is not None and reply.intent == "thanks"

    for _warm in range(5):
        for warm in (baseline, functools.partial(chain, -1), via_services, thanks):
            warm()
        conversation = next(conversations)
    for i in range(lookups):
        conversation = next(conversations)  # opened outside the timings: a visitor's first question
        calls = (("baseline", baseline), ("chain", functools.partial(chain, i)), ("services", via_services),
                 ("thanks", thanks))
        for name, call in calls:
            started = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lookups", type=int, default=200)
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.0, 20.0, 100.0])
    args = parser.parse_args()
    common.setup_django()
    from django.conf import settings

    # The limits stay on (their Redis round trip is part of the overhead), high enough never to refuse.
    settings.CHAT_RATE_ORDERS_VISITOR = settings.CHAT_RATE_ORDERS_IP = 10**9
    settings.CHAT_RATE_VISITOR = settings.CHAT_RATE_IP = 10**9
    settings.CHAT_RATE_CONVERSATIONS_IP = 10**9
    settings.CRAWL_ALLOW_PRIVATE = True
    settings.LLM_PROVIDER = "none"
    bot = common.bench_bot(SLUG, fresh=True)
    print(f"# Order lookup overhead — {common.machine()}\n")
    print(f"{args.lookups} lookups per row, baseline and chain alternating; ms.\n")
    print("| endpoint delay | baseline p50 / p95 | chain p50 / p95 | overhead p50 / p95 | services p50 / p95 "
          "| «Спасибо!» via services p50 / p95 | target ≤ 20 ms (p50; p95) |")
    print("|---|---|---|---|---|---|---|")
    try:
        for delay in args.latencies:
            process, template = start_endpoint(delay)
            try:
                times = measure(bot, template, args.lookups)
            finally:
                process.terminate()
                process.join()
            base, chain, full, plain = times["baseline"], times["chain"], times["services"], times["thanks"]
            over50, over95 = pct(chain, 0.5) - pct(base, 0.5), pct(chain, 0.95) - pct(base, 0.95)
            verdict = "; ".join("met" if value <= TARGET_MS else "not met" for value in (over50, over95))
            print(f"| {delay:g} ms | {pct(base, .5):.1f} / {pct(base, .95):.1f} | {pct(chain, .5):.1f} / "
                  f"{pct(chain, .95):.1f} | **{over50:.1f} / {over95:.1f}** | {pct(full, .5):.1f} / "
                  f"{pct(full, .95):.1f} | {pct(plain, .5):.1f} / {pct(plain, .95):.1f} | {verdict} |")
            load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"<!-- delay {delay:g}: load average {load}; mean baseline {statistics.fmean(base):.1f}, chain "
                  f"{statistics.fmean(chain):.1f}, services {statistics.fmean(full):.1f} -->")
    finally:
        from knowledge.catalog.models import OrderLookup

        OrderLookup.objects.filter(bot=bot).delete()
        common.drop_bot(SLUG)


if __name__ == "__main__":
    main()
