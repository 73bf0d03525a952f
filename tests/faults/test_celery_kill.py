"""kill -9 of the Celery worker in the middle of a crawl of a local site, then a new worker: the crawl
finishes (acks_late redelivers the task; the run's heartbeat is gone, so the new worker crawls it
again: knowledge/runclaims.py), every page is stored once with all its entries, none twice, and a
page is never half-written (its row and its entries are one transaction) — checked right after the
kill and at the end. The worker, its broker and cache are the fleet's own Redis."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from tests.faults.harness import Fleet, RedisServer, Service, wait_until
from tests.knowledge.sites import Resource, Site, page_html

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = 24
PAGE_DELAY = 0.25  # seconds each page takes to answer: a crawl of ~3 s at two requests at a time
KILL_AFTER = 6  # pages stored when the worker is killed
WORKER_ENV = {
    "CELERY_VISIBILITY_TIMEOUT": "3",  # redelivered 3 s after its worker died (an hour by default)
    "CRAWL_ALIVE_SECONDS": "2", "EMBED_LOCK_SECONDS": "5", "CRAWL_CONCURRENCY": "2",
}


def section(n: int, k: int) -> str:
    return (f"<h2>Раздел {k} страницы {n}</h2><p>Условие {k} для товара номер {n}: доставка за {n + k} дней, "
            f"оплата картой или наличными, гарантия {k + 1} года, возврат в течение {14 + n} дней.</p>")


def shop_of(site: Site, pages: int = PAGES, delay: float = PAGE_DELAY) -> dict[str, bytes]:
    """A home page linking `pages` product pages, each with three sections; path -> HTML."""
    bodies = {f"/p{n}/": page_html(f"Товар {n}", f"<h1>Товар {n}</h1>" + "".join(section(n, k) for k in range(3)))
              for n in range(pages)}
    bodies["/"] = page_html("Магазин", "<h1>Магазин</h1><p>Каталог бытовой техники с доставкой.</p>",
                            links=list(bodies))
    site.routes["/robots.txt"] = Resource(b"User-agent: *\n", content_type="text/plain")
    for path, body in bodies.items():
        site.routes[path] = Resource(body=body, delay=delay, etag=True)
    return bodies


def expected_entries(url: str, body: bytes) -> int:
    from knowledge.chunking import page_drafts
    from knowledge.extract import html_extract

    extracted = html_extract(body, url=url, charset="utf-8")
    return len(page_drafts(url=url, title=extracted.title, blocks=extracted.blocks))


@dataclass
class Snapshot:
    pages: int  # page rows of the source
    half_written: list[str]  # pages whose entries are not exactly what the page gives
    duplicates: int  # entries sharing a (page, key)
    entries: int


def snapshot(source_id: int, expected: dict[str, int]) -> Snapshot:
    from knowledge.models import Entry, Page

    by_page = Counter(Entry.objects.filter(source_id=source_id, active=True).values_list("page__url", flat=True))
    keys = Counter(Entry.objects.filter(source_id=source_id).values_list("page_id", "key"))
    urls = list(Page.objects.filter(source_id=source_id, status=Page.Status.OK).values_list("url", flat=True))
    return Snapshot(
        pages=len(urls), half_written=[url for url in urls if by_page[url] != expected[url]],
        duplicates=sum(n - 1 for n in keys.values() if n > 1), entries=sum(by_page.values()),
    )


def send_crawl(redis: RedisServer, run_id: int) -> None:
    """The crawl task onto the fleet's broker (as `crawl_start` does after commit)."""
    from kombu import Connection

    from assistant.settings import _celery_url
    from knowledge.tasks import crawl_run

    with Connection(_celery_url(redis.redis_url)) as connection:
        crawl_run.apply_async(args=(run_id,), connection=connection)  # type: ignore[call-arg]  # celery-types lacks it


@pytest.fixture
def site() -> Any:
    site = Site().start()
    yield site
    site.stop()


async def test_a_crawl_whose_worker_was_killed_finishes_on_the_next_worker_with_every_page_whole_and_once(
    fleet: Fleet, bot, site: Site
):
    from django.conf import settings

    from knowledge.crawler import RESUMED
    from knowledge.models import CrawlRun, Source
    from tests.chat.conftest import in_db

    bodies = shop_of(site)
    expected = {site.url(path): expected_entries(site.url(path), body) for path, body in bodies.items()}
    redis = fleet.redis()
    await asyncio.to_thread(redis.start)
    env = {"REDIS_URL": redis.redis_url, **WORKER_ENV}
    first, second = (fleet.celery(name, settings.WORKER_QUEUES, env) for name in ("worker-1", "worker-2"))

    def worker_ready(worker: Service) -> bool:
        return "ready." in worker.tail(20_000)

    source = await in_db(lambda: Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=site.url("/")))()
    run = await in_db(lambda: CrawlRun.objects.create(bot=bot, source=source))()
    await asyncio.to_thread(first.start, lambda: worker_ready(first))
    await asyncio.to_thread(send_crawl, redis, run.pk)

    def stored() -> int:
        return snapshot(source.pk, expected).pages

    await asyncio.to_thread(wait_until, in_db_sync(lambda: stored() >= KILL_AFTER), 120, "pages stored before the kill",
                            0.02)
    first.kill()
    killed_at = time.monotonic()
    at_kill = await in_db(snapshot)(source.pk, expected)
    await asyncio.to_thread(second.start, lambda: worker_ready(second))

    def finished() -> bool:
        run.refresh_from_db()
        return run.status in (CrawlRun.Status.DONE, CrawlRun.Status.FAILED)

    await asyncio.to_thread(wait_until, in_db_sync(finished), 120, "the crawl finished after the restart")
    recovered = time.monotonic() - killed_at
    at_end = await in_db(snapshot)(source.pk, expected)

    assert KILL_AFTER <= at_kill.pages < len(bodies), "killed mid-crawl"
    assert at_kill.half_written == [] and at_kill.duplicates == 0
    assert run.status == CrawlRun.Status.DONE, run.message
    assert run.message.startswith(RESUMED)  # the second worker crawled it again, and says so
    assert run.unchanged >= KILL_AFTER  # what the first worker stored was not written again
    assert at_end.pages == len(bodies) and at_end.half_written == [] and at_end.duplicates == 0
    assert at_end.entries == sum(expected.values())
    assert run.fetched + run.unchanged == len(bodies) and run.failed == 0
    assert recovered < 90
    assert second.tracebacks() == 0


def in_db_sync(check: Any) -> Any:
    """`check` closing its thread's database connection after each call (wait_until polls it)."""
    from django.db import connections

    def run() -> bool:
        try:
            return bool(check())
        finally:
            connections.close_all()

    return run
