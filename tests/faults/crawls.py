"""A crawl of a local shop site by a real Celery worker of the fleet, with or without a kill -9 of
that worker mid-crawl: what tests/faults/test_celery_kill.py asserts on and `bench/faults.py`
measures. Plain Python (no pytest); the ORM of the calling process reads the results."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.faults.harness import Fleet, RedisServer, Service, wait_until
from tests.knowledge.sites import Resource, Site, page_html

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
    """A home page linking `pages` product pages of three sections each (ETags on); path -> HTML."""
    bodies = {f"/p{n}/": page_html(f"Товар {n}", f"<h1>Товар {n}</h1>" + "".join(section(n, k) for k in range(3)))
              for n in range(pages)}
    bodies["/"] = page_html("Магазин", "<h1>Магазин</h1><p>Каталог бытовой техники с доставкой.</p>",
                            links=list(bodies))
    site.routes["/robots.txt"] = Resource(b"User-agent: *\n", content_type="text/plain")
    for path, body in bodies.items():
        site.routes[path] = Resource(body=body, delay=delay, etag=True)
    return bodies


def expected_entries(url: str, body: bytes) -> int:
    """How many entries the page gives (the crawler's own extraction and chunking)."""
    from knowledge.chunking import page_drafts
    from knowledge.extract import html_extract

    extracted = html_extract(body, url=url, charset="utf-8")
    return len(page_drafts(url=url, title=extracted.title, blocks=extracted.blocks))


@dataclass
class Snapshot:
    pages: int  # stored (status OK) page rows of the source
    half_written: list[str]  # pages whose active entries are not exactly what the page gives
    duplicates: int  # entries sharing a (page, key)
    entries: int


def snapshot(source_id: int, expected: dict[str, int]) -> Snapshot:
    from django.db import connections

    from knowledge.models import Entry, Page

    try:
        by_page = Counter(Entry.objects.filter(source_id=source_id, active=True).values_list("page__url", flat=True))
        keys = Counter(Entry.objects.filter(source_id=source_id).values_list("page_id", "key"))
        urls = list(Page.objects.filter(source_id=source_id, status=Page.Status.OK).values_list("url", flat=True))
    finally:
        connections.close_all()  # called from short-lived threads
    return Snapshot(
        pages=len(urls), half_written=[url for url in urls if by_page[url] != expected.get(url)],
        duplicates=sum(n - 1 for n in keys.values() if n > 1), entries=sum(by_page.values()),
    )


def send_crawl(redis: RedisServer, run_id: int) -> None:
    """The crawl task onto the fleet's broker (as `crawl_start` does after commit)."""
    from kombu import Connection

    from assistant.settings import _celery_url
    from knowledge.crawler import crawl_run

    with Connection(_celery_url(redis.redis_url)) as connection:
        crawl_run.apply_async(args=(run_id,), connection=connection)  # type: ignore[call-arg]  # celery-types lacks it


@dataclass
class CrawlOutcome:
    killed: bool
    pages: int  # pages the site has
    expected_entries: int
    at_kill: Snapshot | None
    at_end: Snapshot
    status: str
    message: str
    fetched: int
    unchanged: int
    failed: int
    seconds: float  # from the task's sending to the run's end
    recovered: float | None  # from the kill to the run's end
    tracebacks: int  # in the log of the worker that finished it
    extra: dict[str, Any] = field(default_factory=dict)


def _ready(worker: Service) -> Callable[[], bool]:
    return lambda: "ready." in worker.tail(20_000)


def _status(run_id: int) -> tuple[str, str, int, int, int]:
    from django.db import connections

    from knowledge.models import CrawlRun

    try:
        run = CrawlRun.objects.get(pk=run_id)
        return run.status, run.message, run.fetched, run.unchanged, run.failed
    finally:
        connections.close_all()


def crawl_around_a_kill(fleet: Fleet, *, bot: Any, site: Site, kill: bool, timeout: float = 120.0) -> CrawlOutcome:
    """Crawl `site` (filled with `shop_of`) for `bot` on a worker of the fleet (its own Redis as
    broker and cache); with `kill`, kill -9 that worker once KILL_AFTER pages are stored and start
    a new one. Run it in a thread of its own in async code: it closes that thread's connections."""
    from django.db import connections

    try:
        return _crawl_around_a_kill(fleet, bot=bot, site=site, kill=kill, timeout=timeout)
    finally:
        connections.close_all()


def _crawl_around_a_kill(fleet: Fleet, *, bot: Any, site: Site, kill: bool, timeout: float) -> CrawlOutcome:
    from django.conf import settings

    from knowledge.models import CrawlRun, Source

    bodies = shop_of(site)
    expected = {site.url(path): expected_entries(site.url(path), body) for path, body in bodies.items()}
    redis = fleet.redis()
    redis.start()
    env = {"REDIS_URL": redis.redis_url, **WORKER_ENV}
    first, second = (fleet.celery(name, settings.WORKER_QUEUES, env) for name in ("worker-1", "worker-2"))
    source = Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=site.url("/"))
    run = CrawlRun.objects.create(bot=bot, source=source)
    first.start(_ready(first))
    sent_at = time.monotonic()
    send_crawl(redis, run.pk)
    done = (CrawlRun.Status.DONE, CrawlRun.Status.FAILED)
    at_kill: Snapshot | None = None
    killed_at: float | None = None
    finisher = first
    if kill:
        wait_until(lambda: snapshot(source.pk, expected).pages >= KILL_AFTER, timeout, "pages stored before the kill",
                   0.02)
        first.kill()
        killed_at = time.monotonic()
        at_kill = snapshot(source.pk, expected)
        second.start(_ready(second))
        finisher = second
    wait_until(lambda: _status(run.pk)[0] in done, timeout, "the crawl's end", 0.1)
    ended = time.monotonic()
    status, message, fetched, unchanged, failed = _status(run.pk)
    return CrawlOutcome(
        killed=kill, pages=len(bodies), expected_entries=sum(expected.values()), at_kill=at_kill,
        at_end=snapshot(source.pk, expected), status=status, message=message, fetched=fetched, unchanged=unchanged,
        failed=failed, seconds=ended - sent_at, recovered=(ended - killed_at) if killed_at is not None else None,
        tracebacks=finisher.tracebacks(),
    )
