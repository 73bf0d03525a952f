"""Crawling a site into the knowledge base: robots.txt, sitemaps, the home page and in-site links.

Order of events that must stay true:
- every network request goes through one SafeClient (SSRF rules, limits) and one Throttle (at most
  CRAWL_CONCURRENCY requests at a time, starts spaced by CRAWL_DELAY or the robots Crawl-delay);
- worker threads only fetch; the ORM is used from the calling thread alone, and each page is
  stored in its own transaction, so a crawl that dies halfway keeps every page it finished;
- a page is deactivated, never deleted: on 404/410, or when a complete crawl no longer reaches it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.http import FetchError, FetchTimeout, Resolver, Response, SafeClient, Unreachable, redirect_target
from core.texts import Text, russian, stored
from knowledge import pages
from knowledge.discovery import Robots, robots_fetch, sitemap_collect
from knowledge.exceptions import SourceInvalid
from knowledge.extract import looks_like_file, normalize_url, site_key
from knowledge.frontier import Frontier
from knowledge.indexing import embed_pending, embedding_request
from knowledge.lexicon import LexiconRefresher
from knowledge.models import CrawlRun, Page, Source
from knowledge.progress import source_pending
from knowledge.runclaims import run_heartbeat, run_take
from knowledge.runs import (
    COUNTERS,
    run_claim,
    run_counts_refresh,
    run_crawling,
    run_embedding,
    run_finish,
    run_progress,
    run_start,
)
from knowledge.services import CRAWLABLE_KINDS

log = logging.getLogger("spravka.crawler")

Progress = Callable[[CrawlRun], None]
MAX_URL = 2000  # Page.url
CRAWLABLE = (Source.Kind.SITE, Source.Kind.SITEMAP)
ACTIVE_STATUSES = (CrawlRun.Status.QUEUED, CrawlRun.Status.RUNNING, CrawlRun.Status.EMBEDDING)
RESUMED = stored(gettext_noop(
    "Обход начат заново: обработчик прервался посреди обхода. Уже сохранённые страницы не записаны повторно."))

SITE_DOWN = gettext_noop("Сайт недоступен: %(reason)s")


class CrawlAborted(Exception):
    """The crawl cannot go on at all (bad address, site unreachable, robots.txt forbids it).
    `text`: why, a stored text (core/texts.py) for the run's message."""

    def __init__(self, text: Text) -> None:
        super().__init__(russian(text))
        self.text = text


class Throttle:
    """Spaces the starts of requests to one host; the pool size caps how many run at once."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.delay
        if start > now:
            time.sleep(start - now)


@dataclass(frozen=True)
class Fetched:
    url: str
    response: Response | None = None
    error: FetchError | None = None


class Crawl:
    """One pass over a source. Its counters are tallied here and stored on the run as they move
    (runs.run_progress); reasons are tallied for the summary."""

    def __init__(
        self, run: CrawlRun, client: SafeClient, throttle: Throttle, limit: int, progress: Progress | None,
        embed_behind: bool = False, conditional: bool = True,
    ) -> None:
        self.run, self.client, self.throttle, self.limit, self.progress = run, client, throttle, limit, progress
        # False: ask for every page in full. A crawl begun again after its worker died rebuilds its
        # frontier from the pages' links, and a 304 would hide the links of every page stored
        # before the kill (their text, unchanged, is still not written again).
        self.conditional = conditional
        self.source: Source = run.source
        self.counts: Counter[str] = Counter({name: getattr(run, name) for name in COUNTERS})
        self.reasons: Counter[tuple[str, str]] = Counter()
        self.known = {page.url: page for page in Page.objects.filter(bot_id=run.bot_id)}
        self.frontier = Frontier()
        self.depth: dict[str, int] = {}
        self.embed_behind = embed_behind
        self.lexicon = LexiconRefresher(run.bot_id)
        self.priorities: dict[str, float] = {}
        self.seen: set[str] = set()
        self.visited: set[str] = set()
        self.requests = 0
        self.links_complete = True  # False once a page's links stay unknown (304, error)
        self.truncated = False
        self.unreachable: list[Text] = []
        self.robots = Robots()
        self.site = ""

    # --- setup -----------------------------------------------------------------------------
    def start_url(self) -> str:
        raw = self.source.url or self.run.bot.site_url
        url = normalize_url(raw) if raw else None
        if not url:
            raise CrawlAborted(stored(gettext_noop("Неправильный адрес сайта: «%(url)s». Нужен адрес вида https://shop.ru/"),
                                      url=raw[:500]))
        return url

    def discover(self) -> None:
        if self.source.kind not in CRAWLABLE:
            raise CrawlAborted(stored(
                gettext_noop("Источник «%(source)s» не сайт и не sitemap: его не обходят, а загружают."),
                source=str(self.source)))
        start = self.start_url()
        self.site = site_key(start)
        parts = urlsplit(start)
        origin = f"{parts.scheme}://{parts.netloc}"
        try:
            self.robots = robots_fetch(self.client, origin)
        except FetchError as exc:
            raise CrawlAborted(stored(SITE_DOWN, reason=exc.text)) from exc
        if self.robots.blocked:
            raise CrawlAborted(self.robots.blocked)
        self.throttle.delay = max(settings.CRAWL_DELAY, self.robots.crawl_delay())
        seeds = self.seed_urls(start, origin)
        if not any(self.robots.allows(url) for url in seeds):
            raise CrawlAborted(stored(gettext_noop("robots.txt запрещает обход всего сайта (Disallow: /)")))
        self.enqueue(seeds)

    def seed_urls(self, start: str, origin: str) -> list[str]:
        """The start page and sitemap pages. /sitemap.xml is guessed only when robots.txt names no
        sitemap and allows the guess; a sitemap named in robots.txt is an invitation."""
        is_sitemap = self.source.kind == Source.Kind.SITEMAP
        listed = self.robots.sitemaps()
        guessed = not is_sitemap and not listed
        sitemap_urls = [start] if is_sitemap else (listed or [f"{origin}/sitemap.xml"])
        if guessed and not self.robots.allows(sitemap_urls[0]):
            sitemap_urls = []
        found = sitemap_collect(self.client, sitemap_urls, accept=self.in_site, limit=self.limit)
        if is_sitemap and not found.urls:
            details = found.problems or stored(gettext_noop("в нём нет ни одного адреса этого сайта"))
            raise CrawlAborted(stored(gettext_noop("В sitemap нет страниц для обхода: %(details)s"), details=details))
        if found.problems and not guessed:
            self.links_complete = False  # a listed sitemap could not be read: its pages are unknown
        self.priorities = found.priorities
        return found.urls if is_sitemap else [start, *found.urls]

    def in_site(self, url: str) -> bool:
        normalized = normalize_url(url)
        return normalized is not None and site_key(normalized) == self.site

    def enqueue(self, urls: list[str], depth: int | None = None) -> None:
        """`depth`: clicks from the start page (None for sitemap addresses: their path depth counts)."""
        for url in urls:
            normalized = normalize_url(url)
            if not normalized or normalized in self.seen or len(normalized) > MAX_URL or looks_like_file(normalized):
                continue
            if site_key(normalized) == self.site:
                self.seen.add(normalized)
                self.frontier.push(normalized, depth=depth, priority=self.priorities.get(url))
                self.depth[normalized] = depth if depth is not None else 0

    # --- the loop --------------------------------------------------------------------------
    def execute(self) -> None:
        self.discover()
        self.drain()
        if not self.truncated:
            self.revisit_or_retire()
        self.lexicon.flush()
        self.counts["pages_total"] = self.counts["pages_done"]
        run_progress(run=self.run, counts=self.counts)
        if not self.counts["fetched"] and not self.counts["unchanged"] and self.unreachable:
            raise CrawlAborted(stored(SITE_DOWN, reason=self.unreachable[0]))

    def drain(self) -> None:
        pool = ThreadPoolExecutor(max_workers=max(1, settings.CRAWL_CONCURRENCY), thread_name_prefix="crawl")
        pending: dict[Future[Fetched], str] = {}
        try:
            while self.frontier or pending:
                self.submit_ready(pool, pending)
                if not pending:
                    break
                done, _rest = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    pending.pop(future)
                    self.handle(future.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def submit_ready(self, pool: ThreadPoolExecutor, pending: dict[Future[Fetched], str]) -> None:
        while self.frontier and len(pending) < max(1, settings.CRAWL_CONCURRENCY):
            if self.requests >= self.limit:
                self.truncated = True
                self.frontier.clear()
                return
            url, _depth = self.frontier.pop()
            if not self.robots.allows(url):
                self.record(url, pages.robots_denied(page=self.known.get(url), source=self.source, url=url))
                continue
            self.requests += 1
            headers = pages.conditional_headers(self.known.get(url), source=self.source) if self.conditional else {}
            pending[pool.submit(self.fetch, url, headers)] = url
        self.update_total(len(pending))

    def fetch(self, url: str, headers: dict[str, str]) -> Fetched:
        """Runs in a worker thread: network only, no ORM."""
        try:
            response = self.client.get(url, headers=headers, check_headers=pages.only_html, follow=self.in_site)
            return Fetched(url, response=response)
        except FetchError as exc:
            return Fetched(url, error=exc)

    def handle(self, fetched: Fetched) -> None:
        url, page = fetched.url, self.known.get(fetched.url)
        if fetched.error is not None:
            self.note_error(fetched.error)
            self.record(url, pages.fetch_failed(page=page, source=self.source, url=url, error=fetched.error))
            return
        response = fetched.response
        assert response is not None
        offsite = redirect_target(response)  # only redirects off the site are left unfollowed
        if offsite is not None:
            self.record(url, pages.redirected(page=page, source=self.source, url=url, target=offsite,
                                              same_site=False))
            return
        final = normalize_url(response.url) or url
        if final != url:
            self.record(url, pages.redirected(page=page, source=self.source, url=url, target=final,
                                              same_site=True))
            if final in self.visited:
                return
            url, page = final, self.known.get(final)
            self.seen.add(final)
        outcome = pages.page_store(page=page, source=self.source, url=url, response=response)
        if outcome.links is None:
            self.links_unknown()
        elif self.source.kind == Source.Kind.SITE:
            self.enqueue(outcome.links, depth=self.depth.get(fetched.url, 0) + 1)
        if outcome.counts.get("created") or outcome.counts.get("updated"):
            self.lexicon.changed()  # searchable by its words now, not at the end of the crawl
            if self.embed_behind:
                embedding_request(bot_id=self.run.bot_id)
        self.record(url, outcome)

    def links_unknown(self) -> None:
        """A page answered without a body (304, error): its links are unknown this time. Only a
        site source cares; a sitemap source goes by the sitemap alone."""
        if self.source.kind == Source.Kind.SITE:
            self.links_complete = False

    def note_error(self, error: FetchError) -> None:
        self.links_unknown()
        if isinstance(error, (Unreachable, FetchTimeout)):
            self.unreachable.append(error.text)

    def record(self, url: str, outcome: pages.PageOutcome) -> None:
        """Count one finished URL on the run, save the counters, report progress."""
        self.visited.add(url)
        if outcome.page is not None:
            self.known[url] = outcome.page
        counts = self.counts
        for name in ("created", "updated", "deactivated"):
            counts[f"entries_{name}"] += outcome.counts.get(name, 0)
        if outcome.kind:
            counts[outcome.kind] += 1
            counts["pages_done"] += 1
            if outcome.reason:
                self.reasons[(outcome.kind, pages.reason_key(outcome.reason))] += 1
        self.update_total(0)
        run_progress(run=self.run, counts=counts)
        if self.progress:
            self.progress(self.run)

    def update_total(self, in_flight: int) -> None:
        ahead = min(len(self.frontier), max(self.limit - self.requests, 0))
        self.counts["pages_total"] = max(self.counts["pages_total"], self.counts["pages_done"] + in_flight + ahead)

    # --- pages no longer reached -----------------------------------------------------------
    def revisit_or_retire(self) -> None:
        """Known pages this crawl did not reach. With every page's links known, not reaching one
        means nothing links to it any more: retire it. With some links unknown (a 304 answer has
        no body), fetch the leftovers instead, so at least the ones that are gone show a 404."""
        leftovers = [
            url for url, page in self.known.items()
            if page.source_id == self.source.pk and page.active and url not in self.visited
        ]
        if not leftovers:
            return
        if self.links_complete:
            for url in leftovers:
                self.counts["entries_deactivated"] += pages.page_retire(page=self.known[url])
            run_progress(run=self.run, counts=self.counts)
            return
        self.seen.update(leftovers)
        for url in leftovers:
            self.frontier.push(url)
        self.drain()


def _limit(run: CrawlRun, max_pages: int | None) -> int:
    return max(1, max_pages if max_pages is not None else (run.source.max_pages or settings.CRAWL_MAX_PAGES))


def _finish_failed(run: CrawlRun, message: Text) -> None:
    """Mark the run failed even when the error was the database connection itself: a broken
    connection is dropped (outside a transaction) so the next query reconnects."""
    if not connection.in_atomic_block and not connection.is_usable():
        connection.close()
    try:
        run_finish(run=run, status=CrawlRun.Status.FAILED, message=message)
    except DatabaseError:
        log.exception("could not mark crawl run %s failed", run.pk)


def _embed(run: CrawlRun, progress: Progress | None) -> None:
    """Embed in this process, after the crawl (the `crawl` command without a worker)."""
    from knowledge.embeddings import get_embedder

    model_key = get_embedder().key
    run_embedding(run=run)
    run_counts_refresh(run=run, model_key=model_key)
    if progress:
        progress(run)

    def on_batch(_done: int, _total: int) -> None:
        run_counts_refresh(run=run, model_key=model_key)
        if progress:
            progress(run)

    embed_pending(bot_id=run.bot_id, progress=on_batch)


def _hand_over(run: CrawlRun, summary: Text) -> None:
    """Fetching is over; vectors are still filling in on the embed queue: the run stays live
    ("векторизация") until the embedding pass that finds nothing left for its source ends it."""
    from knowledge.embeddings import get_embedder

    model_key = get_embedder().key
    if not source_pending(source_id=run.source_id, model_key=model_key):
        run_counts_refresh(run=run, model_key=model_key)
        run_finish(run=run, status=CrawlRun.Status.DONE, message=summary)
        return
    run_embedding(run=run, message=summary)
    run_counts_refresh(run=run, model_key=model_key)
    embedding_request(bot_id=run.bot_id)  # a pass that started before the last page may miss it


def crawl_source(
    *, run: CrawlRun, max_pages: int | None = None, progress: Progress | None = None,
    resolver: Resolver | None = None, embed: bool = True, embed_behind: bool = False, resumed: bool = False,
) -> CrawlRun:
    """Crawl run.source to the end. Entries are searchable by their words as each page is stored.
    Vectors: `embed_behind` has the embed queue compute them while the crawl goes on (the Celery
    path); `embed` computes them here after the crawl (the command); neither leaves them to the
    next embedding pass. A problem that stops the crawl marks the run failed with a message instead
    of raising; pages already stored stay stored. Ctrl+C marks the run failed, then propagates.
    `resumed`: the run's worker died mid-crawl (knowledge/runclaims.py); it is crawled again from
    the start, its page counts from zero (the pages stored before come back unchanged), its entry
    counts kept (they count writes that were made)."""
    if resumed:
        log.warning("crawl run %s: its worker died; crawling it again", run.pk)
    run_crawling(run=run, again=resumed)
    crawl: Crawl | None = None
    try:
        throttle = Throttle(settings.CRAWL_DELAY)
        with SafeClient(resolver=resolver, pace=throttle.wait) as client:
            crawl = Crawl(run, client, throttle, _limit(run, max_pages), progress, embed_behind=embed_behind,
                          conditional=not resumed)
            crawl.execute()
        summary = ([RESUMED] if resumed else []) + pages.summary_reasons(crawl.reasons)
        if embed_behind:
            _hand_over(run, summary)
            return run
        if embed:
            _embed(run, progress)
        run_finish(run=run, status=CrawlRun.Status.DONE, message=summary)
    except CrawlAborted as exc:
        run_finish(run=run, status=CrawlRun.Status.FAILED, message=exc.text)
    except Exception as exc:
        log.exception("crawl run %s failed", run.pk)
        _finish_failed(run, stored(gettext_noop("Обход прерван из-за ошибки: %(error)s"), error=str(exc)[:1000]))
    except BaseException:
        _finish_failed(run, stored(gettext_noop("Обход прерван.")))
        raise
    return run


@shared_task
def crawl_run(run_id: int) -> None:
    """Take the run's key (knowledge/runclaims.py: a redelivered or duplicate message returns while
    a live worker crawls it), then claim the queued run (queued -> running), or resume a running one
    whose worker died (redelivered by acks_late)."""
    token = run_take(run_id=run_id)
    if token is None:
        return
    with run_heartbeat(run_id=run_id, token=token):
        claimed = run_claim(run_id=run_id)
        resumed = not claimed and CrawlRun.objects.filter(pk=run_id, status=CrawlRun.Status.RUNNING).exists()
        if not claimed and not resumed:
            return
        run = CrawlRun.objects.select_related("source", "bot").get(pk=run_id)
        crawl_source(run=run, embed=False, embed_behind=True, resumed=resumed)


def crawl_start(*, source: Source) -> CrawlRun:
    """Queue a crawl: the task is sent only after the run row is committed, so the worker sees it."""
    run = run_start(source=source)
    transaction.on_commit(lambda: crawl_run.delay(run.pk))
    return run


def source_crawl(*, source: Source) -> CrawlRun:
    """Start crawling a site or sitemap source (the task is sent after commit). A source whose
    crawl is still going is refused: two crawls of one site would race on its pages."""
    if source.kind not in CRAWLABLE_KINDS:
        raise SourceInvalid(_("Обходятся только сайты и карты сайтов; документ загрузите заново."))
    with transaction.atomic():
        Source.objects.select_for_update().filter(pk=source.pk).first()
        live = CrawlRun.objects.filter(
            source=source, status__in=ACTIVE_STATUSES, started_at__gt=timezone.now() - timedelta(hours=6)
        ).values_list("pk", flat=True).first()
        if live is not None:
            raise SourceInvalid(
                _("Обход этого источника уже идёт (обход №%(id)s); дождитесь его окончания.") % {"id": live})
        return crawl_start(source=source)
