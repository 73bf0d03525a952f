"""The crawl fetches the pages visitors ask about first: topic, then sitemap priority, then depth."""

from __future__ import annotations

import pytest

from knowledge.frontier import Frontier, topic_tier
from knowledge.models import CrawlRun
from tests.knowledge.sites import Resource


def test_addresses_about_delivery_payment_returns_contacts_and_faq_come_first():
    for url in ["https://shop.ru/dostavka/", "https://shop.ru/info/oplata-i-dostavka", "https://shop.ru/faq",
                "https://shop.ru/%D0%B2%D0%BE%D0%B7%D0%B2%D1%80%D0%B0%D1%82/", "https://shop.ru/contacts/",
                "https://shop.ru/help/returns.html", "https://shop.ru/intro/billing/instructions/refund/"]:
        assert topic_tier(url) == 0, url
    for url in ["https://shop.ru/", "https://shop.ru/catalog/sofa-42", "https://shop.ru/blog/paytonm-story",
                "https://shop.ru/news/2024/"]:
        assert topic_tier(url) == 1, url


def test_the_frontier_orders_by_topic_priority_then_depth_then_discovery():
    frontier = Frontier()
    frontier.push("https://shop.ru/blog/old/", priority=0.1)
    frontier.push("https://shop.ru/catalog/", priority=0.9)
    frontier.push("https://shop.ru/")
    frontier.push("https://shop.ru/a/b/c/")
    frontier.push("https://shop.ru/x/", depth=3)
    frontier.push("https://shop.ru/faq/", depth=5)
    order = [frontier.pop()[0] for _ in range(len(frontier))]
    assert order == ["https://shop.ru/faq/", "https://shop.ru/catalog/", "https://shop.ru/", "https://shop.ru/x/",
                     "https://shop.ru/a/b/c/", "https://shop.ru/blog/old/"]
    assert not frontier


@pytest.mark.django_db
def test_a_crawl_fetches_payment_and_contacts_before_the_rest(shop_site, run_crawl, settings):
    settings.CRAWL_CONCURRENCY = 1  # one request at a time: the order is the frontier's
    items = "".join(
        f"<url><loc>{shop_site.url(path)}</loc>{f'<priority>{p}</priority>' if p else ''}</url>"
        for path, p in [("/blog/old/", "0.1"), ("/catalog/", "0.9"), ("/oplata/", "")]
    )
    shop_site.routes["/sitemap.xml"] = Resource(
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'.encode(),
        content_type="application/xml")
    text = "<h1>{0}</h1><p>Страница «{0}»: достаточно текста, чтобы она стала записью базы знаний магазина.</p>"
    shop_site.html("/", "Магазин", text.format("Магазин"), links=["/blog/new/", "/kontakty/", "/team/deep/x/"])
    for path in ["/blog/old/", "/catalog/", "/oplata/", "/blog/new/", "/kontakty/", "/team/deep/x/"]:
        shop_site.html(path, path, text.format(path))
    run = run_crawl()
    assert run.status == CrawlRun.Status.DONE, run.message
    pages = [hit.path for hit in shop_site.hits if hit.path not in ("/robots.txt", "/sitemap.xml")]
    assert pages == ["/oplata/", "/catalog/", "/", "/kontakty/", "/blog/new/", "/team/deep/x/", "/blog/old/"]
