"""The crawler against a local site the test controls: robots.txt, sitemaps, re-crawls, limits,
failures, chunks. Embedding is off here (see conftest.run_crawl); management/commands/test_crawl.py and the
Celery test below cover it."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.texts import russian
from knowledge.chunking import MAX_CHARS, pack, page_drafts
from knowledge.extract import Block
from knowledge.models import CrawlRun, Entry, Page, Source
from knowledge.pages import UNLINKED
from tests.knowledge.sites import DELIVERY, INTRO, Resource, fill_shop, sitemap_index, urlset

pytestmark = pytest.mark.django_db

def active_entries(source: Source) -> list[Entry]:
    return list(Entry.objects.filter(source=source, active=True).order_by("pk"))


def page(source: Source, site, path: str) -> Page:
    return Page.objects.get(source=source, url=site.url(path))


def test_it_obeys_robots_txt_and_never_requests_a_disallowed_page(run_crawl, shop_site, site_source):
    fill_shop(shop_site)

    run = run_crawl()

    assert run.status == CrawlRun.Status.DONE, run.message
    assert shop_site.requests_to("/private/") == []
    private = page(site_source, shop_site, "/private/")
    assert (private.status, private.reason) == (Page.Status.SKIPPED, "запрещено robots.txt")
    assert (run.fetched, run.skipped) == (3, 1)
    assert "запрещено robots.txt — 1" in run.message
    assert shop_site.requests_to("/robots.txt")[0].headers["user-agent"].startswith("SpravkaBot")


def test_it_reads_a_sitemap_index_that_points_to_a_gzipped_sitemap(run_crawl, shop_site, bot):
    fill_shop(shop_site)
    shop_site.routes["/sitemap-index.xml"] = Resource(
        sitemap_index([shop_site.url("/sitemap-pages.xml.gz")]), content_type="application/xml"
    )
    shop_site.routes["/sitemap-pages.xml.gz"] = Resource(
        urlset([shop_site.url("/delivery/"), shop_site.url("/payment/"), "http://other.example/x/"], gz=True),
        content_type="application/gzip",
    )
    source = Source.objects.create(bot=bot, kind=Source.Kind.SITEMAP, url=shop_site.url("/sitemap-index.xml"))

    run = run_crawl(source)

    assert run.status == CrawlRun.Status.DONE, run.message
    assert sorted(Page.objects.filter(source=source).values_list("url", flat=True)) == [
        shop_site.url("/delivery/"), shop_site.url("/payment/"),
    ]
    assert shop_site.requests_to("/") == []  # a sitemap source crawls what the sitemap lists
    assert run.fetched == 2 and run.entries_created == len(active_entries(source)) > 0


def test_a_site_source_finds_pages_only_listed_in_the_sitemap_from_robots(run_crawl, shop_site, site_source):
    fill_shop(shop_site, robots=f"User-agent: *\nSitemap: {shop_site.url('/map.xml')}\n")
    shop_site.html("/hidden/", "Скрытая", "<h1>Скидки</h1><p>Скидка 10% на всё в дни рождения магазина.</p>"
                   "<p>Подробности у консультантов в пунктах выдачи.</p>")
    shop_site.routes["/map.xml"] = Resource(urlset([shop_site.url("/hidden/")]), content_type="text/xml")

    run = run_crawl()

    assert page(site_source, shop_site, "/hidden/").status == Page.Status.OK
    assert run.fetched == 5  # home, delivery, payment, private (allowed now), hidden


def test_an_unchanged_recrawl_asks_conditionally_gets_304_and_creates_nothing(run_crawl, shop_site, site_source):
    fill_shop(shop_site, etag=True)
    first = run_crawl()
    before = [(e.pk, e.updated_at) for e in active_entries(site_source)]
    etag = page(site_source, shop_site, "/delivery/").etag
    shop_site.forget_hits()

    second = run_crawl()

    assert first.entries_created == len(before) > 0
    assert (second.fetched, second.unchanged) == (0, 3)
    assert (second.entries_created, second.entries_updated, second.entries_deactivated) == (0, 0, 0)
    assert [(e.pk, e.updated_at) for e in active_entries(site_source)] == before
    assert shop_site.requests_to("/delivery/")[0].headers["if-none-match"] == etag
    assert page(site_source, shop_site, "/delivery/").http_status == 304


def test_if_modified_since_is_sent_back_and_honoured(run_crawl, shop_site, site_source):
    fill_shop(shop_site)
    stamp = "Wed, 21 Oct 2026 07:28:00 GMT"
    shop_site.routes["/delivery/"].last_modified = stamp
    run_crawl()
    shop_site.forget_hits()

    second = run_crawl()

    assert shop_site.requests_to("/delivery/")[0].headers["if-modified-since"] == stamp
    assert page(site_source, shop_site, "/delivery/").http_status == 304
    assert second.unchanged == 3 and second.entries_created == 0


def test_a_page_served_again_with_the_same_text_is_unchanged_by_its_hash(run_crawl, shop_site, site_source):
    fill_shop(shop_site)
    run_crawl()
    before = [(e.pk, e.updated_at) for e in active_entries(site_source)]
    # A new script token on every request: the bytes differ, the text the assistant keeps does not.
    shop_site.html("/delivery/", "Доставка", DELIVERY + "<script>var csrf='9f8e7d';</script>", links=["/"])

    second = run_crawl()

    assert "if-none-match" not in shop_site.requests_to("/delivery/")[-1].headers
    assert (second.fetched, second.unchanged, second.entries_updated) == (0, 3, 0)
    assert [(e.pk, e.updated_at) for e in active_entries(site_source)] == before


def test_a_changed_page_updates_its_entries_in_place(run_crawl, shop_site, site_source):
    fill_shop(shop_site, etag=True)
    run_crawl()
    moscow = Entry.objects.get(source=site_source, url=shop_site.url("/delivery/#moscow"))
    russia = Entry.objects.get(source=site_source, url=shop_site.url("/delivery/#cdek"))
    changed = DELIVERY.replace("350 ₽", "390 ₽").split("<h2>По России</h2>")[0]
    shop_site.html("/delivery/", "Доставка", changed, links=["/"], etag=True)

    second = run_crawl()

    moscow.refresh_from_db()
    russia.refresh_from_db()
    assert "390 ₽" in moscow.text and moscow.active  # same row, new text
    assert moscow.embedding is None  # stale vector dropped, the next pass re-embeds
    assert not russia.active  # the section is gone: switched off, kept in history
    assert (second.fetched, second.unchanged) == (1, 2)
    assert (second.entries_created, second.entries_updated, second.entries_deactivated) == (0, 1, 1)
    assert Entry.objects.filter(source=site_source, key=moscow.key).count() == 1


def test_a_page_that_answers_404_is_deactivated_with_its_entries_not_deleted(run_crawl, shop_site, site_source):
    fill_shop(shop_site, etag=True)
    run_crawl()
    entries = Entry.objects.filter(page__url=shop_site.url("/payment/"))
    count = entries.count()
    del shop_site.routes["/payment/"]  # still linked from the home page, now 404

    second = run_crawl()

    payment = page(site_source, shop_site, "/payment/")
    assert (payment.status, payment.active, payment.http_status) == (Page.Status.GONE, False, 404)
    assert payment.reason == "HTTP 404 — страницы больше нет"
    assert entries.count() == count > 0 and not entries.filter(active=True).exists()
    assert second.entries_deactivated == count
    assert "HTTP 404 — страницы больше нет — 1" in second.message


def test_a_page_no_longer_linked_nor_in_the_sitemap_is_retired_without_a_request(run_crawl, shop_site, site_source):
    fill_shop(shop_site)  # no validators: every page comes back with a body, so every link is known
    run_crawl()
    shop_site.html("/", "Магазин", f"<h1>Магазин</h1>{INTRO}", links=["/delivery/"])
    shop_site.forget_hits()

    second = run_crawl()

    payment = page(site_source, shop_site, "/payment/")
    assert (payment.status, payment.active, payment.reason_stored) == (Page.Status.GONE, False, UNLINKED)
    assert payment.reason == russian(UNLINKED)
    assert shop_site.requests_to("/payment/") == []
    assert not Entry.objects.filter(page=payment, active=True).exists()
    assert second.entries_deactivated > 0


def test_a_page_gone_from_the_sitemap_is_rechecked_when_other_pages_answer_304(run_crawl, shop_site, site_source):
    """With 304 answers the crawler cannot know every link, so it re-asks for the leftovers."""
    fill_shop(shop_site, etag=True, robots=f"User-agent: *\nSitemap: {shop_site.url('/map.xml')}\n")
    shop_site.html("/promo/", "Акция", "<h1>Акция</h1><p>Скидка 15% на светильники до конца месяца.</p>"
                   "<p>Промокод СВЕТ15 действует на сайте и в пунктах выдачи.</p>", etag=True)
    shop_site.routes["/map.xml"] = Resource(urlset([shop_site.url("/promo/")]), content_type="text/xml")
    run_crawl()
    shop_site.routes["/map.xml"] = Resource(urlset([]), content_type="text/xml")
    del shop_site.routes["/promo/"]

    second = run_crawl()

    promo = page(site_source, shop_site, "/promo/")
    assert (promo.status, promo.active, promo.http_status) == (Page.Status.GONE, False, 404)
    assert not Entry.objects.filter(page=promo, active=True).exists()
    assert second.unchanged == 4


def test_oversize_binary_broken_and_slow_pages_are_recorded_with_reasons(run_crawl, shop_site, site_source,
                                                                         settings):
    settings.CRAWL_MAX_PAGE_BYTES = 4096
    settings.CRAWL_TIMEOUT = 0.5
    links = ["/big/", "/streamed/", "/logo.php", "/broken/", "/slow/", "/error/"]
    shop_site.html("/", "Магазин", f"<h1>Магазин</h1>{INTRO}", links=links)
    shop_site.html("/big/", "Большая", "<p>" + "очень длинный текст " * 400 + "</p>")
    shop_site.routes["/streamed/"] = Resource(b"<html><body>" + b"x" * 20000, chunked_size=1024)
    shop_site.routes["/logo.php"] = Resource(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, content_type="image/png")
    shop_site.routes["/broken/"] = Resource(b"<html><body><div><p>\x00\xff\xfe<<<table><td>Unclosed</p></span>"
                                            b"<h2>Broken<p>text &#xffffffff; &bogus; <")
    shop_site.html("/slow/", "Медленная", "<p>Эта страница отвечает слишком долго.</p>", delay=2.0)
    shop_site.routes["/error/"] = Resource(b"oops", status=500)

    run = run_crawl()

    reasons = {url.removeprefix(shop_site.origin): reason for url, reason in
               Page.objects.filter(source=site_source).values_list("url", "reason")}
    assert reasons["/big/"] == "страница больше 4 КБ"
    assert reasons["/streamed/"] == "страница больше 4 КБ"  # no Content-Length: stopped while reading
    assert reasons["/logo.php"] == "не HTML (image/png)"
    assert reasons["/slow/"] == "таймаут 0,5 с"
    assert reasons["/error/"] == "HTTP 500"
    assert page(site_source, shop_site, "/broken/").status in {Page.Status.OK, Page.Status.SKIPPED}
    assert run.status == CrawlRun.Status.DONE, run.message
    assert (run.fetched + run.skipped + run.failed + run.unchanged) == run.pages_done == 7
    assert "страница больше 4 КБ — 2" in run.message


def test_redirects_are_followed_within_a_limit(run_crawl, shop_site, site_source, settings):
    settings.CRAWL_MAX_REDIRECTS = 2
    shop_site.html("/", "Магазин", f"<h1>Магазин</h1>{INTRO}", links=["/old-delivery", "/loop/1"])
    shop_site.routes["/old-delivery"] = Resource(status=301, headers={"Location": "/delivery/"})
    shop_site.html("/delivery/", "Доставка", DELIVERY)
    for n in range(1, 6):
        shop_site.routes[f"/loop/{n}"] = Resource(status=302, headers={"Location": f"/loop/{n + 1}"})

    run_crawl()

    assert page(site_source, shop_site, "/delivery/").status == Page.Status.OK
    assert not Page.objects.filter(url=shop_site.url("/old-delivery")).exists()  # no content of its own
    assert page(site_source, shop_site, "/loop/1").reason == "слишком много переадресаций (больше 2)"
    assert shop_site.requests_to("/loop/4") == []


def test_a_crawl_that_fails_halfway_keeps_the_pages_it_finished(run_crawl, shop_site, site_source, settings):
    settings.CRAWL_CONCURRENCY = 1
    fill_shop(shop_site)
    seen: list[int] = []

    def progress(run: CrawlRun) -> None:
        seen.append(run.pages_done)
        if run.pages_done == 3:
            raise RuntimeError("диск переполнен")

    run = run_crawl(progress=progress)

    run.refresh_from_db()
    assert run.status == CrawlRun.Status.FAILED
    assert "диск переполнен" in run.message and run.finished_at is not None
    stored = Page.objects.filter(source=site_source, status=Page.Status.OK)
    assert stored.count() >= 2
    assert all(Entry.objects.filter(page=p, active=True).exists() for p in stored)
    assert run.entries_created == Entry.objects.filter(source=site_source).count()


def test_max_pages_stops_the_crawl_and_retires_nothing(run_crawl, shop_site, site_source):
    fill_shop(shop_site)
    run_crawl()

    second = run_crawl(max_pages=1)

    assert second.fetched + second.unchanged == 1
    assert Page.objects.filter(source=site_source, status=Page.Status.OK, active=True).count() == 3


def test_a_redirect_to_another_site_is_skipped(run_crawl, shop_site, site_source):
    shop_site.html("/", "Магазин", f"<h1>Магазин</h1>{INTRO}", links=["/out"])
    shop_site.routes["/out"] = Resource(status=302, headers={"Location": "http://127.0.0.9:1/elsewhere/"})

    run_crawl()

    assert page(site_source, shop_site, "/out").reason == "переадресация на другой сайт (127.0.0.9:1)"


def test_chunks_keep_the_heading_path_and_link_to_the_nearest_anchor(run_crawl, shop_site, site_source):
    fill_shop(shop_site)

    run_crawl()

    chunks = {e.heading_path: e for e in Entry.objects.filter(page__url=shop_site.url("/delivery/"))}
    assert set(chunks) == {"Доставка", "Доставка / По Москве", "Доставка / По России / СДЭК"}
    assert chunks["Доставка / По Москве"].url == shop_site.url("/delivery/#moscow")
    assert chunks["Доставка / По России / СДЭК"].url == shop_site.url("/delivery/#cdek")
    assert chunks["Доставка"].url == shop_site.url("/delivery/")  # the h1 has no id
    assert chunks["Доставка / По Москве"].title == "Доставка"
    assert "350 ₽" in chunks["Доставка / По Москве"].text


def test_long_sections_are_cut_between_words_into_balanced_chunks():
    words = ["доставка", "курьером", "по", "Москве", "бесплатно", "от", "пяти", "тысяч"]
    paragraph = " ".join(words[i % len(words)] for i in range(600))  # ~4 300 characters, no sentence ends
    vocabulary = set(words)

    chunks = pack([paragraph, "Короткий абзац в конце."])

    assert all(len(chunk) <= MAX_CHARS for chunk in chunks)
    assert all(set(chunk.replace("\n\n", " ").split(" ")) <= vocabulary | {"Короткий", "абзац", "в", "конце."}
               for chunk in chunks)
    assert min(len(chunk) for chunk in chunks) >= 500


def test_chunk_keys_are_stable_and_unique_when_a_heading_repeats():
    blocks = [Block("Условия", 2), Block("Первое условие."), Block("Условия", 2), Block("Второе условие.")]

    first = page_drafts(url="https://shop.example/terms/", title="Условия", blocks=blocks)
    again = page_drafts(url="https://shop.example/terms/", title="Условия", blocks=blocks)

    assert [d.key for d in first] == [d.key for d in again]
    assert len({d.key for d in first}) == 2


def test_a_bad_start_address_fails_the_run_with_a_message(run_crawl, bot):
    source = Source.objects.create(bot=bot, kind=Source.Kind.SITE, url="ftp://shop.example/")

    run = run_crawl(source)

    assert run.status == CrawlRun.Status.FAILED
    assert "Неправильный адрес сайта" in run.message


@pytest.mark.django_db(transaction=True)
def test_a_crawl_runs_through_the_celery_worker_and_embeds_its_entries(celery_worker_thread, shop_site, bot):
    from django.db import transaction

    from knowledge.crawler import crawl_start

    fill_shop(shop_site)
    source = Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=shop_site.url("/"))
    with transaction.atomic():
        run = crawl_start(source=source)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in (CrawlRun.Status.DONE, CrawlRun.Status.FAILED):
            break
        time.sleep(0.2)

    assert run.status == CrawlRun.Status.DONE, run.message
    assert run.embeddings_done == run.embeddings_total == run.entries_created > 0
    assert run.pages_embedded == run.pages_indexed == run.fetched == 3  # the vectors came on the embed queue
    assert not Entry.objects.filter(source=source, active=True, embedding__isnull=True).exists()
    source.refresh_from_db()
    assert source.last_crawled_at is not None and source.last_crawled_at <= timezone.now()


def test_the_crawl_task_claims_a_queued_run_once_and_ignores_missing_rows(shop_site, site_source):
    from knowledge.crawler import crawl_run
    from knowledge.runclaims import run_release, run_take

    fill_shop(shop_site)
    run = CrawlRun.objects.create(bot=site_source.bot, source=site_source, status=CrawlRun.Status.RUNNING)
    token = run_take(run_id=run.pk)  # another worker holds it, its heartbeat alive
    assert token is not None
    try:
        crawl_run(run.pk)
        crawl_run(10**9)  # deleted meanwhile
    finally:
        run_release(run_id=run.pk, token=token)

    run.refresh_from_db()
    assert run.status == CrawlRun.Status.RUNNING and shop_site.hits == []


def test_a_running_run_whose_worker_died_is_crawled_again_with_its_page_counts_from_zero(shop_site, site_source):
    """Redelivered after its worker died (no heartbeat): crawled again; the two pages it had
    counted are not counted twice."""
    from knowledge.crawler import RESUMED, crawl_run

    fill_shop(shop_site)
    run = CrawlRun.objects.create(bot=site_source.bot, source=site_source, status=CrawlRun.Status.RUNNING,
                                  pages_done=2, fetched=2, pages_total=3, entries_created=4)

    crawl_run(run.pk)

    run.refresh_from_db()
    assert run.status in (CrawlRun.Status.EMBEDDING, CrawlRun.Status.DONE)
    assert run.message.startswith(russian(RESUMED)) and (run.message_stored or [None])[0] == RESUMED
    assert (run.fetched, run.pages_done) == (3, 4)  # three pages and the robots-denied one, once each
    assert run.entries_created > 4


def test_recrawl_queues_only_sources_that_are_due_and_idle(bot, django_capture_on_commit_callbacks):
    from knowledge.tasks import recrawl_due_sources

    now = timezone.now()

    def source(name: str, **fields: object) -> Source:
        return Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=f"https://{name}.example/", **fields)

    due = source("due", recrawl_hours=24, last_crawled_at=now - timedelta(hours=25))
    never = source("never", recrawl_hours=1)
    source("fresh", recrawl_hours=24, last_crawled_at=now - timedelta(hours=2))
    source("manual", last_crawled_at=now - timedelta(days=30))
    busy = source("busy", recrawl_hours=1, last_crawled_at=now - timedelta(hours=3))
    CrawlRun.objects.create(bot=bot, source=busy, status=CrawlRun.Status.RUNNING)
    Source.objects.create(bot=bot, kind=Source.Kind.DOCUMENT, title="Прайс", recrawl_hours=1)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        queued = recrawl_due_sources()

    assert queued == 2 and len(callbacks) == 2
    assert set(CrawlRun.objects.filter(status=CrawlRun.Status.QUEUED).values_list("source", flat=True)) == {
        due.pk, never.pk,
    }


def test_it_never_sends_more_requests_at_once_than_allowed(run_crawl, shop_site, settings):
    settings.CRAWL_CONCURRENCY = 2
    links = [f"/p{n}/" for n in range(8)]
    shop_site.html("/", "Магазин", f"<h1>Магазин</h1>{INTRO}", links=links)
    for path in links:
        shop_site.html(path, "Раздел", f"<h1>Раздел {path}</h1>{INTRO}", delay=0.2)

    run = run_crawl()

    assert run.fetched == 9
    assert shop_site.most_at_once <= 2


def test_robots_crawl_delay_is_read_for_our_bot_and_capped():
    from protego import Protego

    from knowledge.discovery import MAX_CRAWL_DELAY, Robots

    ours = Robots(parser=Protego.parse("User-agent: SpravkaBot\nCrawl-delay: 7\n\nUser-agent: *\nCrawl-delay: 1\n"))
    greedy = Robots(parser=Protego.parse("User-agent: *\nCrawl-delay: 3600\n"))

    assert ours.crawl_delay() == 7.0
    assert greedy.crawl_delay() == MAX_CRAWL_DELAY
