"""`manage.py crawl`: the summary a shop owner reads, and a clear message for each bad start."""

from __future__ import annotations

import io
import re
import socket

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledge.models import CrawlRun, Entry, Source
from tests.knowledge.sites import Resource, fill_shop, urlset

pytestmark = pytest.mark.django_db


def crawl(*args: str) -> str:
    out = io.StringIO()
    call_command("crawl", *args, stdout=out)
    return out.getvalue()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_it_prints_a_summary_and_a_second_run_finds_everything_unchanged(bot, shop_site):
    fill_shop(shop_site, etag=True)

    first = crawl("demo", "--url", shop_site.url("/"))
    created = Entry.objects.filter(bot=bot, active=True).count()
    second = crawl("demo", "--url", shop_site.url("/"))

    assert f"Обход {shop_site.url('/')} — готово" in first
    assert "Страницы: загружено 3, без изменений 0, пропущено 1, с ошибкой 0" in first
    assert "    запрещено robots.txt — 1" in first
    assert f"Записи: создано {created}, обновлено 0, отключено 0" in first
    assert f"Векторы: {created} из {created}" in first
    # 304 answers carry no links, so the robots-forbidden page is not even looked at this time.
    assert "Страницы: загружено 0, без изменений 3, пропущено 0, с ошибкой 0" in second
    assert "Записи: создано 0, обновлено 0, отключено 0" in second
    assert Source.objects.filter(bot=bot).count() == 1  # the same source, not a twin


def test_without_url_it_crawls_the_bot_site_without_embedding_when_asked(bot, shop_site):
    fill_shop(shop_site)
    bot.site_url = shop_site.url("/")
    bot.save(update_fields=["site_url"])

    output = crawl("demo", "--max-pages", "2", "--no-embed")

    assert "Страницы: загружено 2" in output and "Векторы" not in output
    assert Source.objects.get(bot=bot).url == shop_site.url("/")
    assert not Entry.objects.filter(bot=bot, embedding__isnull=False).exists()


def test_an_unknown_bot_is_named_with_a_way_out():
    expected = "Бот «nobody» не найден. Создайте его: python manage.py createbot"
    with pytest.raises(CommandError, match=re.escape(expected)):
        crawl("nobody")


def test_a_bad_address_is_refused_before_anything_is_saved(bot):
    with pytest.raises(CommandError, match=re.escape("Неправильный адрес сайта: «ftp://shop.example/»")):
        crawl("demo", "--url", "ftp://shop.example/")

    assert not Source.objects.exists()


def test_an_unreachable_site_fails_clearly_and_keeps_what_was_saved(bot, shop_site):
    fill_shop(shop_site)
    crawl("demo", "--url", shop_site.url("/"), "--no-embed")
    kept = Entry.objects.filter(bot=bot, active=True).count()
    source = Source.objects.get(bot=bot)
    source.url = f"http://127.0.0.1:{closed_port()}/"
    source.save(update_fields=["url"])

    with pytest.raises(CommandError, match=re.escape("Сайт недоступен: не удалось подключиться к 127.0.0.1")):
        crawl("demo", "--no-embed")

    assert Entry.objects.filter(bot=bot, active=True).count() == kept > 0
    assert CrawlRun.objects.filter(source=source).latest("started_at").status == CrawlRun.Status.FAILED


def test_robots_txt_that_forbids_everything_stops_the_crawl(bot, shop_site):
    fill_shop(shop_site, robots="User-agent: *\nDisallow: /\n")

    with pytest.raises(CommandError, match=re.escape("robots.txt запрещает обход всего сайта")):
        crawl("demo", "--url", shop_site.url("/"))

    assert [hit.path for hit in shop_site.hits] == ["/robots.txt"]


def test_an_empty_sitemap_is_reported(bot, shop_site):
    shop_site.routes["/sitemap.xml"] = Resource(urlset([]), content_type="application/xml")
    Source.objects.create(bot=bot, kind=Source.Kind.SITEMAP, url=shop_site.url("/sitemap.xml"))

    with pytest.raises(CommandError, match="В sitemap нет страниц для обхода"):
        crawl("demo")


def test_a_bot_without_a_site_address_asks_for_one(bot):
    bot.site_url = ""
    bot.save(update_fields=["site_url"])

    with pytest.raises(CommandError, match="не указан адрес сайта"):
        crawl("demo")


def test_max_pages_must_be_positive(bot):
    with pytest.raises(CommandError):
        crawl("demo", "--max-pages", "0")
